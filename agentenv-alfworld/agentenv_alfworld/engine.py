"""One ALFWorld game on its real engine: TextWorld's PDDL environment with ALFWorld's name demangler.

This is what ``alfworld``'s ``AlfredTWEnv`` runs for each game, without its batch and gym layers:
``textworld.envs.pddl.PddlEnv`` (Fast Downward through ``fast-downward-textworld``) wrapped in
``AlfredDemangler``, which names ``Cabinet_bar__plus_00_dot_68...`` "cabinet 3".

Two facts about the engine shape this module:

- Fast Downward's shared library holds one planning task, so TextWorld loads a fresh copy of it (33 MB) for
  every ``PddlEnv`` and never unloads it; unloading one while another copy is loaded crashes the process
  when it exits.  Copies are kept in a :class:`LibraryPool` instead: a game takes one, :meth:`GameEngine.close`
  frees its task and gives it back, and the next game reuses it, so a server holds as many copies as it
  ever had live sessions at once;
- the engine is not thread-safe across games: translating a PDDL problem (every load and reset) rewrites
  module globals of Fast Downward's translator (``sys.argv``, its options, ``sys.stdout`` while it runs),
  and every step derives text with TextWorld's module-level parsers, which keep their parse state in the
  parser object.  :data:`ENGINE_LOCK` lets one thread of the process run the engine at a time; the work is
  pure Python, so under the GIL this costs no throughput (a server scales with ``--workers`` processes).

TextWorld interns its logic objects (propositions and their signatures) in one process-wide cache
(``mementos``) that nothing ever empties: ~1 MiB a game never played before.  They compare and hash by value,
so interning only saves time and memory; :func:`forget_interned` empties the cache past
:data:`INTERNED_KEPT` entries, and a server's memory no longer follows the number of distinct games it played.

Most of a reset is that translation (twice: once to play, once to plan), and most of a step is TextWorld's
grammar re-parsing the same command templates: :func:`memoise` keeps the results of those two pure functions
(see its docstring), which makes a reset of a game played before and a step several times cheaper without
changing what the engine does.
"""

from __future__ import annotations

import copy
import functools
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .commands import Dialect, dialect_of

#: one engine call at a time in this process (see the module's docstring)
ENGINE_LOCK = threading.RLock()


class LibraryPool:
    """Loaded copies of Fast Downward's library, each free for one game at a time."""

    def __init__(self) -> None:
        self._free: list[Any] = []
        self._lock = threading.Lock()

    def acquire(self) -> Any:
        with self._lock:
            if self._free:
                return self._free.pop()
        import fast_downward

        return fast_downward.load_lib()

    def release(self, lib: Any) -> None:
        lib.cleanup()  # frees the planning task the copy held
        with self._lock:
            self._free.append(lib)

    def __len__(self) -> int:
        return len(self._free)


#: the process's pool of library copies
LIBRARIES = LibraryPool()


@functools.cache
def _pooled_pddl_env() -> type:
    """TextWorld's ``PddlEnv`` on a library copy from :data:`LIBRARIES` instead of a fresh one."""
    import textworld
    from textworld.envs.pddl import PddlEnv

    class PooledPddlEnv(PddlEnv):
        def __init__(self, infos: Any, downward_lib: Any) -> None:
            textworld.Environment.__init__(self, infos)  # (PddlEnv.__init__ would load another copy)
            self.downward_lib = downward_lib

    return PooledPddlEnv


#: translated problems kept (a translation is a few MB; a reset of one of them skips it)
TRANSLATIONS_KEPT = 16


