import pytest


@pytest.fixture(scope="module", autouse=True)
def generated_games_in_a_temporary_cache(tmp_path_factory):
    """Every ALFWorld test module plays generated games from a cache of its own (so a machine that has
    ALFWorld's original data, or an old cache, does not change what the tests see)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENTENV_ALFWORLD_CACHE", str(tmp_path_factory.mktemp("alfworld-cache")))
        patch.setenv("AGENTENV_ALFWORLD_GAMES", "generated")
        yield


@pytest.fixture(scope="module")
def env():
    """One AlfWorldEnv (one TextWorld engine) shared by a test module."""
    from agentenv_alfworld import AlfWorldEnv

    env = AlfWorldEnv()
    yield env
    env.close()


def alfworld_04_game(game: dict, description: str) -> dict:
    """A generated game (alfworld 0.3.3's grammar and domain, as AgentGym's) as the installed alfworld 0.4
    writes one: ``move X to Y``, "You arrive at cabinet 1.", and a ``help`` command."""
    from importlib import resources

    data = resources.files("alfworld") / "data"
    grammar = (data / "alfred.twl2").read_text().replace("UNKNOWN GOAL", description)
    return {**game, "grammar": grammar, "pddl_domain": (data / "alfred.pddl").read_text()}


@pytest.fixture
def as_alfworld_04():
    """:func:`alfworld_04_game`, for tests (test modules do not import conftest by name)."""
    return alfworld_04_game


@pytest.fixture
def original_sample(tmp_path):
    """Writes generated tasks as a sample of ALFWorld's original data: ``json_2.1.1/<folder>/<task>/<trial>/``
    with 0.3's grammar, and AgentGym's mapping files beside it (``{item_id: (folder, task index)}``)."""
    import json

    from agentenv_alfworld import pddl, tasks

    def write(items: dict[int, tuple[str, int]], mappings: bool = True):
        root = tmp_path / "alfworld_data"
        entries = {"mappings_train.json": [], "mappings_test.json": []}
        for item_id, (folder, index) in items.items():
            t = tasks.task(index)
            trial = f"trial_T2019_{index:06d}"
            pddl.write_game(t, root / "json_2.1.1" / folder / t.name / trial)  # 0.3.3's grammar, as the data's
            which = "mappings_test.json" if folder == "valid_train" else "mappings_train.json"
            entries[which].append({"item_id": item_id, "task_type": t.name, "task_id": trial})
        if mappings:
            for name, entry in entries.items():
                (root / name).write_text(json.dumps(entry, indent=4))
        return root

    return write
