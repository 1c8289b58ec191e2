"""Double and triple clicks, through both vendors' action shapes, counted by a real
Chromium shown on a display (OpenAI's actions have no triple click), and drags that
select text or drop an element on a target there.

Chromium counts a press as the next click of a multi-click only when its X time differs
from the press before (xvfb/multiclick.py); presses sent back to back were one click to
it, so a double-click put the caret in the word instead of selecting it. The page logs
every mouse event with its target and click count; what it selected is read over CDP.

A ``draggable`` element's drag runs in a loop Chromium starts once the page answered
the first motions, and all motions sent before are gone for it: the release waits for
that start and shows the loop the drop point (xvfb/dnd.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from viewfinder.cdp import LoopThread, connect, launch_chromium
from viewfinder.cdp.session import CDPSession
from viewfinder.cdp.testing import serve_pages
from viewfinder.core.testing import wait_until
from viewfinder.desktop import ComputerTool
from viewfinder.xvfb import Display

PAGE = """<!doctype html><title>clicks</title>
<body style="margin:0;font:30px monospace;background:#fff">
  <input id=field value="hello world" style="position:absolute;left:20px;top:20px;
    width:400px;font:30px monospace;border:0;padding:0;background:#eee">
  <div style="position:absolute;left:20px;top:100px">
    <div id=line1>first line here</div>
    <div id=line2>second line here</div>
    <div id=line3>third line here</div>
  </div>
  <div id=item draggable=true style="position:absolute;left:20px;top:300px;width:100px;
    height:60px;background:#00f"></div>
  <div id=bin style="position:absolute;left:300px;top:300px;width:150px;height:100px;
    background:#0f0"></div>
  <script>
    window.log = [];
    for (const type of ["mousedown", "mouseup", "click", "dblclick"])
      addEventListener(type, e => log.push([type, e.target.id, e.detail]));
    item.addEventListener("dragstart", e => {
      e.dataTransfer.setData("text/plain", "moved");
      log.push(["dragstart", e.target.id, 0]);
    });
    bin.addEventListener("dragover", e => e.preventDefault());
    bin.addEventListener("drop", e => {
      e.preventDefault();
      log.push(["drop", e.target.id, e.dataTransfer.getData("text/plain")]);
    });
  </script>
</body>"""


class Page:
    """The page in a Chromium on ``display``, read over one CDP session."""

    def __init__(self, display: Display, url: str) -> None:
        self.browser = launch_chromium(
            headless=False,
            width=800,
            height=600,
            extra_args=["--ozone-platform=x11", "--window-position=0,0", "--test-type"],
            env=display.env(),
        )
        self._loop = LoopThread(name="multi-clicks-test")
        self._connection: Any = None
        self._session: Any = None
        try:
            self._loop.run(self._attach(url))
        except BaseException:
            self.close()
            raise

    async def _attach(self, url: str) -> None:
        self._connection = await connect(self.browser.ws_url)
        targets = await self._connection.call("Target.getTargets")
        page = next(t["targetId"] for t in targets["targetInfos"] if t["type"] == "page")
        self._session = await CDPSession.attach(self._connection, page)
        await self._session.navigate(url)

    def evaluate(self, expression: str) -> Any:
        return self._loop.run(self._session.evaluate(expression))

    def screen_point(self, expression: str) -> tuple[int, int]:
        """The screen point of the page point ``expression`` makes (``[x, y]``): the
        window sits at 0,0, its page below the browser's own bars."""
        x, y = self.evaluate(expression)
        top = self.evaluate("outerHeight - innerHeight")
        return round(x), round(y + top)

    def reset(self) -> None:
        """No selection, no focus, an empty log, the field as it began."""
        self.evaluate(
            "field.value='hello world';field.blur();getSelection().removeAllRanges();log.length=0"
        )

    def log(self) -> list[list[Any]]:
        return self.evaluate("log")

    def close(self) -> None:
        if self._connection is not None:
            self._loop.run(self._connection.close())
        self._loop.stop()
        self.browser.stop()


