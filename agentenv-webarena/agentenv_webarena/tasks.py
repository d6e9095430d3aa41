"""Which tasks an env class plays, and under which indices.

- Indices ``0 .. N-1``: the bundled tasks (``data/tasks.json``), train first, then test.
- Indices ``1000 + task_id``: WebArena's own configs, when a user gives them (``WEBARENA_CONFIGS`` names a
  config file or folder, or :meth:`WebArenaEnv.with_configs`), in a split named ``webarena``.  A config
  plays when each site it uses has a URL: a bundled site's, or one set in WebArena's variables
  (``SHOPPING=http://host:7770`` ...); the others are left out of the split and refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv.env import TaskRange

from .configs import bundled_configs, read_configs, sites_used

#: the index of WebArena's config ``task_id`` is ``REAL_TASK_OFFSET + task_id``
REAL_TASK_OFFSET = 1000
#: the sites this package serves itself
BUNDLED_SITES = frozenset({"shopping", "shopping_admin", "reddit", "wikipedia"})


@dataclass(frozen=True)
class TaskTable:
    """The bundled tasks and, optionally, WebArena's own configs with the URLs of the sites they use."""

    bundled: tuple[dict[str, Any], ...]
    real: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: site -> URL given by the user (overrides a bundled site's)
    urls: dict[str, str] = field(default_factory=dict)
    #: the folder relative ``storage_state`` paths of real configs are read from (WebArena's checkout)
    root: Path | None = None

    @classmethod
    def load(cls, configs: str | Path | None = None, urls: dict[str, str] | None = None) -> TaskTable:
        bundled = tuple(bundled_configs())
        if configs is None:
            return cls(bundled, urls=dict(urls or {}))
        path = Path(configs).resolve()
        real = {c["task_id"]: c for c in read_configs(path)}
        # WebArena keeps config_files/ and .auth/ side by side in its checkout
        root = path.parent if path.is_dir() else path.parent.parent
        return cls(bundled, real, dict(urls or {}), root)

    def splits(self) -> dict[str, range | TaskRange]:
        kinds = [c.get("split", "train") for c in self.bundled]
        n_train = kinds.count("train")
        if kinds != ["train"] * n_train + ["test"] * (len(kinds) - n_train):
            raise ValueError("data/tasks.json must list its train tasks before its test tasks")
        splits: dict[str, range | TaskRange] = {"train": range(0, n_train), "test": range(n_train, len(kinds))}
        if self.real:
            top = max(self.real) + 1
            left_out = [REAL_TASK_OFFSET + i for i in range(top) if i not in self.real or not self.has_sites(self.real[i])]
            splits["webarena"] = TaskRange(REAL_TASK_OFFSET, REAL_TASK_OFFSET + top, left_out)
        return splits

    def has_sites(self, config: dict[str, Any]) -> bool:
        return sites_used(config) <= BUNDLED_SITES | set(self.urls)

    def playable(self, data_idx: int) -> bool:
        if 0 <= data_idx < len(self.bundled):
            return True
        config = self.real.get(data_idx - REAL_TASK_OFFSET)
        return config is not None and self.has_sites(config)

    def config(self, data_idx: int) -> dict[str, Any]:
        """The config (with placeholders) of task ``data_idx``."""
        if 0 <= data_idx < len(self.bundled):
            return self.bundled[data_idx]
        config = self.real.get(data_idx - REAL_TASK_OFFSET)
        if config is None:
            raise ValueError(f"there is no WebArena task {data_idx}")
        if not self.has_sites(config):
            missing = sorted(sites_used(config) - BUNDLED_SITES - set(self.urls))
            raise ValueError(f"task {data_idx} needs the site(s) {', '.join(missing)}: set "
                             + ", ".join(f"{s.upper()}=http://host:port" for s in missing))
        return config
