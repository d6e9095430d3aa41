"""What a generated task index is: its split, task type, room, goal and where every object starts.

Everything is drawn from ``random.Random(f"alfworld-{index}")``, so a task is the same on every machine.

- **Splits** follow ALFWorld's: ``train`` (0-2419) and ``test_seen`` (2420-2519) use ALFRED's 96 training
  floor plans, ``test_unseen`` (2520-2619) its 24 held-out ones; ``test`` is both test splits, AgentGym's
  index range for its 200 test games.  A ``test_seen`` task never repeats a train task's goal in the same
  room (new placements and goals in known rooms).
- **Task types** take turns within a split, so each split covers the six in equal shares; a type is only
  set in rooms ALFRED allows it in (heating and cooling in kitchens, lamps in living rooms and bedrooms).
- **Objects** come from the room's own object types, each placed in a receptacle of the room that ALFRED
  lets hold it (``VAL_RECEPTACLE_OBJECTS``); the goal's objects never start where the goal wants them.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from dataclasses import dataclass

from alfworld.gen import constants

from .scenes import TRAIN_SCENES, UNSEEN_SCENES, Receptacle, Scene, scene

#: ALFWorld's six task types (``alfworld.agents.environment.alfred_tw_env.TASK_TYPES``)
TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)

SPLITS: dict[str, range] = {
    "train": range(0, 2420),
    "test": range(2420, 2620),
    "test_seen": range(2420, 2520),
    "test_unseen": range(2520, 2620),
}

#: object types that can be picked up and put somewhere (sliced pieces excluded, as ALFWorld does)
PICKUPABLE: frozenset[str] = frozenset(
    o for objects in constants.VAL_RECEPTACLE_OBJECTS.values() for o in objects if not o.endswith("Sliced")
)
LAMPS = ("DeskLamp", "FloorLamp")
#: where a lamp stands: the ALFRED domain toggles only objects that are in a receptacle
LAMP_HOLDERS = {
    "DeskLamp": ("Desk", "SideTable", "Dresser"),
    "FloorLamp": ("SideTable", "Dresser", "Desk", "CoffeeTable", "TVStand"),
}
#: the appliance a state-change task needs, and the property its object must have
STATE_CHANGE = {
    "pick_clean_then_place_in_recep": ("SinkBasin", "Cleanable"),
    "pick_heat_then_place_in_recep": ("Microwave", "Heatable"),
    "pick_cool_then_place_in_recep": ("Fridge", "Coolable"),
}
#: at most this many distractor object types in a room (keeps a game's planning task small)
MAX_DISTRACTOR_TYPES = 10


@dataclass(frozen=True)
class Goal:
    """A task's goal in ALFRED's terms (``pddl_params``): types, not instances."""

    task_type: str
    object_target: str
    parent_target: str = ""  # the receptacle type to put the object in ("" for look_at_obj_in_light)
    toggle_target: str = ""  # the lamp (look_at_obj_in_light only)


@dataclass(frozen=True)
class Placement:
    """An object instance and the receptacle it starts in."""

    object_id: str
    object_type: str
    receptacle: Receptacle


@dataclass(frozen=True)
class Task:
    """One generated game: everything its files are written from."""

    index: int
    split: str
    scene: Scene
    goal: Goal
    placements: tuple[Placement, ...]
    agent_location: str
    #: the goal in words, from ALFWorld's templates (``alfworld.gen.goal_library``)
    description: str

    @property
    def name(self) -> str:
        """The game's folder name in ALFWorld's layout: ``<type>-<object>-None-<receptacle>-<floor plan>``."""
        g = self.goal
        return f"{g.task_type}-{g.object_target}-None-{g.parent_target or g.toggle_target}-{self.scene.number}"


def split_of(index: int) -> str:
    for split in ("train", "test_seen", "test_unseen"):
        if index in SPLITS[split]:
            return split
    raise ValueError(f"task index {index} is outside the generated splits (0..{SPLITS['test'].stop - 1})")


def task_type_of(index: int) -> str:
    split = SPLITS[split_of(index)]
    return TASK_TYPES[(index - split.start) % len(TASK_TYPES)]


# --- goals ------------------------------------------------------------------------------------------------


def holders(scene: Scene, object_type: str) -> list[Receptacle]:
    """The room's receptacles an object of this type may be in."""
    return [r for r in scene.receptacles if object_type in constants.VAL_RECEPTACLE_OBJECTS.get(r.type, ())]


def lamp_holders(scene: Scene, lamp: str) -> list[Receptacle]:
    """Where a lamp may stand: a holder alone at its location (a lamp can be switched on from any
    receptacle's spot that shares its location, and ALFWorld's expert expects to see the lamp it uses)."""
    crowded = Counter(r.location for r in scene.receptacles)
    return [r for r in scene.receptacles if r.type in LAMP_HOLDERS[lamp] and crowded[r.location] == 1]


