"""The clipping pass over a read's nodes (logic; the real apps are in
packages/desktop/tests/test_clipped_boxes.py)."""

from __future__ import annotations

from viewfinder.core.element_clipping import clip_boxes
from viewfinder.core.element_sources import ElementNode, ElementRead, ElementSource
from viewfinder.core.geometry import Region

SHOWN = frozenset({"visible", "showing"})


def node(role: str, box: tuple[int, int, int, int] | None, *children: ElementNode,
         states: frozenset[str] = SHOWN, name: str = "") -> ElementNode:  # fmt: skip
    region = Region(x=box[0], y=box[1], width=box[2], height=box[3]) if box else None
    return ElementNode(role=role, name=name, box=region, states=states, children=list(children))


def boxes(root: ElementNode) -> dict[str, tuple[int, int, int, int] | None]:
    found = {}
    stack = [root]
    while stack:
        current = stack.pop()
        box = current.box
        found[current.name] = (box.x, box.y, box.width, box.height) if box else None
        stack.extend(current.children)
    return found


def test_a_row_is_cut_to_its_pane_and_a_row_outside_it_loses_its_box() -> None:
    rows = node(
        "list box", (0, 0, 285, 400),
        node("list item", (0, 234, 285, 34), node("push button", (0, 234, 285, 34), name="8"),
             name="row 8"),
        node("list item", (0, 268, 285, 34), node("push button", (0, 268, 285, 34), name="9"),
             name="row 9"),
        name="rows",
    )  # fmt: skip
    app = node("application", None, node("frame", (0, 0, 300, 320),
               node("scroll pane", (0, 0, 300, 240), rows, name="pane"), name="window"),
               states=frozenset(), name="app")  # fmt: skip
    clip_boxes([app])
    found = boxes(app)
    assert found["rows"] == (0, 0, 285, 240)
    assert found["row 8"] == found["8"] == (0, 234, 285, 6)
    assert found["row 9"] is None and found["9"] is None  # wholly clipped, children too
    assert found["window"] == (0, 0, 300, 320) and found["app"] is None


def test_an_element_not_showing_has_no_box_where_the_toolkit_reports_showing() -> None:
    hidden = node("push button", (10, 10, 50, 20), states=frozenset({"visible"}), name="h")
    app = node("application", None, node("frame", (0, 0, 300, 300), hidden, name="w"),
               states=frozenset(), name="app")  # fmt: skip
    clip_boxes([app])
    assert boxes(app)["h"] is None
    # a toolkit that never says showing: its boxes are only clipped
    plain = node("push button", (10, 10, 50, 20), states=frozenset(), name="p")
    other = node("application", None, node("frame", (0, 0, 40, 300), plain,
                 states=frozenset(), name="w"), states=frozenset(), name="app")  # fmt: skip
    clip_boxes([other])
    assert boxes(other)["p"] == (10, 10, 30, 20)


def test_popups_and_menus_are_not_cut_by_their_opener() -> None:
    popup = node("menu", (100, 60, 120, 200),
                 node("menu item", (100, 60, 120, 30), name="Copy"), name="combo menu")  # fmt: skip
    submenu = node("menu", (40, 0, 50, 20), node("menu item", (40, 22, 150, 30), name="Open"),
                   name="File")  # fmt: skip
    window = node("frame", (0, 0, 200, 80),
                  node("combo box", (10, 40, 80, 20), popup, name="combo"),
                  node("menu bar", (0, 0, 200, 20), submenu, name="bar"), name="w")  # fmt: skip
    app = node("application", None, window, states=frozenset(), name="app")
    clip_boxes([app])
    found = boxes(app)
    assert found["combo menu"] == (100, 60, 120, 200)  # off its window: a window of its own
    assert found["Copy"] == (100, 60, 120, 30)
    assert found["Open"] == (40, 22, 150, 30)  # a submenu's item, drawn outside its bar


class _Whole(ElementSource):
    name = "whole"

    def _read(self) -> ElementRead:
        button = node("push button", (0, 230, 100, 40), name="row")
        pane = node("scroll pane", (0, 0, 100, 240), button)
        return ElementRead(roots=[node("application", None, node("frame", (0, 0, 100, 300), pane))])


class _Clipped(_Whole):
    clips_boxes = True


def test_only_a_source_that_asks_has_its_boxes_clipped() -> None:
    assert _Whole().read().roots[0].children[0].children[0].children[0].box == Region(
        x=0, y=230, width=100, height=40
    )
    assert _Clipped().read().roots[0].children[0].children[0].children[0].box == Region(
        x=0, y=230, width=100, height=10
    )
