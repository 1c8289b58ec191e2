"""Qt 5 and Qt 6 apps started with ``display.env()`` expose their trees, and a click
by ref lands on the named button (the app logs it, and nothing else).

Qt 5 (Debian's PyQt5) never reads ``AT_SPI_BUS_ADDRESS``: it connects to the session
bus, then finds the accessibility bus through the session bus's ``org.a11y.Bus`` or
the root window's ``AT_SPI_BUS`` property (which a display with its buses sets). Qt 6
(PySide6 from PyPI, in ``.venv-qt`` made by ``make setup``) reads
``AT_SPI_BUS_ADDRESS`` first. PyPI's PyQt5 wheels carry a Qt 5 built without the
AT-SPI bridge: such an app exposes nothing, and the read's reason says why.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from viewfinder.desktop import ComputerTool
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's python3-pyqt5: Qt 5.15
QT_VENV_PYTHON = str(ROOT / ".venv-qt" / "bin" / "python")  # make setup: Qt from PyPI


@pytest.mark.parametrize(
    ("python", "binding"), [(SYSTEM_PYTHON, "pyqt5"), (QT_VENV_PYTHON, "pyside6")]
)
def test_a_qt_window_exposes_its_tree_and_a_click_by_ref_lands(python: str, binding: str) -> None:
    assert Path(python).exists(), f"{python} is missing: run `make setup`"
    with (
        Display(480, 320, accessibility=True) as display,
        LoggedApp([python, str(HERE / "qt_form.py"), binding], display.env()) as app,
        ComputerTool(display, elements=True) as tool,
    ):
        deadline = time.monotonic() + 20
        while True:  # until the app has registered its tree
            tree = tool.read_elements()
            cancel = [e for e in tree.walk() if e.role == "push button" and e.name == "Cancel"]
            if cancel or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(cancel) == 1, tree
        assert tree.reason == ""
        assert tree.application(cancel[0]).pid == app.process.pid
        done = tool({"action": "left_click", "element": cancel[0].ref})
        assert not done.is_error, done.error
        assert app.wait_for("clicked Cancel") == ["clicked Cancel"]
        time.sleep(0.3)
        assert app.said() == []


def test_pypi_qt5_exposes_nothing_and_the_reason_says_why() -> None:
    assert Path(QT_VENV_PYTHON).exists(), f"{QT_VENV_PYTHON} is missing: run `make setup`"
    with (
        Display(480, 320, accessibility=True) as display,
        LoggedApp([QT_VENV_PYTHON, str(HERE / "qt_form.py"), "pyqt5"], display.env()) as app,
        ComputerTool(display, elements=True) as tool,
    ):
        time.sleep(1.0)  # what the other Qt apps take to register, and more
        tree = tool.read_elements()
        assert not [e for e in tree.walk() if e.name in {"Save", "Cancel"}]
        assert "'Qt form' (qt_form.py) expose no accessibility tree" in tree.reason
        assert "its Qt 5 (" in tree.reason and "built without AT-SPI support" in tree.reason
        assert "python3-pyqt5" in tree.reason
        assert app.said() == []
