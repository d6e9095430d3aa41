"""WebArena's observation: a page's accessibility tree as indented lines ``[id] role 'name' props``.

The tree comes from Chromium (CDP ``Accessibility.getFullAXTree``).  The rules follow WebArena's: ignored
nodes are skipped (their children move up a level); unnamed structural nodes (generic, list, paragraph,
...) are skipped the same way; a few noisy properties are left out; a ``StaticText`` line is dropped when
its text already appears in one of the three lines above it (it repeats a link's or a heading's name).

Element ids are numbered here, 1, 2, 3 ... in the order the lines are printed (WebArena printed Chromium's
own node ids, which change from run to run): the same page always reads the same, and an action names an
element by the id of the last observation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: properties WebArena leaves out of a line ("url" is new in recent Chromium: WebArena's never showed it)
IGNORED_PROPERTIES = frozenset({"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid", "url"})
#: roles whose nodes are skipped when they have no name (and no property left to show)
UNNAMED_SKIPPED_ROLES = frozenset({
    "generic", "img", "list", "strong", "paragraph", "banner", "navigation", "Section", "LabelText", "Legend",
    "listitem",
})
#: roles never printed: a text node's line boxes repeat its StaticText
NEVER_PRINTED_ROLES = frozenset({"InlineTextBox"})
#: how many kept lines above a StaticText may already hold its text
STATIC_TEXT_LOOKBACK = 3


@dataclass(frozen=True)
class Element:
    """A printed node: what an action's ``[id]`` refers to."""

    backend_id: int | None
    role: str
    name: str
    #: property name -> value as printed (``checked``, ``expanded``, ``required`` ...)
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Tree:
    """One observation of a page: its text and the elements its ids name."""

    text: str
    elements: dict[int, Element]

    def find(self, role: str, name: str, nth: int = 0) -> int | None:
        """The id of the ``nth`` element with this role and exact name, if printed."""
        found = [i for i, el in self.elements.items() if el.role == role and el.name == name]
        return found[nth] if len(found) > nth else None


Box = tuple[float, float, float, float]  # x, y, width, height in page coordinates


def _value(field: dict[str, Any] | None) -> Any:
    return (field or {}).get("value")


def _properties(node: dict[str, Any]) -> list[tuple[str, str]]:
    shown = []
    for prop in node.get("properties", []):
        value = _value(prop.get("value"))
        if prop.get("name") in IGNORED_PROPERTIES or value is None or isinstance(value, (dict, list)):
            continue
        shown.append((prop["name"], str(value)))
    return shown


def render(nodes: list[dict[str, Any]], *, boxes: dict[int, Box] | None = None, viewport: Box | None = None) -> Tree:
    """Render CDP accessibility nodes as WebArena's tree.  With ``boxes`` and ``viewport`` (page coordinates),
    nodes laid out wholly outside the viewport, of no width or height, or with no layout box at all are left
    out (their children are still visited), as WebArena's ``current_viewport_only`` leaves them out: its
    in-viewport ratio, ``overlap_width * overlap_height / width * height``, stays above its 0.6 threshold for
    any element that overlaps the viewport at all."""
    if not nodes:
        return Tree("", {})
    by_id = {node["nodeId"]: node for node in nodes}
    children_of: dict[str, list[str]] = {nid: list(node.get("childIds", [])) for nid, node in by_id.items()}
    root = next((n for n in nodes if not n.get("parentId")), nodes[0])

    lines: list[tuple[int, Element, str]] = []  # depth, element, text after the id
    stack: list[tuple[str, int]] = [(root["nodeId"], 0)]
    seen: set[str] = set()
    while stack:
        node_id, depth = stack.pop()
        node = by_id.get(node_id)
        if node is None or node_id in seen:
            continue
        seen.add(node_id)
        printed = _printed(node, boxes, viewport)
        if printed is not None:
            lines.append((depth, printed, _line(printed)))
        child_depth = depth + 1 if printed is not None else depth
        stack.extend((child, child_depth) for child in reversed(children_of.get(node_id, [])))

    kept: list[tuple[int, Element, str]] = []
    for depth, element, text in lines:
        if element.role == "StaticText":
            recent = [line for _, _, line in kept[-STATIC_TEXT_LOOKBACK:]]
            if not element.name.strip() or any(element.name in line for line in recent):
                continue
        kept.append((depth, element, text))

    elements: dict[int, Element] = {}
    out = []
    for number, (depth, element, text) in enumerate(kept, start=1):
        elements[number] = element
        out.append(f"{chr(9) * depth}[{number}] {text}")
    return Tree("\n".join(out), elements)


def _printed(node: dict[str, Any], boxes: dict[int, Box] | None, viewport: Box | None) -> Element | None:
    """The node as an element, or ``None`` where WebArena's rules skip it."""
    if node.get("ignored"):
        return None
    role = str(_value(node.get("role")) or "")
    name = str(_value(node.get("name")) or "")
    if not role or role in NEVER_PRINTED_ROLES:
        return None
    properties = _properties(node)
    if not name.strip():
        if role in UNNAMED_SKIPPED_ROLES and (not properties or role == "listitem"):
            return None
    backend = node.get("backendDOMNodeId")
    if boxes is not None and viewport is not None and role != "RootWebArea":
        if backend not in boxes or not _overlaps(boxes[backend], viewport):
            return None
    return Element(backend, role, name, tuple(properties))


def _line(element: Element) -> str:
    props = "".join(f" {k}: {v}" for k, v in element.properties)
    return f"{element.role} {element.name!r}{props}"


def _overlaps(box: Box, viewport: Box) -> bool:
    x, y, w, h = box
    vx, vy, vw, vh = viewport
    if w <= 0 or h <= 0:
        return False  # nothing to see
    return x < vx + vw and x + w > vx and y < vy + vh and y + h > vy
