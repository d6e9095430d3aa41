"""The BabyAI server: ``uvicorn agentenv_babyai.server:app`` (or ``agentenv serve babyai``)."""

from agentenv.server import create_app

from .env import BabyAIEnv

app = create_app([BabyAIEnv])
