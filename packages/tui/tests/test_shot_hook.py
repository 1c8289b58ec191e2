"""Every shot the environment takes passes the viewfinder_screenshot_captured hook once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from viewfinder.core import Screenshot, hookimpl
from viewfinder.tui.config import parse_config
from viewfinder.tui.environment import ViewfinderEnvironment


class Observer:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    @hookimpl
    def viewfinder_screenshot_captured(
        self, screenshot: Screenshot, context: Mapping[str, Any]
    ) -> None:
        self.seen.append((screenshot.source, dict(context)))


async def test_display_and_browser_shots_pass_the_hook_once(
    viewfinder_plugin: Callable[..., str],
) -> None:
    observer = Observer()
    viewfinder_plugin(observer, name="tui-test-observer")
    settings = parse_config(
        "[browser]\ncdp_url = 'auto'\n[display]\nenabled = true\nsize = '64x48'\n"
    )
    async with ViewfinderEnvironment(settings) as env:
        await env.capture("display")
        await env.capture("browser")
    assert observer.seen == [
        ("xvfb", {"backend": "xvfb", "origin": "tui", "grab": "shm"}),
        ("cdp", {"backend": "cdp", "origin": "tui"}),
    ]