@pytest.fixture(scope="module")
def page() -> Iterator[tuple[Display, Page]]:
    with Display(800, 600) as display, serve_pages({"/": PAGE}) as base:
        shown = Page(display, f"{base}/")
        try:
            wait_until(
                lambda: shown.evaluate("document.readyState == 'complete' && 'log' in window"),
                "the page loaded",
            )
            yield display, shown
        finally:
            shown.close()


@pytest.fixture
def tool(page: tuple[Display, Page]) -> Iterator[ComputerTool]:
    display, shown = page
    with ComputerTool(display) as computer:
        assert computer.model_size == (800, 600)  # the model's points are the screen's
        # a click on the blank page first: the last test's clicks were at the same point
        # and maybe within the double-click time, and the next one would count on from them
        blank = shown.screen_point("[700, 450]")
        assert not computer({"action": "left_click", "coordinate": list(blank)}).is_error
        wait_until(lambda: (log := shown.log()) and log[-1][0] == "click", "the blank click")
        shown.reset()
        yield computer


def word_world(shown: Page) -> tuple[int, int]:
    """The middle of "world" in the field (monospace: six characters in, 2.5 more)."""
    return shown.screen_point(
        "(() => { const box = field.getBoundingClientRect();"
        " const c = document.createElement('canvas').getContext('2d');"
        " c.font = getComputedStyle(field).font;"
        " return [box.left + c.measureText('hello wo').width + c.measureText('r').width / 2,"
        " box.top + box.height / 2]; })()"
    )


def middle_of(shown: Page, element: str, first: int, last: int) -> tuple[int, int]:
    """The middle of characters ``first`` to ``last`` of ``element``'s text."""
    return shown.screen_point(
        f"(() => {{ const r = document.createRange(); const t = {element}.firstChild;"
        f" r.setStart(t, {first}); r.setEnd(t, {last}); const b = r.getBoundingClientRect();"
        " return [b.left + b.width / 2, b.top + b.height / 2]; })()"
    )


def field_selection(shown: Page) -> str:
    return shown.evaluate("field.value.slice(field.selectionStart, field.selectionEnd)")


@pytest.mark.parametrize(
    ("double_click", "type_z"),
    [
        (
            lambda x, y: {"action": "double_click", "coordinate": [x, y]},
            {"action": "type", "text": "Z"},
        ),
        (lambda x, y: {"type": "double_click", "x": x, "y": y}, {"type": "type", "text": "Z"}),
    ],
    ids=["anthropic", "openai"],
)
def test_a_double_click_selects_the_word_and_a_letter_replaces_it(
    page: tuple[Display, Page], tool: ComputerTool, double_click: Any, type_z: dict
) -> None:
    _, shown = page
    result = tool(double_click(*word_world(shown)))
    assert not result.is_error, result.text
    wait_until(lambda: field_selection(shown) == "world", "the word 'world' selected")
    log = wait_until(lambda: (log := shown.log()) and log[-1][0] == "dblclick" and log, "dblclick")
    assert log == [
        ["mousedown", "field", 1], ["mouseup", "field", 1], ["click", "field", 1],
        ["mousedown", "field", 2], ["mouseup", "field", 2], ["click", "field", 2],
        ["dblclick", "field", 2],
    ]  # fmt: skip
    result = tool(type_z)
    assert not result.is_error, result.text
    wait_until(lambda: shown.evaluate("field.value") == "hello Z", "'world' replaced by Z")


def test_a_triple_click_selects_the_line(page: tuple[Display, Page], tool: ComputerTool) -> None:
    _, shown = page
    result = tool({"action": "triple_click", "coordinate": list(middle_of(shown, "line2", 7, 11))})
    assert not result.is_error, result.text
    wait_until(
        lambda: shown.evaluate("getSelection().toString()").strip() == "second line here",
        "the second line selected",
    )
    log = wait_until(lambda: (log := shown.log()) and len(log) >= 10 and log, "three clicks")
    assert log == [
        ["mousedown", "line2", 1], ["mouseup", "line2", 1], ["click", "line2", 1],
        ["mousedown", "line2", 2], ["mouseup", "line2", 2], ["click", "line2", 2],
        ["dblclick", "line2", 2],
        ["mousedown", "line2", 3], ["mouseup", "line2", 3], ["click", "line2", 3],
    ]  # fmt: skip


