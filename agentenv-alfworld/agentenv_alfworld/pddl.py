"""A generated :class:`~agentenv_alfworld.tasks.Task` written as ALFWorld's game files.

A game folder holds what ``alfworld``'s own loader (``AlfredTWEnv``) and handcoded expert read:

- ``game.tw-pddl``: JSON with ``pddl_domain`` and ``grammar`` (ALFWorld's ``alfred.pddl`` and
  ``alfred.twl2`` as alfworld 0.3.3, AgentGym's pin, has them, made from the installed package's; the
  grammar's task line filled in),
  ``pddl_problem`` (the room, its objects and the goal) and ``solvable``;
- ``initial_state.pddl``: the problem alone;
- ``traj_data.json``: ``task_type``, ``pddl_params`` and ``turk_annotations`` (the expert reads the first
  two), plus the floor plan.

The problem follows ALFRED's conventions: ids such as ``Cabinet|+00.68|+00.50|-02.20`` are mangled into
PDDL names (``Cabinet_bar__plus_00_dot_68...``), types are constants ``CabinetType`` / ``MugType``, and the
goal is ALFWorld's own for the task type (``alfworld.gen.goal_library``).
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from alfworld.gen import constants

from .tasks import Task

#: type constants ALFWorld's domain names in its actions (the sink basin cleans, a knife slices ...): every
#: problem declares them, besides the types of its own objects and receptacles
DOMAIN_OBJECT_TYPES = ("ButterKnife", "Knife")
DOMAIN_RECEPTACLE_TYPES = ("Fridge", "Microwave", "SinkBasin")
#: what an object type can undergo: ALFRED's affordance sets, as PDDL predicates
ABILITIES = {"cleanable": "Cleanable", "heatable": "Heatable", "coolable": "Coolable", "sliceable": "Sliceable"}
#: objects that are switched on, not picked up
LAMP_TYPES = frozenset(constants.VAL_ACTION_OBJECTS["Toggleable"])

_MANGLE = {"-": "_minus_", "|": "_bar_", "+": "_plus_", ".": "_dot_", ",": "_comma_"}


def mangle(alfred_id: str) -> str:
    """ALFRED's id as a PDDL name (ALFWorld's demangler turns it back into ``cabinet 3``)."""
    return "".join(_MANGLE.get(c, c) for c in alfred_id)


#: the installed alfworld's (0.4) grammar as alfworld 0.3.3, AgentGym's pin, writes it: a put-down is
#: ``put X in/on Y`` ("You put the X in/on the Y."), an arrival "You arrive at loc N. ..." (which AgentGym
#: strips, and so does the env); 0.3.3 has no ``help`` command (removed from grammar and domain below)
_AS_ALFWORLD_03 = {
    'template :: "move {o} to {r}";': 'template :: "put {o} in/on {r}";',
    '"You move the {o.name} to the {r.name}."': '"You put the {o.name} in/on the {r.name}."',
    '"You arrive at {r.name}. #examineReceptacle.feedback#"': '"You arrive at {lend.name}. #examineReceptacle.feedback#"',
}


@functools.cache
def domain() -> str:
    """ALFWorld's PDDL domain as alfworld 0.3.3 has it (the installed one without 0.4's ``help`` action)."""
    text = (resources.files("alfworld") / "data" / "alfred.pddl").read_text()
    return re.sub(r"\n\(:action help\n.*?\n\)\n", "", text, flags=re.DOTALL)


@functools.cache
def grammar_template() -> str:
    """ALFWorld's grammar as alfworld 0.3.3 has it, so that generated games speak AgentGym's dialect."""
    text = (resources.files("alfworld") / "data" / "alfred.twl2").read_text()
    for old, new in _AS_ALFWORLD_03.items():
        if old not in text:
            raise RuntimeError(f"the installed alfworld's grammar lacks {old!r}: agentenv-alfworld expects alfworld 0.4's")
        text = text.replace(old, new)
    return re.sub(r"\n\naction help \{.*", "\n", text, flags=re.DOTALL)


def grammar(description: str) -> str:
    """ALFWorld's grammar with the task line ("Your task is to: ...") filled in, as its loader does."""
    return grammar_template().replace("UNKNOWN GOAL", description)


