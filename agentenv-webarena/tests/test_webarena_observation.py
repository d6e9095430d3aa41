"""The observation: WebArena's accessibility tree rendered from Chromium's nodes, on hand-built nodes and on
the bundled sites' pages (the full page and the viewport only)."""

from __future__ import annotations

from agentenv_webarena.accessibility import render
from webarena_helpers import element, task_index


def node(nid, role, name="", children=(), parent=None, ignored=False, props=(), backend=None):
    return {
        "nodeId": nid, "role": {"value": role}, "name": {"value": name}, "childIds": list(children),
        **({"parentId": parent} if parent else {}), "ignored": ignored, "backendDOMNodeId": backend or int(nid),
        "properties": [{"name": k, "value": {"value": v}} for k, v in props],
    }


NODES = [
    node("1", "RootWebArea", "Shop", ["2"], props=[("focusable", True), ("focused", True), ("url", "http://x/")]),
    node("2", "none", "", ["3", "4", "9"], parent="1", ignored=True),
    node("3", "heading", "Welcome", ["5"], parent="2", props=[("level", 1)]),
    node("5", "StaticText", "Welcome", ["6"], parent="3"),
    node("6", "InlineTextBox", "Welcome", parent="5"),
    node("4", "generic", "", ["7", "8"], parent="2"),
    node("7", "link", "Chef Knife", ["10"], parent="4", props=[("focusable", True)]),
    node("10", "StaticText", "Chef Knife", parent="7"),
    node("8", "textbox", "Search", parent="4", props=[("editable", "plaintext"), ("required", False), ("invalid", "false")]),
    node("9", "paragraph", "", ["11"], parent="2"),
    node("11", "StaticText", "In stock (7 left)", parent="9"),
]


def test_the_tree_follows_webarenas_rules():
    tree = render(NODES)
    assert tree.text == (
        "[1] RootWebArea 'Shop' focused: True\n"
        "\t[2] heading 'Welcome'\n"  # the ignored node is skipped; its children move up
        "\t[3] link 'Chef Knife'\n"  # the unnamed generic is skipped; the link's own text repeats its name
        "\t[4] textbox 'Search' required: False\n"  # editable, invalid (and focusable, level, url) are left out
        "\t[5] StaticText 'In stock (7 left)'"
    )
    assert tree.elements[3].role == "link" and tree.elements[3].backend_id == 7
    assert tree.find("textbox", "Search") == 4 and tree.find("link", "Nope") is None


def test_a_name_with_quotes_is_written_as_python_writes_it():
    tree = render([node("1", "RootWebArea", "It's \"here\"", ["2"]), node("2", "button", "Don't", parent="1")])
    assert tree.text.splitlines()[1] == "\t[2] button \"Don't\""


def test_nodes_outside_the_viewport_are_left_out_but_not_their_visible_children():
    """WebArena's rule: a node with no layout box, or of no width or height, is left out, as is one wholly
    outside the viewport; the root always stays."""
    boxes = {3: (0, 10, 100, 20), 5: (0, 10, 90, 20), 7: (0, 900, 100, 20), 10: (0, 900, 90, 20), 8: (0, 700, 100, 40),
             11: (0, 2000, 10, 10)}
    tree = render(NODES, boxes=boxes, viewport=(0, 0, 1280, 720))
    assert [e.role for e in tree.elements.values()] == ["RootWebArea", "heading", "textbox"]
    scrolled = render(NODES, boxes=boxes, viewport=(0, 720, 1280, 720))
    assert [e.role for e in scrolled.elements.values()] == ["RootWebArea", "link", "textbox"]
    unlaid = render(NODES, boxes={**boxes, 3: (0, 10, 100, 0), 5: (0, 10, 0, 20)}, viewport=(0, 0, 1280, 720))
    assert [e.role for e in unlaid.elements.values()] == ["RootWebArea", "textbox"]  # the heading has no height
    del boxes[8]
    assert [e.role for e in render(NODES, boxes=boxes, viewport=(0, 0, 1280, 720)).elements.values()] == [
        "RootWebArea", "heading"]  # the textbox has no layout box


def test_the_first_observation_reads_as_webarenas(session, runtime):
    index = task_index("What is the price of")
    first = session.reset(index).observation
    lines = first.splitlines()
    assert lines[0] == "OBSERVATION:"
    assert lines[1] == "Tab 0 (current): Home - Harbor Market"
    assert lines[3] == "[1] RootWebArea 'Home - Harbor Market' focused: True"
    assert "\t[2] link 'Harbor Market'" in lines
    assert any(line.endswith("searchbox 'Search'") for line in lines)
    assert lines[-3] == f"URL: {runtime.sites.urls['shopping']}/"
    assert lines[-2] == f"OBJECTIVE: {session.env.config['intent']}"
    assert lines[-1] == "PREVIOUS ACTION: None"
    numbers = [int(line.strip().split("]")[0][1:]) for line in lines if line.strip().startswith("[")]
    assert numbers == list(range(1, len(numbers) + 1))
    assert session.reset(index).observation == first  # the same task reads the same


def test_only_the_viewport_when_asked(session):
    session.reset(task_index("What is the status of order"))  # the admin panel, logged in
    session.step(f"```click [{element(session, 'link', 'Products')}]```")
    full = session.env.tree
    assert full.find("link", "Northwind Marble Run") is not None  # the grid's last row, far below the fold
    session.env.viewport_only = True
    top = session.step("```scroll [up]```").observation
    assert session.env.tree.find("link", "Northwind Marble Run") is None
    assert session.env.tree.find("link", "Products") is not None
    assert len(top.splitlines()) < len(full.text.splitlines())
    for _ in range(6):
        session.step("```scroll [down]```")
    assert session.env.tree.find("link", "Northwind Marble Run") is not None
    assert session.env.tree.find("link", "Products") is None  # the menu scrolled out of view