def test_a_triple_click_in_the_field_selects_it_all_and_a_letter_replaces_it(
    page: tuple[Display, Page], tool: ComputerTool
) -> None:
    _, shown = page
    result = tool({"action": "triple_click", "coordinate": list(word_world(shown))})
    assert not result.is_error, result.text
    wait_until(lambda: field_selection(shown) == "hello world", "the whole field selected")
    log = wait_until(lambda: (log := shown.log()) and len(log) >= 10 and log, "three clicks")
    assert {(kind, target) for kind, target, _ in log} <= {
        ("mousedown", "field"), ("mouseup", "field"), ("click", "field"), ("dblclick", "field")
    }  # fmt: skip
    assert [count for kind, _, count in log if kind == "mousedown"] == [1, 2, 3]
    result = tool({"action": "type", "text": "Z"})
    assert not result.is_error, result.text
    wait_until(lambda: shown.evaluate("field.value") == "Z", "the field's text replaced by Z")


def drag_action(shape: str, start: tuple[int, int], end: tuple[int, int]) -> dict:
    if shape == "anthropic":
        return {
            "action": "left_click_drag",
            "start_coordinate": list(start),
            "coordinate": list(end),
        }
    return {"type": "drag", "path": [{"x": start[0], "y": start[1]}, {"x": end[0], "y": end[1]}]}


@pytest.mark.parametrize("shape", ["anthropic", "openai"])
def test_a_drag_selects_text(page: tuple[Display, Page], tool: ComputerTool, shape: str) -> None:
    _, shown = page
    start = shown.screen_point(
        "(() => { const r = document.createRange(); r.setStart(line1.firstChild, 0);"
        " r.setEnd(line1.firstChild, 1); const b = r.getBoundingClientRect();"
        " return [b.left + 2, b.top + b.height / 2]; })()"
    )
    end = shown.screen_point(
        "(() => { const r = document.createRange(); r.setStart(line1.firstChild, 9);"
        " r.setEnd(line1.firstChild, 10); const b = r.getBoundingClientRect();"
        " return [b.right - 2, b.top + b.height / 2]; })()"
    )
    result = tool(drag_action(shape, start, end))
    assert not result.is_error, result.text
    wait_until(
        lambda: shown.evaluate("getSelection().toString()") == "first line", "'first line' selected"
    )
    log = wait_until(lambda: (log := shown.log()) and log[-1][0] == "click" and log, "the release")
    assert log == [["mousedown", "line1", 1], ["mouseup", "line1", 1], ["click", "line1", 1]]


@pytest.mark.parametrize("shape", ["anthropic", "openai"])
def test_a_drag_drops_an_element_on_the_target(
    page: tuple[Display, Page], tool: ComputerTool, shape: str
) -> None:
    _, shown = page
    start = shown.screen_point(
        "(() => { const b = item.getBoundingClientRect(); return [b.left + 50, b.top + 30]; })()"
    )
    end = shown.screen_point(
        "(() => { const b = bin.getBoundingClientRect(); return [b.left + 75, b.top + 50]; })()"
    )
    result = tool(drag_action(shape, start, end))
    assert not result.is_error, result.text
    log = wait_until(
        lambda: (log := shown.log()) and log[-1][0] == "drop" and log,
        "the drop on the bin",
    )
    assert log == [["mousedown", "item", 1], ["dragstart", "item", 0], ["drop", "bin", "moved"]]


def test_two_clicks_in_a_row_stay_two_single_clicks(
    page: tuple[Display, Page], tool: ComputerTool
) -> None:
    # 50 ms apart (an action with no effect returns as soon), the second would be
    # Chromium's double-click (within 500 ms and 4 px; presses in one millisecond are not)
    display, shown = page
    x, y = word_world(shown)
    display.input.click(x, y)
    time.sleep(0.05)
    display.input.click(x, y)
    log = wait_until(
        lambda: (log := shown.log()) and [e for e in log if e[0] == "click"][1:] and log,
        "the second click",
    )
    assert [entry for entry in log if entry[0] == "mousedown"] == [
        ["mousedown", "field", 1],
        ["mousedown", "field", 1],
    ]
    assert not [entry for entry in log if entry[0] == "dblclick"]
