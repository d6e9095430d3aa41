"""WebArena's task configs: reading them, and filling their site placeholders with URLs.

A config is WebArena's JSON object (``sites, task_id, require_login, storage_state, start_url,
geolocation, intent_template, instantiation_dict, intent, require_reset, eval, intent_template_id``); a
config file holds one object or a list of them (WebArena's ``test.raw.json``), and a folder holds config
files (WebArena's ``config_files/<task_id>.json``).  URLs are written with placeholders (``__SHOPPING__``,
``__REDDIT__`` ...), filled in with the URL of each site: the bundled ones, or those a user names in
WebArena's own environment variables (``SHOPPING``, ``SHOPPING_ADMIN``, ``REDDIT``, ``GITLAB``,
``WIKIPEDIA``, ``MAP``, ``HOMEPAGE``).  The bundled tasks (``data/tasks.json``) are configs of the same
format with one extra field, ``expert``: the scripted expert's plan.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

#: site name -> its placeholder in WebArena's configs
PLACEHOLDERS = {
    "shopping": "__SHOPPING__", "shopping_admin": "__SHOPPING_ADMIN__", "reddit": "__REDDIT__",
    "gitlab": "__GITLAB__", "wikipedia": "__WIKIPEDIA__", "map": "__MAP__", "homepage": "__HOMEPAGE__",
}
#: site name -> the environment variable WebArena reads its URL from
URL_ENV_VARS = {site: site.upper() for site in PLACEHOLDERS}
EVAL_TYPES = frozenset({"string_match", "url_match", "program_html"})
#: how WebArena's start_url lists several tabs
TAB_SEPARATOR = " |AND| "


class ConfigError(ValueError):
    """A config file that is not a WebArena task config."""


def read_configs(path: str | Path) -> list[dict[str, Any]]:
    """The configs of a file (one object or a list) or of every ``*.json`` file of a folder, by task id."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.json"), key=lambda p: (not p.stem.isdigit(), int(p.stem) if p.stem.isdigit() else 0, p.name))
    elif path.is_file():
        files = [path]
    else:
        raise ConfigError(f"{path} is neither a WebArena config file nor a folder of them")
    configs: list[dict[str, Any]] = []
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{file}: not readable JSON ({exc})") from exc
        for config in data if isinstance(data, list) else [data]:
            configs.append(check_config(config, str(file)))
    ids = [c["task_id"] for c in configs]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{path}: task ids repeat")
    return sorted(configs, key=lambda c: c["task_id"])


def check_config(config: Any, where: str = "config") -> dict[str, Any]:
    """``config`` if it has the fields a task needs; :class:`ConfigError` naming the first missing one."""
    if not isinstance(config, dict):
        raise ConfigError(f"{where}: a config is a JSON object, not {type(config).__name__}")
    task = config.get("task_id", "?")
    for name, kind in (("task_id", int), ("intent", str), ("start_url", str), ("eval", dict), ("sites", list)):
        if not isinstance(config.get(name), kind) or isinstance(config.get(name), bool):
            raise ConfigError(f"{where}, task {task}: field {name!r} must be a {kind.__name__}")
    types = config["eval"].get("eval_types")
    if not isinstance(types, list) or not types or not set(types) <= EVAL_TYPES:
        raise ConfigError(f"{where}, task {task}: eval.eval_types must list some of {sorted(EVAL_TYPES)}")
    return config


def bundled_configs() -> list[dict[str, Any]]:
    """The bundled tasks (configs with placeholders and expert plans)."""
    text = resources.files("agentenv_webarena").joinpath("data/tasks.json").read_text(encoding="utf-8")
    return [check_config(c, "data/tasks.json") for c in json.loads(text)]


def sites_used(config: dict[str, Any]) -> set[str]:
    """The sites a config needs: its ``sites`` and any whose placeholder it writes."""
    text = json.dumps(config)
    return set(config.get("sites", [])) | {site for site, mark in PLACEHOLDERS.items() if mark in text}


def fill(value: Any, urls: dict[str, str]) -> Any:
    """``value`` (a config or any part of it) with every placeholder replaced by its site's URL."""
    if isinstance(value, str):
        for site, url in urls.items():
            value = value.replace(PLACEHOLDERS[site], url)
        return value
    if isinstance(value, list):
        return [fill(v, urls) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, urls) for k, v in value.items()}
    return value


def normalise_url(url: str) -> str:
    """A site URL as WebArena's variables give it (``host:port`` with or without a scheme), without the
    trailing slash."""
    url = url.strip()
    if "://" not in url:
        url = "http://" + url
    return url.rstrip("/")


def urls_from_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The site URLs set in WebArena's environment variables."""
    environ = os.environ if environ is None else environ
    return {site: normalise_url(environ[var]) for site, var in URL_ENV_VARS.items() if environ.get(var, "").strip()}
