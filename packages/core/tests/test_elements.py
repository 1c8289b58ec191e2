"""The element model, the element source hook and facade, refs, snapshot and marks.

The sources here are in-process plugins standing in for a screen, to test the logic
around sources; the real sources are tested with real apps in the xvfb and cdp plugins.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from PIL import Image

from viewfinder.core import (
    BackendOptionError,
    Element,
    ElementAnchor,
    ElementSourceError,
    ElementTree,
    Event,
    EventKind,
    PluginError,
    Point,
    Region,
    Screenshot,
    UnknownElementSourceError,
    element_sources,
    elements,
    get_element_source,
    hookimpl,
    set_of_mark,
    snapshot_text,
)
from viewfinder.core.element_sources import ElementNode, ElementRead, ElementSource, RefTable

Register = Callable[..., str]


def form(save_name: str = "Save", extra: bool = False) -> list[ElementNode]:
    """A window with a field and two like-named buttons (and maybe a new label first)."""
    children = [
        ElementNode(
            "text", "", "hello", frozenset({"showing"}), Region(x=10, y=10, width=200, height=30)
        ),
        ElementNode("push button", save_name, box=Region(x=10, y=50, width=80, height=30)),
        ElementNode("push button", save_name, box=Region(x=100, y=50, width=80, height=30)),
    ]
    if extra:
        children.insert(0, ElementNode("label", "New", box=Region(x=0, y=0, width=5, height=5)))
    window = ElementNode(
        "frame", "Form", box=Region(x=0, y=0, width=300, height=200), children=children
    )
    return [ElementNode("application", "app", children=[window])]


class FormSource(ElementSource):
    """Reads :func:`form`, changed by the test between reads."""

    name = "form"
    priority = 5

    def __init__(self, window: str = "") -> None:
        super().__init__()
        self.nodes = form()

    def _read(self) -> ElementRead:
        return ElementRead(self.nodes)


class FormPlugin:
    @hookimpl
    def viewfinder_register_element_sources(self, register: Any) -> None:
        register("form", FormSource)


@pytest.fixture
def form_source(viewfinder_plugin: Register) -> None:
    viewfinder_plugin(FormPlugin(), name="form-plugin")


def test_viewfinder_register_element_sources_registers_a_source(form_source: None) -> None:
    assert element_sources()["form"].plugin == "form-plugin"
    tree = elements("form")
    assert [(e.ref, e.role, e.name) for e in tree.walk()] == [
        ("e1", "application", "app"),
        ("e2", "frame", "Form"),
        ("e3", "text", ""),
        ("e4", "push button", "Save"),
        ("e5", "push button", "Save"),
    ]
    save = tree.find("e4")
    assert (
        save is not None
        and save.parent == "e2"
        and save.box == Region(x=10, y=50, width=80, height=30)
    )
    assert tree.find("e3") is not None and tree.find("e3").value == "hello"  # type: ignore[union-attr]


def test_refs_follow_the_element_path_across_reads(form_source: None) -> None:
    with get_element_source("form") as source:
        assert isinstance(source, FormSource)
        first = {e.ref: (e.role, e.name) for e in source.read().walk()}
        # a label added before them and a moved button: the refs stay
        source.nodes = form(extra=True)
        source.nodes[0].children[0].children[3].box = Region(x=120, y=60, width=80, height=30)
        again = source.read()
        assert {e.ref: (e.role, e.name) for e in again.walk() if e.ref in first} == first
        assert again.find("e4").box.x == 10  # type: ignore[union-attr]
        assert again.find("e5").box.x == 120  # type: ignore[union-attr]
        label = next(e for e in again.walk() if e.role == "label")
        assert label.ref == "e6"  # new elements get new refs
        # a renamed button is another element
        source.nodes = form(save_name="Store")
        renamed = [e.ref for e in source.read().walk() if e.name == "Store"]
        assert renamed == ["e7", "e8"]


def test_the_best_source_is_picked_by_its_options(form_source: None) -> None:
    assert elements(window="x").source == "form"
    # an option no source takes
    with pytest.raises(ElementSourceError, match="no element source can read here"):
        elements(colour="red")
    with pytest.raises(BackendOptionError, match="element source 'form' takes no option 'colour'"):
        elements("form", colour="red")


def test_an_unknown_source_is_a_typed_error_listing_the_registered(form_source: None) -> None:
    with pytest.raises(UnknownElementSourceError, match=r"'nope'.*form"):
        elements("nope")


def test_a_plugin_that_registers_junk_is_named(viewfinder_plugin: Register) -> None:
    class NotCallable:
        @hookimpl
        def viewfinder_register_element_sources(self, register: Any) -> None:
            register("junk", 42)

    viewfinder_plugin(NotCallable(), name="junk-plugin")
    with pytest.raises(PluginError, match=r"junk-plugin.*not callable"):
        element_sources()


def test_a_factory_that_makes_no_source_is_named(viewfinder_plugin: Register) -> None:
    class MakesAString:
        @hookimpl
        def viewfinder_register_element_sources(self, register: Any) -> None:
            register("string", lambda: "a tree")

    viewfinder_plugin(MakesAString(), name="string-plugin")
    with pytest.raises(PluginError, match=r"string-plugin.*not a viewfinder"):
        elements("string")


def test_two_plugins_claiming_one_name_are_both_named(
    viewfinder_plugin: Register, form_source: None
) -> None:
    viewfinder_plugin(FormPlugin(), name="second-form-plugin")
    with pytest.raises(PluginError, match="both 'second-form-plugin' and 'form-plugin'"):
        element_sources()


def test_an_element_tree_round_trips_through_json(form_source: None) -> None:
    tree = elements("form")
    assert ElementTree.model_validate_json(tree.model_dump_json()) == tree
    assert json.loads(tree.model_dump_json())["roots"][0]["children"][0]["name"] == "Form"


def tree_of(*nodes: Element, reason: str = "") -> ElementTree:
    return ElementTree(source="test", roots=nodes, reason=reason)


def test_the_snapshot_keeps_visible_interactive_or_named_elements() -> None:
    button = Element(
        ref="e3", role="push button", name="Save", box=Region(x=10, y=50, width=80, height=30)
    )
    repeat = Element(
        ref="e4", role="static text", name="Save", box=Region(x=20, y=55, width=30, height=10)
    )
    button = button.model_copy(update={"children": (repeat,)})
    hidden = Element(ref="e5", role="push button", name="Hidden")  # no box: not on screen
    filler = Element(ref="e6", role="filler", box=Region(x=0, y=0, width=5, height=5))
    field = Element(
        ref="e7",
        role="entry",
        value="hi",
        states=frozenset({"focused"}),
        box=Region(x=1, y=2, width=3, height=4),
    )
    window = Element(
        ref="e2", role="frame", name="Form", box=Region(x=0, y=0, width=300, height=200),
        children=(button, hidden, filler, field),
    )  # fmt: skip
    text = snapshot_text(tree_of(window))
    assert text.splitlines() == [
        "elements (test, screen pixels; 3 of 6 shown)",
        'e2 frame "Form" @0,0 300x200',
        '  e3 push button "Save" @10,50 80x30',
        '  e7 entry ="hi" [focused] @1,2 3x4',
    ]
    half = snapshot_text(tree_of(window), scale=0.5)
    assert '  e3 push button "Save" @5,25 40x15' in half.splitlines()
    assert "screen pixels x0.5" in half


def test_the_snapshot_keeps_to_its_token_budget() -> None:
    buttons = tuple(
        Element(
            ref=f"e{i}",
            role="push button",
            name=f"Button number {i}",
            box=Region(x=i, y=0, width=10, height=10),
        )
        for i in range(1, 400)
    )
    text = snapshot_text(tree_of(*buttons), max_tokens=300)
    from viewfinder.core.result_budget import estimate_tokens

    assert estimate_tokens(text) <= 300
    assert text.splitlines()[-1].endswith("more elements left out (token budget)")
    assert 'e1 push button "Button number 1"' in text


def test_an_empty_tree_says_why() -> None:
    text = snapshot_text(tree_of(reason="window 'tk' (Tk) exposes no accessibility tree"))
    assert text.splitlines()[-1] == "none: window 'tk' (Tk) exposes no accessibility tree"


@pytest.mark.parametrize(("scale", "tokens"), [(0, 100), (-1, 100), (1, 5)])
def test_the_snapshot_refuses_a_bad_scale_or_budget(scale: float, tokens: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        snapshot_text(tree_of(), scale=scale, max_tokens=tokens)


def test_set_of_mark_draws_numbered_boxes_where_the_elements_are() -> None:
    shot = Screenshot.from_image(Image.new("RGB", (200, 100), "white"), source="test")
    button = Element(
        ref="e12", role="push button", name="Save", box=Region(x=40, y=40, width=100, height=40)
    )
    marked = set_of_mark(shot, tree_of(button)).to_pil()
    border = marked.getpixel((40, 60))
    assert border != (255, 255, 255) and border == marked.getpixel((139, 60))
    assert marked.getpixel((90, 60)) == (255, 255, 255)  # the inside is left as it was
    label = marked.crop((40, 20, 60, 40))  # the number sits on a filled tag above the box
    colours = {colour for _, colour in label.getcolors() or []}
    assert border in colours and (255, 255, 255) in colours  # white digits on it
    # on a half-size screenshot the box is drawn at half the place
    small = Screenshot.from_image(Image.new("RGB", (100, 50), "white"), source="test")
    halved = set_of_mark(small, [button], scale=0.5).to_pil()
    assert halved.getpixel((20, 30)) == border and halved.getpixel((45, 30)) == (255, 255, 255)


def form_tree(**options: Any) -> ElementTree:
    return ElementTree(source="form", roots=RefTable().build(form(**options)))


def test_the_element_at_a_point_is_the_deepest_that_holds_it_and_acts() -> None:
    tree = form_tree()
    second = tree.element_at(120, 60)
    assert second is not None and (second.role, second.box) == (
        "push button",
        Region(x=100, y=50, width=80, height=30),
    )
    assert tree.element_at(5, 150).role == "frame"  # type: ignore[union-attr]
    assert tree.element_at(299, 199) is not None and tree.element_at(300, 200) is None
    label = ElementNode("label", "Go", box=Region(x=20, y=55, width=20, height=10))
    nodes = form()
    nodes[0].children[0].children[1].children.append(label)
    inner = ElementTree(source="form", roots=RefTable().build(nodes)).element_at(25, 58)
    assert inner is not None and inner.role == "push button"  # the button, not its label


def test_an_anchor_finds_its_element_again_where_it_moved_and_not_a_renamed_one() -> None:
    tree = form_tree()
    first = tree.element_at(20, 60)
    assert first is not None
    anchor = tree.anchor(first)
    assert anchor.path == (("application", "app"), ("frame", "Form"))
    assert anchor.describe() == "push button 'Save'"
    assert ElementAnchor.model_validate_json(anchor.model_dump_json()) == anchor
    moved = form()
    moved[0].children[0].children[1].box = Region(x=10, y=170, width=80, height=30)
    found = ElementTree(source="form", roots=RefTable().build(moved)).locate(anchor)
    assert len(found) == 2  # two buttons named Save: ambiguous, the caller must not pick
    assert form_tree(save_name="Keep").locate(anchor) == []
    event = Event(kind=EventKind.CLICK, position=Point(x=20, y=60), element=anchor)
    assert Event.from_manifest(event.to_manifest(3)) == event


def test_the_snapshot_leaves_out_values_that_say_nothing_new() -> None:
    box = Region(x=0, y=0, width=50, height=20)
    nodes = [
        ElementNode("text", "", "\ufffc\ufffc", box=box),  # only embedded children
        ElementNode("push button", "Go", "Go", box=box),  # the value repeats the name
        ElementNode("text", "Search", "a\ufffcb", box=box),
    ]
    text = snapshot_text(ElementTree(source="t", roots=RefTable().build(nodes)))
    assert text.splitlines()[1:] == [
        "e1 text @0,0 50x20",
        'e2 push button "Go" @0,0 50x20',
        'e3 text "Search" ="a b" @0,0 50x20',
    ]


def test_a_read_pauses_the_cycle_collector_and_gives_it_back_whatever_happens() -> None:
    import gc

    seen: list[bool] = []

    class Probe(ElementSource):
        name = "probe"
        fail = False

        def _read(self) -> ElementRead:
            seen.append(gc.isenabled())
            if self.fail:
                raise RuntimeError("the app went away")
            return ElementRead([ElementNode(role="push button", name="OK")])

    assert gc.isenabled()
    probe = Probe()
    assert [e.name for e in probe.read().walk()] == ["OK"]
    probe.fail = True
    with pytest.raises(RuntimeError):
        probe.read()
    assert seen == [False, False] and gc.isenabled()
    gc.disable()  # a caller that turned it off keeps it off
    try:
        Probe().read()
        assert not gc.isenabled()
    finally:
        gc.enable()
