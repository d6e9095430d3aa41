"""The bundled tasks (WebArena's config format, every evaluator kind, an expert for each) and WebArena's own
config files, loaded with their placeholders mapped to the bundled sites."""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from agentenv_webarena import WebArenaEnv
from agentenv_webarena.configs import ConfigError, check_config, read_configs, urls_from_environment
from agentenv_webarena.taskgen import TASKS_FILE, bundled_tasks
from webarena_helpers import element, task_index

from agentenv.env import TaskRange
from agentenv.protocol import BadRequest
from agentenv.react import format_react
from agentenv.session import LocalSession

WEBARENA_FIELDS = {"sites", "task_id", "require_login", "storage_state", "start_url", "geolocation", "intent_template",
                   "instantiation_dict", "intent", "require_reset", "eval", "intent_template_id"}


def test_the_task_file_is_what_the_generator_writes():
    assert json.loads(TASKS_FILE.read_text(encoding="utf-8")) == bundled_tasks()


def test_sixty_tasks_and_more_over_every_site_and_evaluator():
    tasks = WebArenaEnv.tasks.bundled
    assert len(tasks) >= 60
    assert all(WEBARENA_FIELDS <= set(t) and t["expert"] for t in tasks)
    assert [t["task_id"] for t in tasks] == list(range(len(tasks)))
    kinds = Counter(t["eval"]["eval_types"][0] for t in tasks)
    assert min(kinds["string_match"], kinds["url_match"], kinds["program_html"]) >= 10, kinds
    references = Counter(k for t in tasks for k in (t["eval"]["reference_answers"] or {}))
    assert references["must_include"] and references["exact_match"] and references["fuzzy_match"]
    sites = Counter(s for t in tasks for s in t["sites"])
    assert set(sites) == {"shopping", "shopping_admin", "reddit", "wikipedia"} and min(sites.values()) >= 10
    assert any(len(t["sites"]) == 2 for t in tasks)
    assert WebArenaEnv.splits == {"train": range(0, 48), "test": range(48, len(tasks))}


def play_expert(env_cls, index: int) -> tuple[float, int]:
    with LocalSession(env_cls) as session:
        session.reset(index)
        for _ in range(env_cls.max_rounds):
            move = session.expert()
            answer = session.step(format_react(move.thought, move.action))
            if answer.done:
                break
        return answer.score, session.env.steps


def test_a_tasks_type_is_known_before_it_is_played(session):
    """/task_types answered null for every WebArena task, so `eval --sample` could not stratify by type."""
    types = [WebArenaEnv.task_type_of(i) for i in range(len(WebArenaEnv.tasks.bundled))]
    assert None not in types and len(set(types)) == 13
    index = task_index("In which year was")
    session.reset(index)
    assert session.env.task_type() == WebArenaEnv.task_type_of(index) == "wikipedia/info"
    assert WebArenaEnv.task_type_of(10**6) is None


@pytest.mark.slow
def test_the_expert_solves_a_task_of_every_site_and_kind(runtime):
    """One task per task type (site and kind: information, navigation, content), so that every evaluator
    and every site is played end to end.  All 71 are played by ``agentenv eval --agent expert --env
    webarena`` (docs/benchmarks.md, WebArena): the whole set here would take most of a CI run."""
    firsts: dict[tuple[tuple[str, ...], str], int] = {}
    for index, config in enumerate(WebArenaEnv.tasks.bundled):
        firsts.setdefault((tuple(config["sites"]), config["eval"]["eval_types"][0]), index)
    indices = sorted(firsts.values())
    with ThreadPoolExecutor(3) as pool:  # three sessions at once: the browser serves them together
        results = dict(zip(indices, pool.map(lambda i: play_expert(WebArenaEnv, i), indices), strict=True))
    failed = {i: r for i, r in results.items() if r[0] != 1.0}
    assert len(indices) == 13 and not failed, failed


def test_the_expert_scrolls_when_only_the_viewport_is_shown(runtime):
    viewport_only = type("ViewportWebArena", (WebArenaEnv,), {"viewport_only": True})
    score, steps = play_expert(viewport_only, task_index("Write a 4-star review"))
    plan = len(WebArenaEnv.tasks.bundled[task_index("Write a 4-star review")]["expert"])
    assert score == 1.0 and steps > plan  # the review form lies below the fold: it scrolled to it


# --- WebArena's own configs ----------------------------------------------------------------------------


def webarena_config(task_id: int, sites: list[str], intent: str, start: str, spec: dict, **extra) -> dict:
    """A config exactly as WebArena's config_files/<id>.json write one."""
    return {
        "sites": sites, "task_id": task_id, "require_login": True,
        "storage_state": f"./.auth/{sites[0]}_state.json", "start_url": start, "geolocation": None,
        "intent_template": intent, "instantiation_dict": {}, "intent": intent, "require_reset": False,
        "eval": spec, "intent_template_id": 900 + task_id, **extra,
    }


CONFIGS = [
    webarena_config(0, ["shopping"], "What is the price of Larkspur Watercolor Set?", "__SHOPPING__", {
        "eval_types": ["string_match"], "reference_answers": {"must_include": ["55.49"]}, "reference_url": "",
        "program_html": [], "string_note": "", "reference_answer_raw_annotation": "$55.49"}),
    webarena_config(1, ["reddit"], "Open the books forum", "__REDDIT__", {
        "eval_types": ["url_match"], "reference_answers": None, "reference_url": "__REDDIT__/f/books",
        "program_html": [], "url_note": "GOLD in PRED"}),
    webarena_config(2, ["shopping_admin"], "Set the stock of Northwind Marble Run to 7", "__SHOPPING_ADMIN__", {
        "eval_types": ["program_html"], "reference_answers": None, "reference_url": "", "program_html": [{
            "url": "__SHOPPING_ADMIN__/catalog/product/edit/42", "locator": "document.querySelector('#qty').value",
            "required_contents": {"exact_match": "7"}}]}),
    webarena_config(3, ["gitlab"], "Star the a11y project", "__GITLAB__", {
        "eval_types": ["url_match"], "reference_answers": None, "reference_url": "__GITLAB__/a11yproject",
        "program_html": []}),
    webarena_config(5, ["wikipedia", "reddit"], "Which river flows through Fennick?", "__WIKIPEDIA__ |AND| __REDDIT__", {
        "eval_types": ["string_match"], "reference_answers": {"exact_match": "Ashwater"}, "reference_url": "",
        "program_html": []}),
]


