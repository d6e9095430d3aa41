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


def alfworld_03_grammar(grammar: str) -> str:
    """A generated game's grammar (alfworld 0.4's) as alfworld 0.3's reads, the grammar inside the original
    json_2.1.1 game files: ``put X in/on Y``, and "You arrive at loc N." on arrival."""
    replacements = {
        'template :: "move {o} to {r}";': 'template :: "put {o} in/on {r}";',
        '"You move the {o.name} to the {r.name}."': '"You put the {o.name} in/on the {r.name}."',
        '"You arrive at {r.name}. #examineReceptacle.feedback#"': '"You arrive at {lend.name}. #examineReceptacle.feedback#"',
    }
    for old, new in replacements.items():
        assert old in grammar, old
        grammar = grammar.replace(old, new)
    return grammar


@pytest.fixture
def as_alfworld_03():
    """:func:`alfworld_03_grammar`, for tests (test modules do not import conftest by name)."""
    return alfworld_03_grammar


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
            game_file = pddl.write_game(t, root / "json_2.1.1" / folder / t.name / trial)
            game = json.loads(game_file.read_text())
            game["grammar"] = alfworld_03_grammar(game["grammar"])
            game_file.write_text(json.dumps(game))
            which = "mappings_test.json" if folder == "valid_train" else "mappings_train.json"
            entries[which].append({"item_id": item_id, "task_type": t.name, "task_id": trial})
        if mappings:
            for name, entry in entries.items():
                (root / name).write_text(json.dumps(entry, indent=4))
        return root

    return write
