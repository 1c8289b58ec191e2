"""Fixtures for the desktop tests: the form app of examples/desktop_form.py, its state."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
FORM = ROOT / "examples" / "desktop_form.py"


def form_command(state: Path, *extra: str) -> list[str]:
    """The command that runs the form app, writing its state to ``state``."""
    return [sys.executable, str(FORM), "--state", str(state), *extra]


def read_form_state(path: Path) -> dict[str, Any]:
    """The form's state as it last wrote it ({} before it wrote any)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


@pytest.fixture(scope="session")
def form_app() -> Callable[..., list[str]]:
    """``form_app(state_path, *extra)``: the form's command line."""
    return form_command


@pytest.fixture(scope="session")
def form_state() -> Callable[[Path], dict[str, Any]]:
    """``form_state(state_path)``: the form's last written state."""
    return read_form_state


# -- the form on a display of its own, shared by the tests of one module -----------------


class RunningForm:
    """The form app running on ``display``; its state is read from ``state_path``."""

    def __init__(self, display: Any, state_path: Path, *extra: str) -> None:
        import subprocess

        self.display = display
        self.state_path = state_path
        self.process = subprocess.Popen(
            form_command(state_path, *extra),
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() != "ready":
            self.stop()
            raise RuntimeError("the form app did not start")
        self.layout: dict[str, list[int]] = self.state()["layout"]

    def state(self) -> dict[str, Any]:
        return read_form_state(self.state_path)

    def centre(self, name: str) -> tuple[int, int]:
        """The centre of widget ``name`` on the screen."""
        x, y, width, height = self.layout[name]
        return (x + width // 2, y + height // 2)

    def wait_for(self, check: Callable[[dict[str, Any]], Any], what: str) -> Any:
        """Wait until ``check(state)`` is truthy; returns its value."""
        from viewfinder.core.testing import wait_until

        return wait_until(lambda: check(self.state()), what, timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


@pytest.fixture(scope="module")
def form_screen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningForm]:
    """The form on a 1920x1080 Xvfb of its own, for every test of a module."""
    from viewfinder.xvfb import Display

    folder = tmp_path_factory.mktemp("form")
    with Display(1920, 1080) as display:
        form = RunningForm(display, folder / "state.json")
        try:
            yield form
        finally:
            form.stop()