def candidate_goals(scene: Scene, task_type: str) -> list[Goal]:
    """Every goal of ``task_type`` that the room can pose: the objects are in the room and can start
    somewhere other than where the goal wants them, and the appliance or lamp the task needs is there."""
    if scene.room not in constants.GOALS_VALID[task_type]:
        return []
    kinds = scene.receptacle_types()
    movable = sorted(PICKUPABLE & scene.object_types)
    if task_type == "look_at_obj_in_light":
        lamps = [lamp for lamp in LAMPS if lamp in scene.object_types and lamp_holders(scene, lamp)]
        return [
            Goal(task_type, obj, toggle_target=lamp) for lamp in lamps for obj in movable if holders(scene, obj)
        ]
    needed = STATE_CHANGE.get(task_type)
    if needed is not None:
        appliance, ability = needed
        if appliance not in kinds:
            return []
        movable = [o for o in movable if o in constants.VAL_ACTION_OBJECTS[ability]]
    goals = []
    for obj in movable:
        for parent in sorted(kinds):
            if needed is not None and parent == needed[0]:
                continue  # "put a hot potato in the microwave" is not a task
            if obj not in constants.VAL_RECEPTACLE_OBJECTS.get(parent, ()):
                continue
            starts = [r for r in holders(scene, obj) if r.type != parent]
            if len(starts) >= 1:
                goals.append(Goal(task_type, obj, parent_target=parent))
    return goals


def _scenes_for(split: str) -> tuple[int, ...]:
    return UNSEEN_SCENES if split == "test_unseen" else TRAIN_SCENES


@functools.cache
def _goals_in(number: int, task_type: str) -> tuple[Goal, ...]:
    return tuple(candidate_goals(scene(number), task_type))


def draw_goal(index: int, rng: random.Random) -> tuple[int, Goal]:
    """``(floor plan, goal)`` of task ``index``; a ``test_seen`` task avoids the train tasks' pairs."""
    split, task_type = split_of(index), task_type_of(index)
    rooms = [n for n in _scenes_for(split) if _goals_in(n, task_type)]
    taken = train_pairs() if split == "test_seen" else frozenset()
    while True:
        number = rng.choice(rooms)
        fresh = [g for g in _goals_in(number, task_type) if (number, g) not in taken]
        if fresh:
            return number, rng.choice(fresh)


@functools.cache
def train_pairs() -> frozenset[tuple[int, Goal]]:
    """The ``(floor plan, goal)`` pair of every train task."""
    return frozenset(draw_goal(i, random.Random(f"alfworld-{i}")) for i in SPLITS["train"])


# --- placements -------------------------------------------------------------------------------------------


def _object_id(object_type: str, receptacle: Receptacle, rng: random.Random, taken: set[str]) -> str:
    """An ALFRED-style id (``Mug|+01.20|+00.90|-02.31``) near the receptacle's own coordinates."""
    parts = receptacle.id.split("|")
    base = [float(p) for p in parts[1:4]]
    while True:
        x, y, z = (b + rng.uniform(-0.3, 0.3) for b in base)
        oid = f"{object_type}|{x:+06.2f}|{abs(y):+06.2f}|{z:+06.2f}"
        if oid not in taken:
            taken.add(oid)
            return oid


def place_objects(room: Scene, goal: Goal, rng: random.Random) -> tuple[Placement, ...]:
    """The goal's objects (one to three; two or three for ``pick_two_obj_and_place``), the lamp, and up to
    :data:`MAX_DISTRACTOR_TYPES` other object types of the room, one to three of each."""
    taken: set[str] = set()
    placed: list[Placement] = []

    def put(object_type: str, count: int, where: list[Receptacle]) -> None:
        for _ in range(count):
            receptacle = rng.choice(where)
            placed.append(Placement(_object_id(object_type, receptacle, rng, taken), object_type, receptacle))

    target = goal.object_target
    starts = [r for r in holders(room, target) if r.type != goal.parent_target]
    low = 2 if goal.task_type == "pick_two_obj_and_place" else 1
    put(target, rng.randint(low, 3), starts)
    if goal.toggle_target:
        put(goal.toggle_target, 1, lamp_holders(room, goal.toggle_target))
    others = sorted((PICKUPABLE & room.object_types) - {target})
    rng.shuffle(others)
    for object_type in others[:MAX_DISTRACTOR_TYPES]:
        where = holders(room, object_type)
        if object_type == target or not where:
            continue
        put(object_type, rng.randint(1, 3), where)
    return tuple(placed)


def describe(goal: Goal, rng: random.Random) -> str:
    """The goal in words, from ALFWorld's own templates for the task type."""
    from alfworld.gen import goal_library

    template = rng.choice(goal_library.gdict[goal.task_type]["templates"])
    return template.format(
        obj=goal.object_target.lower(), recep=goal.parent_target.lower(), toggle=goal.toggle_target.lower()
    )


def free_location(room: Scene, rng: random.Random) -> str:
    """Where the agent starts: a spot by no receptacle ("You are in the middle of a room")."""
    used = {r.location for r in room.receptacles}
    while True:
        spot = f"loc|{rng.randint(-16, 16)}|{rng.randint(-16, 16)}|{rng.randint(0, 3)}|30"
        if spot not in used:
            return spot


@functools.cache
def task(index: int) -> Task:
    """Generated task ``index`` (0..2619)."""
    rng = random.Random(f"alfworld-{index}")
    number, goal = draw_goal(index, rng)
    room = scene(number)
    placements = place_objects(room, goal, rng)
    return Task(index, split_of(index), room, goal, placements, free_location(room, rng), describe(goal, rng))
