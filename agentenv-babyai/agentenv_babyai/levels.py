"""The 40 BabyAI levels AgentGym serves, in AgentGym's order (easy to hard).

Task ``idx`` plays level ``LEVELS[idx % 40]`` with seed ``idx // 40`` (AgentGym's mapping), for any ``idx``
below :data:`MAX_TASKS`.  The list is AgentGym's ``all_levels`` table (its keys 1..40); the one change is
``BabyAI-GoToObjS6-v1``: minigrid 3 registers the GoToObjS6 level only as ``-v1`` (room size 6).
AgentGym's ``-v0`` (minigrid 2.3) was, by a registry bug, GoToObj in a room of size 4, so none of its
GoToObjS6 tasks is played here; ``babyai_agentgym`` (:mod:`.agentgym`) plays them.
"""

from __future__ import annotations

LEVELS: tuple[str, ...] = (
    "BabyAI-GoToRedBallGrey-v0",
    "BabyAI-GoToRedBall-v0",
    "BabyAI-GoToRedBallNoDists-v0",
    "BabyAI-GoToObjS6-v1",
    "BabyAI-GoToLocalS8N7-v0",
    "BabyAI-GoToObjMazeS7-v0",
    "BabyAI-GoToImpUnlock-v0",
    "BabyAI-GoToSeqS5R2-v0",
    "BabyAI-GoToRedBlueBall-v0",
    "BabyAI-GoToDoor-v0",
    "BabyAI-GoToObjDoor-v0",
    "BabyAI-Open-v0",
    "BabyAI-OpenRedDoor-v0",
    "BabyAI-OpenDoorLoc-v0",
    "BabyAI-OpenRedBlueDoorsDebug-v0",
    "BabyAI-OpenDoorsOrderN4Debug-v0",
    "BabyAI-Pickup-v0",
    "BabyAI-UnblockPickup-v0",
    "BabyAI-PickupLoc-v0",
    "BabyAI-PickupDistDebug-v0",
    "BabyAI-PickupAbove-v0",
    "BabyAI-PutNextLocalS6N4-v0",
    "BabyAI-PutNextS7N4Carrying-v0",
    "BabyAI-Unlock-v0",
    "BabyAI-UnlockLocalDist-v0",
    "BabyAI-KeyInBox-v0",
    "BabyAI-UnlockPickupDist-v0",
    "BabyAI-BlockedUnlockPickup-v0",
    "BabyAI-UnlockToUnlock-v0",
    "BabyAI-ActionObjDoor-v0",
    "BabyAI-FindObjS7-v0",
    "BabyAI-KeyCorridorS6R3-v0",
    "BabyAI-OneRoomS20-v0",
    "BabyAI-MoveTwoAcrossS8N9-v0",
    "BabyAI-SynthS5R2-v0",
    "BabyAI-SynthLoc-v0",
    "BabyAI-SynthSeq-v0",
    "BabyAI-MiniBossLevel-v0",
    "BabyAI-BossLevel-v0",
    "BabyAI-BossLevelNoUnlock-v0",
)
NUM_LEVELS = len(LEVELS)
#: seeds per level a task index may name.  AgentGym takes any seed; here 25,000 (the splits use seeds
#: 0..509, AgentGym's published items up to 321), so that an index far past any use is refused, not played
MAX_SEED = 25_000
#: task indices ``0 .. MAX_TASKS - 1`` play
MAX_TASKS = MAX_SEED * NUM_LEVELS


def level_of(data_idx: int) -> tuple[str, int]:
    """``(level id, seed)`` of task ``data_idx`` (AgentGym's mapping)."""
    if data_idx < 0:
        raise ValueError(f"data_idx must be >= 0, got {data_idx}")
    return LEVELS[data_idx % NUM_LEVELS], data_idx // NUM_LEVELS


def short_name(level_id: str) -> str:
    """``BabyAI-GoToRedBall-v0`` -> ``GoToRedBall`` (the task type in result tables)."""
    return level_id.removeprefix("BabyAI-").rsplit("-v", 1)[0]
