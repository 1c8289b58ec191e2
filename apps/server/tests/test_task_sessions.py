"""Every episode of ``viewfinder tasks run`` recorded as a session folder the viewer
opens: its actions with the screen before each, and the task's scores beside them."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from viewfinder.server.tasks.model import Suite, load_tasks
from viewfinder.server.tasks.runner import load_agent, run_suite
from viewfinder.viewer.artifacts.catalog import Catalog

from .test_tasks_suite import SUITE, clicks_in


def test_each_episode_is_a_session_the_viewers_catalog_reads(tmp_path: Path) -> None:
    tasks = load_tasks(SUITE).tasks
    suite = Suite(name="two", tasks=[tasks[0], tasks[3]])  # form-name, form-red
    sessions = tmp_path / "sessions"
    clicks: dict[str, list[str]] = {}
    results = run_suite(
        suite, load_agent("scripted"), parallel=2, sessions=sessions,
        on_result=lambda r: clicks.__setitem__(r.task, clicks_in(r.workdir or "")),
    )  # fmt: skip
    about = [(r.task, r.reward, r.reason, clicks.get(r.task)) for r in results]
    assert [(r.task, r.reward) for r in results] == [("form-name", 1.0), ("form-red", 1.0)], about
    assert clicks == {"form-name": ["name", "save"], "form-red": ["red"]}
    assert [r.session for r in results] == [
        str(sessions / "000-form-name"), str(sessions / "001-form-red"),
    ]  # fmt: skip

    catalog = Catalog(sessions)
    top = catalog.top()
    assert top["kind"] == "list"
    assert [(item["id"], item["kind"]) for item in top["items"]] == [
        ("000-form-name", "recording"), ("001-form-red", "recording"),
    ]  # fmt: skip
    name = catalog.load("000-form-name").view
    assert [step.event["kind"] for step in name.steps if step.event] == ["click", "type", "click"]
    assert name.screen == [640, 480]
    red = catalog.load("001-form-red")
    [step] = red.view.steps
    assert step.event is not None and step.event["position"] == {"x": 60, "y": 135}
    # the frame before the click: the swatch not yet red
    frame = Image.open(sessions / "001-form-red" / "screenshots" / "0.png").convert("RGB")
    assert frame.size == (640, 480)
    assert frame.getpixel((250, 150)) != (255, 0, 0)

    about = json.loads((sessions / "000-form-name" / "task.json").read_text())
    assert about["task"]["id"] == "form-name"
    assert [(s["step"], s["reward"], s["done"]) for s in about["scores"]] == [
        (1, 0.0, False), (2, 0.0, False), (3, 1.0, True),
    ]  # fmt: skip
