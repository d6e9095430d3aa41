"""AgentGym core: environment interface, server kit, clients, controller, data and trainers."""

from agentenv.env import Environment, EpisodicEnv, ExpertAction, StepResult, TaskRange, Wire

__version__ = "0.1.0"
__all__ = ["Environment", "EpisodicEnv", "ExpertAction", "StepResult", "TaskRange", "Wire", "__version__"]
