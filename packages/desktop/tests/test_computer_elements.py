"""The ComputerTool with elements, on a real Xvfb with accessibility buses and real apps.

A GTK form that logs what is done to it (gtk_click_form.py, run with the system
Python) and one display are shared by the module; the tool shows the screen at half
size, so every box in a snapshot is in the model's (halved) coordinates.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core import ElementTree, EventKind
from viewfinder.core.result_budget import ResultBudget, estimate_tokens
from viewfinder.core.testing import wait_until
from viewfinder.desktop import (
    ComputerTool,
    Desktop,
    DesktopConfigError,
    to_anthropic_tool_result,
    to_openai_input_items,
)
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
GTK_FORM = HERE / "gtk_click_form.py"
TK_FORM = HERE.parents[2] / "plugins" / "xvfb" / "tests" / "tk_form.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
RED, BLUE = (255, 0, 0), (0, 0, 255)
MARK_COLOURS = {(0xE6, 0x19, 0x4B), (0x3C, 0xB4, 0x4B), (0x43, 0x63, 0xD8), (0xF5, 0x82, 0x31)}
MARK_COLOURS |= {(0x91, 0x1E, 0xB4), (0x00, 0x80, 0x80), (0x9A, 0x63, 0x24)}
LINE = re.compile(
    r'^\s*(e\d+) (.+?)(?: "(.*?)")?(?: ="(.*?)")?(?: \[\w+\])* @(\d+),(\d+) (\d+)x(\d+)$'
)


class Form:
    def __init__(self, display: Display, app: LoggedApp, tool: ComputerTool) -> None:
        self.display, self.app, self.tool = display, app, tool


@pytest.fixture(scope="module")
def form() -> Iterator[Form]:
    with (
        Display(640, 480, accessibility=True) as display,
        LoggedApp([SYSTEM_PYTHON, str(GTK_FORM)], display.env()) as app,
        ComputerTool(display, target=(320, 240), elements=True) as tool,
    ):
        yield Form(display, app, tool)


def listed(text: str) -> dict[tuple[str, str], tuple[str, tuple[int, int, int, int]]]:
    """(role, name) -> (ref, box) of every element line of a snapshot."""
    found = {}
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            ref, role, name = match.group(1), match.group(2), match.group(3) or ""
            box = tuple(int(value) for value in match.groups()[4:])
            found[(role, name)] = (ref, box)
    return found  # type: ignore[return-value]


def centre(box: tuple[int, int, int, int]) -> tuple[int, int]:
    x, y, width, height = box
    return (x + width // 2, y + height // 2)


def close_to(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 8) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour, strict=True))


def ref_of(tool: ComputerTool, role: str, name: str) -> str:
    tree = tool.read_elements()
    (element,) = [e for e in tree.walk() if e.role == role and e.name == name]
    return element.ref


def test_the_snapshot_names_save_and_the_field_with_model_boxes_on_their_pixels(
    form: Form,
) -> None:
    result = form.tool({"action": "screenshot"})
    assert not result.is_error and result.screenshot is not None
    assert result.screenshot.size == (320, 240)
    text = result.elements_text or ""
    assert text.startswith("elements (atspi, screen pixels x0.5;")
    shown = listed(text)
    field = next(box for (role, _), (_, box) in shown.items() if role == "text")
    _, save = shown[("push button", "Save")]
    assert ("check box", "Remember me") in shown
    image = result.screenshot.to_pil().convert("RGB")
    for box, colour in ((field, RED), (save, BLUE)):
        x, y, width, height = box
        assert x + width <= 320 and y + height <= 240  # the model's coordinates
        # off the white words they hold: near their right end and near their left end
        assert close_to(image.getpixel((x + width - 3, y + height // 2)), colour), (box, text)
        assert close_to(image.getpixel((x + 1, y + height // 2)), colour), (box, text)
    assert isinstance(result.elements, ElementTree) and result.elements.source == "atspi"
    assert result.marked is None  # not asked for


def test_a_set_of_mark_image_draws_the_buttons_mark_on_its_box(form: Form) -> None:
    result = form.tool({"action": "screenshot", "set_of_mark": True})
    assert result.marked is not None and result.screenshot is not None
    assert result.marked.size == result.screenshot.size == (320, 240)
    ref, (x, y, width, height) = listed(result.elements_text or "")[("push button", "Save")]
    marked = result.marked.to_pil().convert("RGB")
    plain = result.screenshot.to_pil().convert("RGB")
    edge = (x, y + height // 2)  # the box's outline runs down its left edge
    assert close_to(plain.getpixel(edge), BLUE), plain.getpixel(edge)
    assert any(close_to(marked.getpixel(edge), colour, 2) for colour in MARK_COLOURS)
    assert close_to(marked.getpixel((x + width - 4, y + height // 2)), BLUE)  # inside: as it was
    # the tag with the ref's number sits on the box's top-left corner, in the mark's colour
    tag = marked.getpixel((x + 1, y - 2))
    assert any(close_to(tag, colour, 2) for colour in MARK_COLOURS), ref
    # each API's result carries the snapshot and the marked image after the screenshot
    block = to_anthropic_tool_result(result, "toolu_1")
    kinds = [part["type"] for part in block["content"]]
    assert kinds == ["text", "image", "text", "image"]
    assert block["content"][2]["text"] == result.elements_text
    assert block["content"][3]["source"]["data"] == result.marked.b64()
    items = to_openai_input_items(result, "call_1")
    assert items[0]["output"]["image_url"] == result.screenshot.data_url()
    kinds = [part["type"] for part in items[1]["content"]]
    assert kinds == ["input_text", "input_text", "input_image"]  # the text, the snapshot
    assert items[1]["content"][1]["text"] == result.elements_text
    assert items[1]["content"][2]["image_url"] == result.marked.data_url()


def test_a_click_by_element_lands_and_its_step_names_the_element(form: Form) -> None:
    ref = ref_of(form.tool, "push button", "Save")
    form.app.said()
    result = form.tool({"action": "left_click", "element": ref, "elements": False})
    assert not result.is_error, result.error
    form.app.wait_for("clicked Save")
    assert f"left_click on element {ref}" in result.text
    assert result.elements_text is None  # the action asked for none
    assert result.event is not None and result.event.element is not None
    assert (result.event.element.role, result.event.element.name) == ("push button", "Save")
    roles = [role for role, _ in result.event.element.path]
    assert roles[0] == "application" and ("frame", "GTK click form") in result.event.element.path
    assert "frame" in roles


def test_type_into_an_element_clicks_it_first(form: Form) -> None:
    ref = ref_of(form.tool, "text", "")
    form.app.said()
    result = form.tool({"type": "type", "element": ref, "text": " world"})
    assert not result.is_error, result.error
    assert "text hello world" in form.app.wait_for("text hello world")
    assert f"into element {ref}" in result.text
    # two steps: the click that focused the field (with its element), then the typing
    click, typed = (step.event for step in form.tool.trajectory().steps[-2:])
    assert click.kind is EventKind.CLICK and click.element is not None
    assert click.element.role == "text" and click.element.ref == ref
    assert (typed.kind, typed.text, typed.position) == (EventKind.TYPE, " world", None)


def test_a_pointer_step_at_a_coordinate_records_the_element_under_it(
    form: Form, tmp_path: Path
) -> None:
    shown = listed(form.tool({"action": "screenshot"}).elements_text or "")
    _, box = shown[("check box", "Remember me")]
    with ComputerTool(
        form.display, target=(320, 240), elements=True, record_to=tmp_path / "run"
    ) as tool:
        form.app.said()
        result = tool({"action": "left_click", "coordinate": list(centre(box))})
        assert not result.is_error, result.error
        form.app.wait_for("toggled Remember me")
    lines = (tmp_path / "run" / "manifest.jsonl").read_text().splitlines()
    event = json.loads(lines[-1])
    assert event["kind"] == "click"
    assert (event["element"]["role"], event["element"]["name"]) == ("check box", "Remember me")
    assert event["element"]["path"][0][0] == "application"
    assert event["element"]["box"]["width"] > 0  # screen pixels, as the event's point


def test_an_element_that_is_gone_is_a_typed_error_naming_it(form: Form) -> None:
    ref = ref_of(form.tool, "push button", "Remove me")
    form.app.said()
    assert not form.tool({"action": "left_click", "element": ref}).is_error
    form.app.wait_for("removed Remove me")
    again = form.tool({"action": "double_click", "element": ref})
    assert again.is_error and again.error_type == "ElementGoneError"
    assert again.error == (
        f"element {ref} (push button 'Remove me') is no longer on the screen; "
        "take a screenshot with elements to get fresh refs"
    )
    assert again.screenshot is not None  # the model sees the screen as it is now
    never = form.tool({"type": "click", "element": "e999"})
    assert never.is_error and never.error_type == "ElementGoneError"
    assert "element e999 is not on the screen" in (never.error or "")
    assert form.app.said() == []  # neither clicked anything
    assert not form.tool({"action": "screenshot"}).is_error  # the tool goes on


COVER = (
    "import sys, tkinter; root = tkinter.Tk(); root.title('cover'); "
    "root.geometry(sys.argv[1]); tkinter.Frame(root, background='#00ff00').pack("
    "fill='both', expand=True); root.after(300, lambda: print('ready', flush=True)); "
    "root.mainloop()"
)


def test_an_element_behind_another_window_is_not_clicked(form: Form) -> None:
    tree = form.tool.read_elements()
    (save,) = [e for e in tree.walk() if e.role == "push button" and e.name == "Save"]
    assert save.box is not None
    box = save.box
    geometry = f"{box.width + 20}x{box.height + 20}+{box.x - 10}+{box.y - 10}"
    form.app.said()
    with LoggedApp([sys.executable, "-c", COVER, geometry], form.display.env()):
        covered = form.tool({"action": "left_click", "element": save.ref})
        assert covered.is_error and covered.error_type == "ElementCoveredError"
        assert (covered.error or "").startswith(
            f"element {save.ref} (push button 'Save') cannot be acted on at its middle: "
            "window 'cover' ("
        )
        assert (covered.error or "").endswith(
            "of another application is in front there; nothing was done. Close or move "
            "what is in front, or act on an element that shows"
        )
    assert form.app.said() == []  # the button under the window was not clicked
    uncovered = form.tool({"action": "left_click", "element": save.ref})
    assert not uncovered.is_error, uncovered.error
    form.app.wait_for("clicked Save")


@pytest.mark.parametrize(
    ("action", "wrong"),
    [
        ({"action": "left_click", "element": "e2", "coordinate": [5, 5]}, "together with"),
        ({"type": "click", "element": "e2", "x": 5, "y": 5}, "together with"),
        ({"action": "left_click", "element": "Save"}, "is not an element ref"),
        ({"action": "screenshot", "set_of_mark": "yes"}, "must be true or false"),
    ],
)
def test_bad_element_input_is_an_input_error(
    form: Form, action: dict[str, object], wrong: str
) -> None:
    result = form.tool(action)
    assert result.is_error and result.error_type == "ActionInputError"
    assert wrong in (result.error or "")


def test_a_tk_app_and_a_display_without_buses_give_an_empty_snapshot_with_the_reason() -> None:
    with (
        Display(320, 240, accessibility=True) as display,
        LoggedApp([sys.executable, str(TK_FORM)], display.env()),
        ComputerTool(display, elements=True) as tool,
    ):
        result = tool({"action": "screenshot"})
        assert not result.is_error
        text = result.elements_text or ""
        assert "'Tk form' (Tk)" in text and "none:" in text
        # an action on an element of such a screen says the element is not there
        gone = tool({"action": "left_click", "element": "e1"})
        assert gone.is_error and gone.error_type == "ElementGoneError"
        assert "no elements can be read there now: " in (gone.error or "")
        assert "'Tk form' (Tk)" in (gone.error or "")
    with Display(160, 120) as bare, ComputerTool(bare, elements=True) as tool:
        result = tool({"action": "left_click", "coordinate": [5, 5], "set_of_mark": True})
        assert not result.is_error
        assert "none:" in (result.elements_text or "") and "accessibility bus" in (
            result.elements_text or ""
        )
        assert result.marked is not None
        assert result.marked.size == (160, 120)


def desktop_act(form: Form, action: str, *options: str) -> Any:
    return CliRunner().invoke(
        build_app(), ["desktop", "act", action, "-d", form.display.name, *options]
    )


def test_desktop_act_lists_elements_and_clicks_one_by_ref(form: Form, tmp_path: Path) -> None:
    listing = desktop_act(form, '{"action": "screenshot"}', "--elements")
    assert listing.exit_code == 0, listing.output
    ref, box = listed(listing.output)[("push button", "Save")]
    form.app.said()
    clicked = desktop_act(form, '{"action": "left_click"}', "--element", ref)
    assert clicked.exit_code == 0, clicked.output
    form.app.wait_for("clicked Save")
    assert f"left_click on element {ref}" in clicked.output

    marked = tmp_path / "marked.png"
    shot = desktop_act(form, '{"action": "screenshot"}', "--set-of-mark", "-o", str(marked))
    assert shot.exit_code == 0, shot.output
    x, y, _, height = box  # the screen's own size: boxes are screen pixels here
    pixel = Image.open(marked).convert("RGB").getpixel((x, y + height // 2))
    assert any(close_to(pixel, colour, 2) for colour in MARK_COLOURS)

    gone = desktop_act(form, '{"type": "click"}', "--element", "e999")
    assert gone.exit_code == 2
    assert "element e999 is not on the screen" in gone.output
    both = desktop_act(form, '{"action": "left_click", "coordinate": [3, 3]}', "--element", ref)
    assert both.exit_code == 2 and "together with coordinate" in both.output
    assert form.app.said() == []


def test_the_snapshot_and_the_marked_image_fit_a_small_clients_budget(form: Form) -> None:
    budget = ResultBudget("tiny", text_tokens=160, result_bytes=40_000)
    with ComputerTool(form.display, elements=True, client=budget) as tool:
        result = tool({"action": "screenshot", "set_of_mark": True})
    assert not result.is_error and result.screenshot and result.marked
    text = result.elements_text or ""
    assert estimate_tokens(text) <= 60  # about a quarter of the client's text
    assert estimate_tokens(result.text + "\n" + text) <= budget.text_tokens
    assert "more elements left out (token budget)" in text
    # both images share what the result may carry (base64 counts 4 bytes per 3)
    assert len(result.screenshot.data) + len(result.marked.data) <= 40_000 * 3 // 4
    assert result.marked.size == result.screenshot.size == (640, 480)


def test_a_desktop_with_accessibility_gives_its_apps_the_buses() -> None:
    form = [SYSTEM_PYTHON, str(GTK_FORM)]
    with Desktop(size=(480, 360), apps=[form], accessibility=True) as desktop:
        tool = desktop.computer(elements=True)
        found = wait_until(
            lambda: 'push button "Save"' in (tool({"action": "screenshot"}).elements_text or ""),
            "the form's elements",
        )
        assert found
    with pytest.raises(DesktopConfigError, match="accessibility=True needs a display"):
        Desktop(":5", accessibility=True)