@functools.cache
def memoise() -> None:
    """Keep the results of two pure functions of the engine, process-wide (installed once):

    - ``fast_downward.pddl2sas(domain, problem, optimize)``, the translation of a PDDL problem into Fast
      Downward's task, which TextWorld runs twice per load and twice per reset and only reads afterwards;
    - ``textworld.envs.pddl.textgen._parse_and_convert(text)``, the parse of a grammar string (a command
      template, a rule), which TextWorld repeats for every admissible command at every step; TextWorld sets
      fields on the parsed symbols, so each call gets its own deep copy.
    """
    import fast_downward
    from textworld.envs.pddl import textgen

    translate = fast_downward.pddl2sas

    @functools.lru_cache(maxsize=TRANSLATIONS_KEPT)
    def translated(domain: str, problem: str, optimize: bool) -> Any:
        return translate(domain, problem, optimize=optimize)

    def pddl2sas(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> Any:
        if verbose:
            return translate(domain, problem, verbose=True, optimize=optimize)
        return translated(domain, problem, optimize)

    parse = textgen._parse_and_convert

    @functools.lru_cache(maxsize=4096)
    def parsed(text: str, rule_name: str, trace: bool) -> Any:
        return parse(text, rule_name=rule_name, trace=trace)

    def parse_and_convert(text: str, rule_name: str = "symbols", trace: bool = False) -> Any:
        return copy.deepcopy(parsed(text, rule_name, trace))

    pddl2sas.uncached, parse_and_convert.uncached = translate, parse  # type: ignore[attr-defined]
    fast_downward.pddl2sas = pddl2sas
    textgen._parse_and_convert = parse_and_convert


#: TextWorld's interned logic objects kept before the cache is emptied (~800 a game; ~60 games' worth)
INTERNED_KEPT = 50_000


def forget_interned() -> None:
    """Empty TextWorld's intern cache (``mementos``) once it holds over :data:`INTERNED_KEPT` objects.  Safe
    under live games: they keep the objects they hold, which equal (and hash as) those made afresh after."""
    from mementos import core

    if len(core._memento_cache) > INTERNED_KEPT:
        core._memento_cache.clear()


@dataclass
class GameState:
    """What the engine says after a reset or a command."""

    feedback: str
    admissible_commands: list[str]
    won: bool
    #: the raw TextWorld state (facts, entity infos), for ALFWorld's expert
    raw: Any


class GameEngine:
    """A TextWorld PDDL environment that plays one game file at a time.  Its calls hold
    :data:`ENGINE_LOCK`, so a close from another thread (a server ending a stuck session) waits for the
    call in flight before the library copy goes back to the pool."""

    def __init__(self) -> None:
        import textworld
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler

        memoise()
        infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=True, feedback=True)
        self._pddl = _pooled_pddl_env()(infos, LIBRARIES.acquire())
        self._env = AlfredDemangler()(self._pddl)
        self.game_file: Path | None = None
        self.dialect: Dialect = "move"
        self.closed = False

    def load(self, game_file: Path) -> GameState:
        """Load a ``game.tw-pddl`` file and start it."""
        with open(game_file) as f:
            grammar = json.load(f).get("grammar", "")
        with ENGINE_LOCK:
            self._check_open()
            forget_interned()
            self._env.load(str(game_file))
            state = self._env.reset()
        self.game_file, self.dialect = Path(game_file), dialect_of(grammar)
        return self._state(state)

    def restart(self) -> GameState:
        """Start the loaded game again."""
        with ENGINE_LOCK:
            self._check_open()
            return self._state(self._env.reset())

    def step(self, command: str) -> GameState:
        with ENGINE_LOCK:
            self._check_open()
            state, _, _ = self._env.step(command)
        return self._state(state)

    def plan(self) -> list[str]:
        """Fast Downward's plan from the current state to the goal (commands), or ``[]`` if none."""
        with ENGINE_LOCK:
            self._check_open()
            pddl = self._pddl
            return list(pddl._pddl_state.replan(pddl._entity_infos))

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this ALFWorld engine was closed")

    @staticmethod
    def _state(state: Any) -> GameState:
        return GameState(state["feedback"], list(state["admissible_commands"]), bool(state["won"]), state)

    def close(self) -> None:
        """Give this engine's library copy back to the pool; the engine is unusable afterwards."""
        with ENGINE_LOCK:
            if self.closed:
                return
            self.closed = True
            lib, self._pddl.downward_lib = self._pddl.downward_lib, None
        LIBRARIES.release(lib)
