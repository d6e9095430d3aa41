"""ALFWorld's rooms: the 120 AI2-THOR floor plans whose layouts PyPI ``alfworld`` ships.

For each floor plan ``alfworld/gen/layouts`` holds ``FloorPlan<n>-objects.json`` (the object and receptacle
types in the room) and ``FloorPlan<n>-openable.json`` (receptacle ids, ``Type|x|y|z`` as ALFRED names them,
with the pose the agent takes to reach each).  A :class:`Scene` is one floor plan's receptacles, each at its
location, and the object types the room has.  A few static receptacle types a room lists among its objects
have no pose in the layout file (stove burners, coffee machines, toasters, most garbage cans, towel
holders); they are added here at positions drawn from the room's seeded generator.
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass
from importlib import resources

from alfworld.gen import constants

#: room type of each floor plan range (ALFRED's)
ROOM_TYPES: dict[str, range] = dict(constants.SCENE_TYPE)
#: floor plans ALFRED trains on, and those it holds out (never seen in training)
TRAIN_SCENES: tuple[int, ...] = tuple(constants.TRAIN_SCENE_NUMBERS)
UNSEEN_SCENES: tuple[int, ...] = tuple(constants.TEST_SCENE_NUMBERS)

#: receptacles that stay in place (movable ones, a bowl or a pot, are objects that hold things)
STATIC_RECEPTACLES: frozenset[str] = frozenset(constants.RECEPTACLES) - frozenset(constants.MOVABLE_RECEPTACLES)
#: an object type a room lists, as the receptacle type it stands for
BASINS = {"Sink": "SinkBasin", "Bathtub": "BathtubBasin"}
#: how many of a receptacle type to add when a room lists it without a pose
ADDED_COUNT = {"StoveBurner": 4}


@dataclass(frozen=True)
class Receptacle:
    """A static receptacle: its ALFRED id (``Cabinet|+00.68|+00.50|-02.20``), type and location name."""

    id: str
    type: str
    location: str


@dataclass(frozen=True)
class Scene:
    number: int
    room: str
    receptacles: tuple[Receptacle, ...]
    #: every object type the room's layout lists (receptacles and scenery included)
    object_types: frozenset[str]

    def receptacle_types(self) -> set[str]:
        return {r.type for r in self.receptacles}

    def of_type(self, receptacle_type: str) -> list[Receptacle]:
        return [r for r in self.receptacles if r.type == receptacle_type]


def room_of(number: int) -> str:
    for room, numbers in ROOM_TYPES.items():
        if number in numbers:
            return room
    raise ValueError(f"no ALFRED floor plan {number}")


def location_name(x: float, z: float, rotation: float, horizon: float) -> str:
    """ALFRED's location id for an agent pose: grid cells of 0.25 m, rotation in quarter turns."""
    return f"loc|{round(x / 0.25)}|{round(z / 0.25)}|{round(rotation / 90) % 4}|{round(horizon)}"


def receptacle_type(receptacle_id: str) -> str:
    """``Sink|...|SinkBasin`` is a SinkBasin; any other id starts with its type."""
    parts = receptacle_id.split("|")
    return parts[4] if len(parts) > 4 else parts[0]


def _layout(number: int, kind: str):
    path = resources.files("alfworld.gen") / "layouts" / f"FloorPlan{number}-{kind}.json"
    return json.loads(path.read_text())


@functools.cache
def scene(number: int) -> Scene:
    """Floor plan ``number`` (1-30 kitchens, 201-230 living rooms, 301-330 bedrooms, 401-430 bathrooms)."""
    room = room_of(number)
    object_types = frozenset(_layout(number, "objects"))
    receptacles = [
        Receptacle(rid, receptacle_type(rid), location_name(*pose))
        for rid, pose in sorted(_layout(number, "openable").items())
        if receptacle_type(rid) in STATIC_RECEPTACLES
    ]
    rng = random.Random(f"alfworld-scene-{number}")
    have = {r.type for r in receptacles}
    for listed in sorted(object_types):
        rtype = BASINS.get(listed, listed)
        if rtype not in STATIC_RECEPTACLES or rtype in have:
            continue
        for _ in range(ADDED_COUNT.get(rtype, 1)):
            x, y, z = (rng.uniform(-3.0, 3.0) for _ in range(3))
            suffix = f"|{rtype}" if listed in BASINS else ""
            rid = f"{listed}|{x:+06.2f}|{abs(y):+06.2f}|{z:+06.2f}{suffix}"
            pose = (rng.randint(-12, 12) * 0.25, rng.randint(-12, 12) * 0.25, rng.choice((0, 90, 180, 270)), 30)
            receptacles.append(Receptacle(rid, rtype, location_name(*pose)))
    return Scene(number, room, tuple(receptacles), object_types)
