"""What a client is served: screenshots within its budget (a viewport larger than the
budget is sent scaled down, and a point read off that image lands on the page pixel it
shows), and the members its ``configs`` enable."""

from __future__ import annotations

import base64
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from viewfinder.browser.toolset import ALL_MEMBERS, BrowserToolset
from viewfinder.cdp.testing import serve_pages
from viewfinder.core.result_budget import ResultBudget

sys.path.insert(0, str(Path(__file__).parent))
from toolset_pages import PAGES, text_of, tool_use, validate_result

SMALL = ResultBudget("small", image_long_edge=400, image_max_pixels=400 * 300)


@pytest.fixture
def browser() -> Iterator[BrowserToolset]:
    with (
        serve_pages(PAGES) as base,
        BrowserToolset(
            base + "/", width=800, height=600, budget=SMALL, configs=ALL_MEMBERS
        ) as browser,
    ):
        yield browser


def test_a_screenshot_over_the_budget_is_scaled_and_points_map_back(
    browser: BrowserToolset,
) -> None:
    result = browser.run(tool_use("screenshot", {}))
    validate_result(result)
    image = next(part for part in result["content"] if part["type"] == "image")
    shot = Image.open(io.BytesIO(base64.b64decode(image["source"]["data"]))).convert("RGB")
    assert shot.size == (400, 300)
    assert "points you give are in this image's pixels (0.5 per page pixel)" in text_of(result)
    # the blue block (page 440..540 x 40..120) is at half that in the image
    assert shot.getpixel((245, 40)) == (0, 128, 255)
    # the Save button is at page (20..180, 300..340): at (50, 160) in the image
    clicked = browser.run(
        tool_use("left_click", {"target": {"type": "coordinate", "x": 50, "y": 160}})
    )
    validate_result(clicked)
    assert not clicked.get("is_error"), text_of(clicked)
    log = browser.run(tool_use("javascript_exec", {"text": "JSON.stringify(window.log)"}))
    assert json.loads(text_of(log)) == ["click save"]
    outside = browser.run(
        tool_use("left_click", {"target": {"type": "coordinate", "x": 420, "y": 10}})
    )
    assert outside.get("is_error") and "outside the viewport (400x300)" in text_of(outside)


def test_members_are_served_as_the_configs_say() -> None:
    from anthropic.types.beta import BetaBrowserToolset20260801Param, BetaToolUnionParam
    from pydantic import TypeAdapter

    configs = {"zoom": {"enabled": False}, "read_console": {"enabled": True}}
    with serve_pages(PAGES) as site, BrowserToolset(site + "/", configs=configs) as browser:
        entry = browser.definition()
        assert entry == {"type": "browser_toolset_20260801", "configs": configs}
        TypeAdapter(BetaBrowserToolset20260801Param).validate_python(entry)
        TypeAdapter(BetaToolUnionParam).validate_python(entry)  # as tools=[...] takes it
        # off: disabled here, and javascript_exec, file_upload, read_network by default
        for member, arguments in [
            ("zoom", {"region": [0, 0, 10, 10]}),
            ("javascript_exec", {"text": "1"}),
            ("read_network", {}),
        ]:
            refused = browser.run(tool_use(member, arguments))
            validate_result(refused)
            assert refused["is_error"], member
            assert text_of(refused).startswith(f"{member}: this member is not enabled")
        for member in ("get_page_text", "read_console"):
            served = browser.run(tool_use(member, {}))
            validate_result(served)
            assert not served.get("is_error"), text_of(served)
