"""What an application can put into a recording through its accessibility tree is bounded.

Apps on a recorded display may be hostile: an element's names go into every line that
names it, so one too long to find the element by again is left out, not written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.core import elements
from viewfinder.recorder import Recorder, pointer_elements, read_session
from viewfinder.xvfb import Display

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def long_names(apps: Any) -> Iterator[Display]:
    """A display with its accessibility bus and a GTK button with a 600-character name."""
    with Display(640, 480, accessibility=True) as display:
        app, _ = apps.start(display, ["/usr/bin/python3", str(HERE / "gtk_long_name_app.py")])
        try:
            yield display
        finally:
            apps.stop(app)


def test_an_element_with_a_name_too_long_to_find_it_by_is_left_out(
    tmp_path: Path, long_names: Display
) -> None:
    tree = elements("atspi", display=long_names.name)
    (button,) = [e for e in tree.walk() if e.role == "push button"]
    assert len(button.name) == 600 > pointer_elements.MAX_NAME_CHARS
    assert button.box is not None
    folder = tmp_path / "session"
    with Recorder(folder, "xvfb", backend_options={"display": long_names.name}) as recorder:
        recorder.click(button.box.center.x, button.box.center.y)
        recorder.key("Return")
    lines = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["click", "key"]
    assert "element" not in lines[0] and len((folder / "manifest.jsonl").read_bytes()) < 1000
    run = read_session(folder).metadata.runs[-1]
    assert run.elements is not None
    assert (run.elements["lookups"], run.elements["found"], run.elements["too_long"]) == (1, 0, 1)