def goal_pddl(task: Task) -> str:
    """ALFWorld's goal for the task type (it also closes the problem's ``define``)."""
    from alfworld.gen import goal_library

    g = task.goal
    text = goal_library.gdict[g.task_type]["pddl"].format(
        obj=g.object_target, recep=g.parent_target, toggle=g.toggle_target
    )
    return text.replace("#", "-")


def problem(task: Task) -> str:
    """The PDDL problem: objects, the initial state and the goal."""
    room = task.scene
    receptacles = room.receptacles
    locations = sorted({r.location for r in receptacles} | {task.agent_location})
    present_objects = sorted({p.object_type for p in task.placements})
    object_types = sorted(set(present_objects) | set(DOMAIN_OBJECT_TYPES))
    receptacle_types = sorted(room.receptacle_types() | set(DOMAIN_RECEPTACLE_TYPES))
    lines = ["", f"(define (problem plan_agentenv_{task.index})", "(:domain alfred)", "(:objects", "agent1 - agent"]
    lines += [f"        {t}Type - otype" for t in object_types]
    lines += [f"        {t}Type - rtype" for t in receptacle_types]
    lines += [f"        {mangle(p.object_id)} - object" for p in task.placements]
    lines += [f"        {mangle(r.id)} - receptacle" for r in receptacles]
    lines += [f"        {mangle(loc)} - location" for loc in locations]
    lines += ["        )", "", "(:init", f"        (atLocation agent1 {mangle(task.agent_location)})"]
    for r in receptacles:
        name = mangle(r.id)
        lines.append(f"        (receptacleType {name} {r.type}Type)")
        lines.append(f"        (receptacleAtLocation {name} {mangle(r.location)})")
        if r.type in constants.OPENABLE_CLASS_SET:
            lines.append(f"        (openable {name})")
    for p in task.placements:
        name = mangle(p.object_id)
        lines.append(f"        (objectType {name} {p.object_type}Type)")
        lines.append(f"        (inReceptacle {name} {mangle(p.receptacle.id)})")
        lines.append(f"        (objectAtLocation {name} {mangle(p.receptacle.location)})")
        if p.object_type in LAMP_TYPES:
            lines.append(f"        (toggleable {name})")
        else:
            lines.append(f"        (pickupable {name})")
        if p.object_type in constants.MOVABLE_RECEPTACLES_SET:
            lines.append(f"        (isReceptacleObject {name})")
        for predicate, ability in ABILITIES.items():
            if p.object_type in constants.VAL_ACTION_OBJECTS[ability]:
                lines.append(f"        ({predicate} {name})")
    for rtype in sorted(room.receptacle_types()):
        for otype in present_objects:
            if otype in constants.VAL_RECEPTACLE_OBJECTS.get(rtype, ()):
                lines.append(f"        (canContain {rtype}Type {otype}Type)")
    lines += ["        )", "", goal_pddl(task)]
    return "\n".join(lines)



def traj_data(task: Task) -> dict[str, Any]:
    """What ALFWorld's expert and loader read about the task (no human annotations: the templated goal)."""
    g = task.goal
    return {
        "task_id": f"agentenv_{task.index}",
        "task_type": g.task_type,
        "pddl_params": {
            "object_target": g.object_target,
            "parent_target": g.parent_target,
            "toggle_target": g.toggle_target,
            "mrecep_target": "",
            "object_sliced": False,
        },
        "scene": {"floor_plan": f"FloorPlan{task.scene.number}", "scene_num": task.scene.number},
        "turk_annotations": {"anns": [{"task_desc": task.description, "high_descs": [], "votes": []}]},
        "generated_by": "agentenv-alfworld",
    }


def write_game(task: Task, folder: Path) -> Path:
    """Write the three files of ``task`` into ``folder`` (made if needed); returns the game file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    text = problem(task)
    game = {"pddl_domain": domain(), "grammar": grammar(task.description), "pddl_problem": text, "solvable": True}
    (folder / "initial_state.pddl").write_text(text)
    (folder / "traj_data.json").write_text(json.dumps(traj_data(task), indent=1))
    path = folder / "game.tw-pddl"
    path.write_text(json.dumps(game))
    return path
