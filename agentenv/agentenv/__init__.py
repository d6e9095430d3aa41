"""AgentGym core: environment interface, server kit, typed clients, controller, data and trainers."""

from agentenv.env import Environment, ExpertAction, StepResult

__version__ = "0.1.0"
__all__ = ["Environment", "ExpertAction", "StepResult", "__version__"]