def same_range(a: TaskRange, b: TaskRange) -> bool:
    return (a.start, a.stop, a.excluded) == (b.start, b.stop, b.excluded)


@pytest.fixture
def webarena_checkout(tmp_path, runtime):
    """WebArena's layout: config_files/<id>.json beside .auth/ (a saved admin login made on the bundled site)."""
    files = tmp_path / "config_files"
    files.mkdir()
    for config in CONFIGS:
        (files / f"{config['task_id']}.json").write_text(json.dumps(config))
    (tmp_path / ".auth").mkdir()
    admin = runtime.sites.urls["shopping_admin"]

    async def save_login() -> None:
        context = await runtime.browser.browser.new_context()
        await context.request.post(f"{admin}/login", form={"username": "admin", "password": "admin1234"})
        await context.storage_state(path=str(tmp_path / ".auth" / "shopping_admin_state.json"))
        await context.close()

    runtime.browser.run(save_login())
    return tmp_path


def test_webarenas_configs_load_from_a_folder_or_a_file(webarena_checkout, tmp_path):
    folder = read_configs(webarena_checkout / "config_files")
    assert [c["task_id"] for c in folder] == [0, 1, 2, 3, 5]
    raw = tmp_path / "test.raw.json"
    raw.write_text(json.dumps(CONFIGS[::-1]))
    assert read_configs(raw) == folder
    broken = dict(CONFIGS[0], eval={"eval_types": ["llm_vibes"]})
    with pytest.raises(ConfigError, match="eval.eval_types"):
        check_config(broken, "x.json")
    with pytest.raises(ConfigError, match="field 'intent'"):
        check_config({k: v for k, v in CONFIGS[0].items() if k != "intent"}, "x.json")
    assert urls_from_environment({"SHOPPING": "myhost:7770/", "GITLAB": "http://git:8023", "PATH": "/bin"}) == {
        "shopping": "http://myhost:7770", "gitlab": "http://git:8023"}


def test_webarenas_configs_play_on_the_bundled_sites(webarena_checkout, runtime):
    env_cls = WebArenaEnv.with_configs(webarena_checkout / "config_files")
    # task 3 needs GitLab, which is neither bundled nor given; there is no task 4
    assert same_range(env_cls.splits["webarena"], TaskRange(1000, 1006, [1003, 1004]))
    assert env_cls.splits["test"] == WebArenaEnv.splits["test"]
    with LocalSession(env_cls) as session:
        with pytest.raises(BadRequest):
            session.reset(1003)
        session.reset(1000)
        assert session.step("```stop [$55.49]```").reward == 1.0
        session.reset(1001)
        session.step(f"```goto [{runtime.sites.urls['reddit']}/forums]```")
        session.step(f"```click [{element(session, 'link', 'books')}]```")
        assert session.step("```stop []```").reward == 1.0
        first = session.reset(1002).observation  # logged in by WebArena's saved storage state, not by a form
        assert "Tab 0 (current): Dashboard / Harbor Market Admin" in first
        session.step(f"```goto [{runtime.sites.urls['shopping_admin']}/catalog/product/edit/42]```")
        session.step(f"```type [{element(session, 'textbox', 'Quantity')}] [7] [0]```")
        session.step(f"```click [{element(session, 'button', 'Save')}]```")
        assert session.step("```stop []```").reward == 1.0
        first = session.reset(1005).observation
        assert "Tab 0 (current): Main Page - Almanac | Tab 1: Threadbare" in first
        assert session.expert().action == "```stop [N/A]```"  # no plan for a user's config
        assert session.step("```stop [Ashwater]```").reward == 1.0


def test_a_site_url_given_by_the_user_makes_its_tasks_playable(webarena_checkout):
    env_cls = WebArenaEnv.with_configs(webarena_checkout / "config_files", {"gitlab": "http://127.0.0.1:1"})
    assert same_range(env_cls.splits["webarena"], TaskRange(1000, 1006, [1004]))
    assert env_cls.serves(1003) and not env_cls.serves(1004) and not WebArenaEnv.serves(1000)
    # AgentGym's client names a config by its task_id (config_files/<idx>.json); without configs, a bundled task
    assert env_cls.agentgym_task(5) == 1005 and WebArenaEnv.agentgym_task(5) == 5


def test_webarena_configs_named_in_the_environment(webarena_checkout, monkeypatch, caplog):
    from agentenv_webarena.env import _default_table

    monkeypatch.setenv("WEBARENA_CONFIGS", str(webarena_checkout / "config_files"))
    monkeypatch.setenv("GITLAB", "127.0.0.1:8023")
    table = _default_table()
    assert sorted(table.real) == [0, 1, 2, 3, 5] and table.urls == {"gitlab": "http://127.0.0.1:8023"}
    monkeypatch.setenv("WEBARENA_CONFIGS", str(webarena_checkout / "missing"))
    assert _default_table().real == {}  # a wrong path leaves the bundled tasks, with a warning
    assert "is not used" in caplog.text
