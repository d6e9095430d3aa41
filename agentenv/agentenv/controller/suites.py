"""The benchmark suite: a fixed, versioned set of test tasks per environment (AgentGym's AgentEval).

A suite is a JSON file of this package's ``suites/`` folder (``suites/v1.json``) or any JSON file of the
same shape::

    {"name": "v1", "split": "test", "seed": 0, "default_size": 100, "sizes": {"alfworld": 30, ...},
     "envs": {"babyai": {"indices": [...]}, ...}}

An env with stored indices plays exactly those.  An env installed after the suite was written gets its
tasks by the rule the stored ones were drawn with: ``suite_size`` of its Environment class (default 100,
fewer for slow envs) tasks of its ``split``, a seeded sample stratified by task type
(:func:`~agentenv.controller.selection.select_tasks`); the whole split when it is smaller.
``python -m agentenv.controller.suites NAME --size ENV=N ...`` writes a new suite for the installed envs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agentenv.controller.selection import select_tasks
from agentenv.controller.sources import EnvSource, LocalEnv
from agentenv.env import info_splits

SUITES_DIR = Path(__file__).with_name("suites")
DEFAULT_SUITE = "v1"
DEFAULT_SIZE = 100


def suite_names() -> list[str]:
    """The suites shipped with the package."""
    return sorted(p.stem for p in SUITES_DIR.glob("*.json"))


def load_suite(name: str) -> dict[str, Any]:
    """A shipped suite by name, or a suite file by path; ``ValueError`` names the shipped ones."""
    path = Path(name) if name.endswith(".json") else SUITES_DIR / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"no suite {name!r} (shipped: {', '.join(suite_names())}; or give a suite .json file)")
    try:
        suite = json.loads(path.read_text())
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise ValueError(f"{path} is no suite: it is not JSON ({exc})") from None
    if problem := _suite_problem(suite):
        raise ValueError(f"{path} is no suite: {problem} (a suite holds name, split, seed and envs, as "
                         f"{SUITES_DIR / (DEFAULT_SUITE + '.json')} does)")
    return suite


def _suite_problem(suite: Any) -> str | None:
    """What keeps ``suite`` (a JSON value) from being a suite, or ``None``."""
    if not isinstance(suite, dict):
        return f"it is a JSON {type(suite).__name__}, not an object"
    wanted = {"name": str, "split": str, "seed": int, "envs": dict}
    missing = [key for key in wanted if key not in suite]
    if missing:
        return f"it has no {', '.join(missing)}"
    wrong = [key for key, kind in wanted.items() if not isinstance(suite[key], kind) or isinstance(suite[key], bool)]
    if wrong:
        return f"its {', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} of the wrong kind"
    for env, entry in suite["envs"].items():
        indices = entry.get("indices") if isinstance(entry, dict) else None
        if not isinstance(indices, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
            return f'its envs.{env} is not {{"indices": [task indices]}}'
    if not isinstance(suite.get("sizes", {}), dict):
        return "its sizes is not an object"
    return None


def suite_size(env_cls: type) -> int:
    """How many tasks an env gets in a suite that stores none for it: its class's ``suite_size``."""
    return int(getattr(env_cls, "suite_size", DEFAULT_SIZE))


def suite_tasks(suite: dict[str, Any], env: str, source: EnvSource, size: int | None = None) -> list[int]:
    """The task indices ``env`` plays in ``suite``: the stored ones, else drawn by the suite's rule
    (``size`` tasks; default: the env class's ``suite_size``); ``ValueError`` for an env without the
    suite's split."""
    stored = suite["envs"].get(env)
    if stored is not None:
        return list(stored["indices"])
    if suite["split"] not in info_splits(source.info()):
        raise ValueError(f"{env} has no {suite['split']} split, so no tasks in suite {suite['name']}")
    if size is None:
        from agentenv.registry import env_class

        size = suite_size(env_class(env))
    chosen = select_tasks(env, source, default_split=suite["split"], sample=size, seed=suite["seed"])
    return chosen.indices


def build_suite(name: str, envs: list[str], sizes: dict[str, int], *, split: str = "test", seed: int = 0) -> dict[str, Any]:
    """A suite over ``envs`` (installed ones, drawn in process): ``sizes`` override the envs' own."""
    from agentenv.registry import env_class

    suite: dict[str, Any] = {"name": name, "split": split, "seed": seed, "default_size": DEFAULT_SIZE, "sizes": {},
                             "envs": {}}
    for env in envs:
        cls = env_class(env)
        size = sizes.get(env, suite_size(cls))
        if size != DEFAULT_SIZE:
            suite["sizes"][env] = size
        with LocalEnv(cls) as source:
            suite["envs"][env] = {"indices": suite_tasks(suite, env, source, size)}
    return suite


def main(argv: list[str] | None = None) -> None:
    from agentenv.registry import installed_envs

    parser = argparse.ArgumentParser(description="write a benchmark suite for the installed envs")
    parser.add_argument("name")
    parser.add_argument("--size", action="append", default=[], metavar="ENV=N", help="an env's size (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sizes = {env: int(n) for env, _, n in (s.partition("=") for s in args.size)}
    suite = build_suite(args.name, installed_envs(), sizes, seed=args.seed)
    path = SUITES_DIR / f"{args.name}.json"
    lines = [f'    "{env}": {json.dumps(entry)}' for env, entry in suite["envs"].items()]
    head = json.dumps({k: v for k, v in suite.items() if k != "envs"})[:-1]
    path.write_text(head + ', "envs": {\n' + ",\n".join(lines) + "\n}}\n")  # one line per env: readable diffs
    print(f"wrote {path}: " + ", ".join(f"{env} {len(e['indices'])}" for env, e in suite["envs"].items()))


if __name__ == "__main__":
    main()
