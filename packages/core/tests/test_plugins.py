"""The plugin manager, the capture facade and the screenshot observer hook."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import viewfinder.core as core
from viewfinder.core import (
    BackendUnavailableError,
    NoBackendAvailableError,
    PluginError,
    Region,
    RegionError,
    Screenshot,
    UnknownBackendError,
    hookimpl,
)
from viewfinder.core.testing import Canvas, CanvasBackend, ScreenshotLog

Register = Callable[..., str]


@pytest.fixture
def fresh_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Reload plugins from entry points under a test-chosen environment."""
    core.reset_plugin_manager()
    try:
        yield
    finally:
        monkeypatch.undo()
        core.reset_plugin_manager()


class Exploding:
    @hookimpl
    def viewfinder_screenshot_captured(self, screenshot: Screenshot) -> None:
        raise RuntimeError("observer bug")


def test_plugins_load_lazily_and_once(fresh_manager: None) -> None:
    first = core.get_plugin_manager()
    assert core.get_plugin_manager() is first
    assert first.get_plugin("mss") is not None


def test_allow_list_and_block_list(fresh_manager: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIEWFINDER_PLUGINS", "mss")
    names = {info.name for info in core.plugin_infos()}
    assert names == {"mss"}
    core.reset_plugin_manager()
    monkeypatch.delenv("VIEWFINDER_PLUGINS")
    monkeypatch.setenv("VIEWFINDER_DISABLE_PLUGINS", "mss, cdp")
    names = {info.name for info in core.plugin_infos()}
    assert "mss" not in names and "cdp" not in names and "xvfb" in names
    assert "mss" not in core.backend_specs()


def test_misspelled_hookimpl_fails_loudly_with_a_suggestion(viewfinder_plugin: Register) -> None:
    class Misspelled:
        @hookimpl
        def viewfinder_register_capture_backend(self, register: Any) -> None:  # no trailing s
            register("x", CanvasBackend)

    with pytest.raises(PluginError, match="did you mean 'viewfinder_register_capture_backends'"):
        viewfinder_plugin(Misspelled(), name="misspelled")
    assert core.get_plugin_manager().get_plugin("misspelled") is None


def test_hookimpl_with_a_wrong_argument_name_is_rejected(viewfinder_plugin: Register) -> None:
    class WrongArgument:
        @hookimpl
        def viewfinder_screenshot_captured(self, shot: Screenshot) -> None: ...

    with pytest.raises(PluginError, match="shot"):
        viewfinder_plugin(WrongArgument(), name="wrong-argument")


def test_fixture_unregisters_after_the_test(viewfinder_plugin: Register) -> None:
    name = viewfinder_plugin(ScreenshotLog(), name="temporary-collector")
    assert core.get_plugin_manager().get_plugin(name) is not None


def test_fixture_left_nothing_behind() -> None:
    assert core.get_plugin_manager().get_plugin("temporary-collector") is None


def test_every_capture_passes_the_hook_once(
    canvas_backend: Canvas, viewfinder_plugin: Register
) -> None:
    collector = ScreenshotLog()
    viewfinder_plugin(collector, name="collector")
    shot = core.capture("canvas", context={"session_id": "s1", "step": 2})
    assert len(collector.seen) == 1
    seen, context = collector.seen[0]
    assert seen is shot
    assert context == {"backend": "canvas", "session_id": "s1", "step": 2}


async def test_async_capture_passes_the_hook_once(
    canvas_backend: Canvas, viewfinder_plugin: Register
) -> None:
    collector = ScreenshotLog()
    viewfinder_plugin(collector, name="collector")
    await core.acapture("canvas")
    assert [ctx["backend"] for _, ctx in collector.seen] == ["canvas"]


def test_an_observer_that_raises_never_breaks_the_capture(
    canvas_backend: Canvas, viewfinder_plugin: Register, caplog: pytest.LogCaptureFixture
) -> None:
    collector = ScreenshotLog()
    viewfinder_plugin(Exploding(), name="exploding")
    viewfinder_plugin(collector, name="collector")
    with caplog.at_level(logging.ERROR):
        shot = core.capture("canvas")
    assert shot.width == 640
    assert len(collector.seen) == 1  # the others still ran
    assert "observer bug" in caplog.text or "exploding" in caplog.text


def test_canvas_pixels_in_full_and_region_captures(canvas_backend: Canvas) -> None:
    canvas_backend.fill(Region(x=100, y=50, width=40, height=30), (0, 0, 255))
    full = core.capture("canvas")
    assert full.pixel(120, 65) == (0, 0, 255)
    assert full.pixel(10, 10) == (255, 255, 255)
    part = core.capture("canvas", region=Region(x=100, y=50, width=40, height=30))
    assert (part.width, part.height) == (40, 30)
    assert part.pixel(0, 0) == (0, 0, 255) and part.pixel(39, 29) == (0, 0, 255)


def test_unknown_backend_lists_the_available_ones(canvas_backend: Canvas) -> None:
    with pytest.raises(UnknownBackendError, match=r"registered backends: .*canvas") as info:
        core.capture("no-such-backend")
    assert "canvas" in info.value.available


def test_backend_from_environment(canvas_backend: Canvas, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIEWFINDER_BACKEND", "canvas")
    assert core.capture().source == "canvas"


def test_best_available_skips_unavailable_and_negative_priority(
    viewfinder_plugin: Register, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIEWFINDER_BACKEND", raising=False)

    class Broken(CanvasBackend):
        name = "broken"
        priority = 1000

        @classmethod
        def availability(cls, **options: Any) -> core.Availability:
            return core.Availability.no("it is broken on purpose")

    class Good(CanvasBackend):
        name = "good"
        priority = 999

    class Plugin:
        @hookimpl
        def viewfinder_register_capture_backends(self, register: Any) -> None:
            register("broken", Broken)
            register("good", Good)

    viewfinder_plugin(Plugin(), name="priorities")
    assert core.resolve_backend().name == "good"
    with pytest.raises(BackendUnavailableError, match="broken on purpose"):
        core.get_backend("broken")


def test_no_backend_available_says_why(
    fresh_manager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIEWFINDER_PLUGINS", "")  # an empty allow-list: no plugin at all
    monkeypatch.delenv("VIEWFINDER_BACKEND", raising=False)
    with pytest.raises(NoBackendAvailableError, match="no capture backend"):
        core.capture()


def test_two_plugins_claiming_one_backend_name(viewfinder_plugin: Register) -> None:
    class A:
        @hookimpl
        def viewfinder_register_capture_backends(self, register: Any) -> None:
            register("same", CanvasBackend)

    class B(A):
        pass

    viewfinder_plugin(A(), name="a")
    viewfinder_plugin(B(), name="b")
    with pytest.raises(PluginError, match="registered by both"):
        core.backend_specs()


def test_region_outside_the_screen(canvas_backend: Canvas) -> None:
    with pytest.raises(RegionError, match="640x480 screen"):
        core.capture("canvas", region=Region(x=600, y=0, width=100, height=10))


def test_window_capture_unsupported_is_typed(canvas_backend: Canvas) -> None:
    with pytest.raises(core.CaptureNotSupportedError):
        core.capture("canvas", window=42)


# -- plugin faults a plugin author can act on ------------------------------------------


class SolidBackend:
    """What an author used to other projects writes: capture() and close(), no base class."""

    def capture(self, **_: Any) -> None:
        return None

    def close(self) -> None:
        return None


def _plugin_registering(name: str, factory: Any) -> object:
    class Plugin:
        @hookimpl
        def viewfinder_register_capture_backends(self, register: Any) -> None:
            register(name, factory)

    return Plugin()


def test_a_factory_that_does_not_make_a_capture_backend(viewfinder_plugin: Register) -> None:
    viewfinder_plugin(_plugin_registering("solid", SolidBackend), name="solid-plugin")
    with pytest.raises(PluginError) as caught:
        core.capture("solid")
    message = str(caught.value)
    assert "'solid'" in message and "'solid-plugin'" in message
    assert "SolidBackend" in message and "CaptureBackend" in message
    assert "docs/plugins.md" in message


def test_a_factory_that_raises(viewfinder_plugin: Register) -> None:
    def broken_factory() -> CanvasBackend:
        raise ZeroDivisionError("division by zero in the plugin")

    viewfinder_plugin(_plugin_registering("broken", broken_factory), name="broken-plugin")
    with pytest.raises(PluginError, match=r"'broken-plugin' failed to start.*ZeroDivisionError"):
        core.get_backend("broken")


def test_a_capture_that_returns_no_screenshot(viewfinder_plugin: Register) -> None:
    class Liar(CanvasBackend):
        name = "liar"

        def _capture(self, **_: Any) -> Any:
            return b"\x89PNG not a Screenshot"

    viewfinder_plugin(_plugin_registering("liar", Liar), name="liar-plugin")
    with pytest.raises(PluginError, match=r"returned a bytes from _capture.*docs/plugins.md"):
        core.capture("liar")


def test_a_factory_given_as_an_import_path_loads_when_used(viewfinder_plugin: Register) -> None:
    target = "viewfinder.core.testing:CanvasBackend"
    viewfinder_plugin(_plugin_registering("by-path", target), name="path-plugin")
    spec = core.backend_specs()["by-path"]
    assert spec.target == target
    assert spec.factory is CanvasBackend
    assert core.capture("by-path").size == (640, 480)
    viewfinder_plugin(_plugin_registering("nowhere", "viewfinder.no_such:Thing"), name="gone")
    with pytest.raises(PluginError, match=r"'gone' cannot be loaded from 'viewfinder.no_such"):
        core.get_backend("nowhere")
    viewfinder_plugin(_plugin_registering("no-colon", "just_a_name"), name="colonless")
    with pytest.raises(PluginError, match="neither a factory nor an import path"):
        core.backend_specs()


def test_unknown_backend_options_list_the_ones_it_takes(canvas_backend: Canvas) -> None:
    with pytest.raises(core.BackendOptionError) as caught:
        core.get_backend("canvas", display=":1", colour="red")
    message = str(caught.value)
    assert "'colour', 'display'" in message and "its options are: canvas" in message


def test_misspelt_plugin_names_in_the_lists_are_errors(
    fresh_manager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIEWFINDER_PLUGINS", "xvfb,msss")
    with pytest.raises(PluginError, match=r"VIEWFINDER_PLUGINS names plugin 'msss'.*'mss'"):
        core.get_plugin_manager()
    core.reset_plugin_manager()
    monkeypatch.delenv("VIEWFINDER_PLUGINS")
    monkeypatch.setenv("VIEWFINDER_DISABLE_PLUGINS", "nothing-like-it")
    with pytest.raises(PluginError, match="VIEWFINDER_DISABLE_PLUGINS names plugin"):
        core.get_plugin_manager()


class Wrapping:
    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl(wrapper=True)
    def viewfinder_screenshot_captured(self, screenshot: Screenshot) -> Iterator[None]:
        self.calls.append(f"before {screenshot.width}")
        yield
        self.calls.append("after")


def test_observers_go_through_pluggy_wrappers_run_and_faults_stay_isolated(
    viewfinder_plugin: Register, canvas_backend: Canvas, caplog: pytest.LogCaptureFixture
) -> None:
    wrapper, log = Wrapping(), ScreenshotLog()
    viewfinder_plugin(wrapper, name="wrapper")
    viewfinder_plugin(Exploding(), name="exploding")
    viewfinder_plugin(log, name="log")
    with caplog.at_level(logging.ERROR):
        shot = core.capture("canvas")
    assert wrapper.calls == ["before 640", "after"]  # once, around every observer
    assert [seen.data for seen in log.screenshots] == [shot.data]
    assert "'exploding' raised" in caplog.text


def test_a_backend_hook_that_raises_leaves_the_other_backends(
    viewfinder_plugin: Register, canvas_backend: Canvas, caplog: pytest.LogCaptureFixture
) -> None:
    class Raising:
        @hookimpl
        def viewfinder_register_capture_backends(self, register: Any) -> None:
            raise KeyError("plugin bug")

    viewfinder_plugin(Raising(), name="raising-plugin")
    with caplog.at_level(logging.ERROR):
        specs = core.backend_specs()
    assert "canvas" in specs and "xvfb" in specs
    assert "'raising-plugin' raised" in caplog.text
