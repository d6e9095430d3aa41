"""WebShop for AgentGym: find and buy what an instruction asks for on a simulated shopping site, over a
generated catalog (or WebShop's own data when present)."""

from .catalog import Catalog, Product, generate_catalog
from .env import WebShopEnv
from .goals import Goal, generate_goals
from .reward import Reward, reward
from .shop import Shop, ShopConfig

__all__ = [
    "Catalog",
    "Goal",
    "Product",
    "Reward",
    "Shop",
    "ShopConfig",
    "WebShopEnv",
    "generate_catalog",
    "generate_goals",
    "reward",
]
