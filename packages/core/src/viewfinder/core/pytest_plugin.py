"""pytest fixtures for plugin authors (loaded automatically through the ``pytest11`` entry point).

``viewfinder_plugin``
    ``register(plugin, name=None)`` registers an in-process plugin (a module, class or
    object with ``@hookimpl`` functions) for one test and unregisters it afterwards::

        def test_my_backend(viewfinder_plugin):
            viewfinder_plugin(MyPlugin(), name="mine")
            assert "mine" in viewfinder.core.backend_specs()

``wait_until``
    :func:`~viewfinder.core.testing.wait_until`, for test modules that take helpers as
    fixtures: ``wait_until(lambda: window_is_mapped(), "the window")``.

``captured_screenshots``
    A :class:`~viewfinder.core.testing.ScreenshotLog` registered for one test: every
    ``viewfinder_screenshot_captured`` call lands in its ``seen`` list.

``canvas_backend``
    Registers :class:`~viewfinder.core.testing.CanvasBackend` under the name ``canvas``
    for one test and returns its :class:`~viewfinder.core.testing.Canvas`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from viewfinder.core.plugins import register_plugin, unregister_plugin
from viewfinder.core.testing import Canvas, CanvasPlugin, ScreenshotLog, wait_until


@pytest.fixture
def viewfinder_plugin() -> Iterator[Callable[..., str]]:
    """Register in-process plugins for one test; they are unregistered afterwards."""
    names: list[str] = []

    def register(plugin: object, name: str | None = None) -> str:
        registered = register_plugin(plugin, name=name)
        names.append(registered)
        return registered

    try:
        yield register
    finally:
        for name in reversed(names):
            unregister_plugin(name)


@pytest.fixture
def canvas_backend(viewfinder_plugin: Callable[..., str]) -> Canvas:
    """A :class:`Canvas` captured by a backend registered as ``canvas`` for this test."""
    canvas = Canvas()
    viewfinder_plugin(CanvasPlugin(canvas), name="viewfinder-test-canvas")
    return canvas


@pytest.fixture(name="wait_until")
def wait_until_fixture() -> Callable[..., object]:
    """:func:`viewfinder.core.testing.wait_until`: poll a predicate with a deadline."""
    return wait_until


@pytest.fixture
def captured_screenshots(viewfinder_plugin: Callable[..., str]) -> ScreenshotLog:
    """Every screenshot the observers see during the test, with its context."""
    log = ScreenshotLog()
    viewfinder_plugin(log, name="viewfinder-test-screenshot-log")
    return log
