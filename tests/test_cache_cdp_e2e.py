"""Cache replay on a real Chromium page through the cdp backend (which can act).

A scripted agent clicks a field, types, and clicks Save on a page, keeping its message
history; the cache built from it is replayed on the same page (completes) and on a page
whose Save button has moved (stops before clicking where it was).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from viewfinder.cache import CacheExecutor, ExecutionSettings, ReplayStatus, build_from_messages
from viewfinder.cdp import CdpBackend
from viewfinder.core import Event

FIELD, SAVE, MOVED_SAVE = (150, 60), (90, 160), (420, 340)


def page(save: tuple[int, int]) -> str:
    """A form; every click and the field's text go to ``window.trail``."""
    left, top = save[0] - 50, save[1] - 20
    html = f"""<!doctype html><style>html,body{{margin:0;background:#f4f4f4;font:16px sans-serif}}
input,button{{position:absolute;box-sizing:border-box;border:1px solid #555;outline:none}}
</style><body>
<input id="field" style="left:40px;top:45px;width:220px;height:30px;caret-color:transparent">
<button id="save" style="left:{left}px;top:{top}px;width:100px;height:40px;
  background:#1e5ac8;color:white">Save</button>
<script>
window.trail = [];
field.addEventListener("mousedown", () => trail.push("field"));
save.addEventListener("mousedown", () => trail.push("save:" + field.value));
</script></body>"""
    return "data:text/html," + quote(html)


@pytest.fixture(scope="module")
def browser() -> Iterator[CdpBackend]:
    backend = CdpBackend(width=640, height=480)
    try:
        yield backend
    finally:
        launched = backend.browser
        backend.close()
        # the Chromium these tests launched is gone with its profile
        assert launched is None or launched.process.poll() is not None
        assert launched is None or not launched.root.exists()


def open_page(browser: CdpBackend, save: tuple[int, int]) -> None:
    browser.run(browser.session.navigate(page(save)))


def trail(browser: CdpBackend) -> list[str]:
    return list(browser.run(browser.session.evaluate("trail")))


def image(browser: CdpBackend) -> dict[str, Any]:
    data = base64.b64encode(browser.capture().data).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def test_a_page_replays_and_a_moved_button_stops_it(browser: CdpBackend) -> None:
    open_page(browser, SAVE)
    inputs: list[dict[str, Any]] = [
        {"action": "left_click", "coordinate": list(FIELD)},
        {"action": "type", "text": "hello"},
        {"action": "left_click", "coordinate": list(SAVE)},
    ]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [image(browser)]}]
    for number, tool_input in enumerate(inputs):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{number}",
                        "name": "computer",
                        "input": tool_input,
                    }
                ],
            }
        )
        browser.act(Event.from_computer_use(tool_input))
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{number}",
                        "content": [image(browser)],
                    }
                ],
            }
        )
    assert trail(browser) == ["field", "save:hello"]
    cache = build_from_messages(messages)
    assert all(block.visual_representation for block in cache.trajectory)

    settings = ExecutionSettings(delay_time_between_actions=0.2)
    open_page(browser, SAVE)
    result = CacheExecutor(browser, settings).run(cache.model_copy(deep=True))
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert all(step.validated for step in result.steps)
    assert trail(browser) == ["field", "save:hello"]

    open_page(browser, MOVED_SAVE)
    moved = CacheExecutor(browser, settings).run(cache)
    assert moved.status is ReplayStatus.NEEDS_AGENT, moved.message
    # the type step is checked in its field, which is unchanged; the moved button stops
    # the replay before the click on where it was
    assert moved.step_index == 2 and moved.acted == [0, 1]
    assert trail(browser) == ["field"]
    assert browser.run(browser.session.evaluate("field.value")) == "hello"
