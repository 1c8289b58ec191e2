"""The desktop tools' elements through ``viewfinder mcp`` and the MCP SDK's own client.

A real Xvfb with accessibility buses runs a GTK form that logs its clicks
(packages/desktop/tests/gtk_click_form.py, system Python); one server on that display
(``--display``) is shared by the module. Refs from the ``screenshot`` tool name the same
elements in the ``computer`` tool's calls (one element source per session).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.core.testing import wait_until
from viewfinder.desktop.testing import LoggedApp
from viewfinder.mcp.testing import StdioServer, close_to, images_of, text_of
from viewfinder.xvfb import Display

ROOT = Path(__file__).resolve().parents[3]
GTK_FORM = ROOT / "packages" / "desktop" / "tests" / "gtk_click_form.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
RED, BLUE = (255, 0, 0), (0, 0, 255)


class Served:
    def __init__(self, app: LoggedApp, server: StdioServer) -> None:
        self.app, self.server = app, server


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with (
        Display(640, 480, accessibility=True) as display,
        LoggedApp([SYSTEM_PYTHON, str(GTK_FORM)], display.env()) as app,
    ):
        server = StdioServer(tmp_path_factory.mktemp("mcp"), "--display", display.name, cwd=ROOT)
        try:
            yield Served(app, server)
        finally:
            server.close()


def box_of(text: str, role: str, name: str) -> tuple[str, tuple[int, int, int, int]]:
    found = re.search(rf'(e\d+) {role} "{name}"(?: \[\w+\])* @(\d+),(\d+) (\d+)x(\d+)', text)
    assert found, f"no {role} {name!r} in {text}"
    x, y, width, height = (int(value) for value in found.groups()[1:])
    return found.group(1), (x, y, width, height)


def test_the_tool_schemas_offer_elements_set_of_mark_and_element(served: Served) -> None:
    tools = {tool.name: tool for tool in served.server.connection.list_tools().tools}
    computer = tools["computer"].input_schema["properties"]
    screenshot = tools["screenshot"].input_schema["properties"]
    assert {"element", "elements", "set_of_mark"} <= set(computer)
    assert {"elements", "set_of_mark"} <= set(screenshot)
    assert "element='e12'" in (tools["computer"].description or "")


def test_a_screenshot_lists_the_elements_with_boxes_on_their_pixels(served: Served) -> None:
    result = served.server.call("screenshot", {"elements": True, "set_of_mark": True})
    assert not result.is_error, text_of(result)
    text = text_of(result)
    _, save = box_of(text, "push button", "Save")
    field = re.search(r"e\d+ text =\"[^\"]*\"(?: \[\w+\])* @(\d+),(\d+) (\d+)x(\d+)", text)
    assert field, text
    shot, marked = images_of(result)
    fx, fy, fw, fh = (int(value) for value in field.groups())
    for (x, y, width, height), colour in ((save, BLUE), ((fx, fy, fw, fh), RED)):
        assert close_to(shot.getpixel((x + width - 3, y + height // 2)), colour)
    x, y, _, height = save
    assert not close_to(marked.getpixel((x, y + height // 2)), BLUE)  # the mark's outline
    assert close_to(shot.getpixel((x, y + height // 2)), BLUE)


def test_a_click_by_element_lands_and_a_stale_ref_is_an_error_naming_it(served: Served) -> None:
    ref, _ = box_of(
        text_of(served.server.call("screenshot", {"elements": True})), "push button", "Save"
    )
    served.app.said()
    result = served.server.call("computer", {"action": "left_click", "element": ref})
    assert not result.is_error, text_of(result)
    served.app.wait_for("clicked Save")
    assert f"left_click on element {ref}" in text_of(result)

    gone = served.server.call("computer", {"action": "left_click", "element": "e999"})
    assert gone.is_error
    assert "element e999 is not on the screen" in text_of(gone)
    both = served.server.call(
        "computer", {"action": "left_click", "element": ref, "coordinate": [5, 5]}
    )
    assert both.is_error and "together with coordinate" in text_of(both)
    assert served.app.said() == []


def test_a_computer_result_carries_the_snapshot_and_marks_when_asked(served: Served) -> None:
    result = served.server.call(
        "computer", {"action": "screenshot", "elements": True, "set_of_mark": True}
    )
    assert not result.is_error, text_of(result)
    assert 'push button "Save"' in text_of(result)
    assert len(images_of(result)) == 2
    plain = served.server.call("computer", {"action": "screenshot"})
    assert "push button" not in text_of(plain) and len(images_of(plain)) == 1


def test_with_elements_the_sessions_own_desktop_publishes_them_in_every_result(
    tmp_path: Path,
) -> None:
    log = tmp_path / "form.log"
    app = f"{SYSTEM_PYTHON} {GTK_FORM} --log {log}"
    server = StdioServer(tmp_path, "--elements", "--size", "640x480", "--app", app, cwd=ROOT)
    try:
        # the session's display starts with its buses; the app publishes its elements
        found = wait_until(
            lambda: re.search(
                r'(e\d+) push button "Save"',
                text_of(server.call("computer", {"action": "screenshot"})),
            ),
            "the snapshot to list the Save button",
        )
        clicked = server.call("computer", {"action": "left_click", "element": found.group(1)})
        assert not clicked.is_error, text_of(clicked)
        assert 'push button "Save"' in text_of(clicked)  # unasked: the server's option
        wait_until(lambda: "clicked Save" in log.read_text(), "the click by element to land")
    finally:
        server.close()
