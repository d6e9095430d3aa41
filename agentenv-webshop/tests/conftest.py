import pytest
from agentenv_webshop import Shop


@pytest.fixture(scope="session")
def webshop_small_shop() -> Shop:
    """A generated shop of 600 products (its index built in memory), shared by the tests of this folder."""
    return Shop.generated(products=600, seed=3, cache_dir=None)
