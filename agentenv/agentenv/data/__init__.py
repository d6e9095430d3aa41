"""Trajectories in the AgentTraj format, their JSONL files, and training datasets."""

from agentenv.data.trajectory import Trajectory, Turn, append_trajectory, finished_item_ids, read_trajectories

__all__ = ["Trajectory", "Turn", "read_trajectories", "append_trajectory", "finished_item_ids"]
