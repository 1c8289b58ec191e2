"""Cache replays that never act blind or half-done, on a real Tk form on a real Xvfb.

A scripted agent fills in a two-field form through the xvfb backend (XTest input) and
keeps its message history; the cache files are built from it by the CLI, as the docs'
quick start does. The form reports on stdout every click, the text of each field and
what was submitted, so each test compares what the app received with what the file says.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cache_form import (  # fixtures are used by name
    DEADLINE_S,
    EMAIL,
    LOGIN,
    PANEL_BUTTON,
    SUBMIT,
    USER,
    FormApp,
    backend,
    built,
    click,
    display,
    fill_in,
    login_history,
    run_cli,
    script,
    start_form,
)
from viewfinder.cache import (
    CacheError,
    CacheExecutor,
    CacheFileError,
    ExecutionSettings,
    ReplayStatus,
)
from viewfinder.core.testing import wait_until
from viewfinder.xvfb import Display, XvfbBackend

__all__ = ["backend", "display", "login_history", "script", "start_form"]


def test_the_quick_start_replays_with_another_value(
    tmp_path: Path,
    display: Display,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    login = built(tmp_path, login_history, "-p", "user=Ada")
    steps = json.loads(login.read_text())["trajectory"]
    assert [step["input"]["action"] for step in steps] == [s["action"] for s in LOGIN]
    assert steps[1]["input"]["text"] == "{{user}}"
    # the click into the second field sees the first field's text: masked, not compared
    assert steps[2]["visual_mask"] and steps[3]["visual_point"] == list(EMAIL)
    app = start_form()
    shown = run_cli("cache", "show", str(login))
    assert "visual validation: phash" in shown.output and "{{user}}" in shown.output
    checked = run_cli("cache", "check", str(login), "--display", display.name)
    assert checked.exit_code == 0, checked.output
    replayed = run_cli("cache", "replay", str(login), "--display", display.name, "-p", "user=Grace")
    assert replayed.exit_code == 0, replayed.output
    assert replayed.output.startswith("COMPLETED")
    submitted = app.wait_for(lambda event: event["type"] == "submit", "the replayed submit")
    assert submitted == {"type": "submit", "user": "Grace", "email": "ada@example.org"}


def test_a_slow_repaint_gets_its_settle_time(
    tmp_path: Path,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
) -> None:
    app = start_form(panel_delay_ms=1500)

    def panel_shown(number: int) -> None:
        if number == 0:
            wait_until(
                lambda: backend.grab().getpixel((374, 144)) == (0x8B, 0x2E, 0x57),
                "the panel to appear",
                timeout=DEADLINE_S,
            )

    messages = fill_in(backend, app, [click((250, 160)), click(PANEL_BUTTON)], panel_shown)
    app.wait_for(lambda event: event.get("target") == "panel", "the recorded panel click")
    history = tmp_path / "panel.json"
    history.write_text(json.dumps(messages))
    cache = built(tmp_path, history)
    hurried = ExecutionSettings(delay_time_between_actions=0, settle_time=0)
    app = start_form(panel_delay_ms=1500)
    early = CacheExecutor(backend, hurried).run(cache, save=False)
    assert early.status is ReplayStatus.NEEDS_AGENT and early.step_index == 1, early.message
    patient = ExecutionSettings(delay_time_between_actions=0, settle_time=DEADLINE_S)
    app = start_form(panel_delay_ms=1500)
    result = CacheExecutor(backend, patient).run(cache)
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert [e.get("target") for e in app.received(backend)] == ["more", "panel"]


def test_validity_is_restored_by_a_good_replay_and_by_reset(
    tmp_path: Path,
    display: Display,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    login = built(tmp_path, login_history, "-p", "user=Ada")
    for _ in range(3):
        start_form(colour="#c83232")  # the Submit button turned red: step 4 stops
        stopped = run_cli(
            "cache", "replay", str(login), "-d", display.name, "--delay", "0", "-p", "user=X"
        )
        assert stopped.exit_code == 3 and "step 4" in stopped.output, stopped.output
    assert "INVALID" in run_cli("cache", "show", str(login)).output
    start_form()
    refused = run_cli("cache", "replay", str(login), "-d", display.name, "-p", "user=X")
    assert refused.exit_code == 3 and "marked invalid" in refused.output
    forced = run_cli(
        "cache", "replay", str(login), "-d", display.name, "-p", "user=X", "--allow-invalid"
    )
    assert forced.exit_code == 0, forced.output
    meta = json.loads(login.read_text())["metadata"]
    assert meta["is_valid"] and not meta["failures"] and meta["execution_attempts"] == 4
    data = json.loads(login.read_text())
    data["metadata"].update(is_valid=False, invalidation_reason="marked by hand")
    login.write_text(json.dumps(data))
    reset = run_cli("cache", "reset", str(login))
    assert reset.exit_code == 0 and "was invalid: marked by hand" in reset.output
    start_form()
    again = run_cli("cache", "replay", str(login), "-d", display.name, "-p", "user=Y")
    assert again.exit_code == 0, again.output


def test_a_block_without_enabled_is_validated(
    tmp_path: Path,
    display: Display,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "metadata": {
                    "version": "0.3",
                    "visual_validation": {"method": "phash", "region_size": 100, "threshold": 10},
                },
                "trajectory": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "computer",
                        "input": click(SUBMIT),
                        "visual_representation": "0000000000000000",
                    }
                ],
            }
        )
    )
    assert "visual validation: phash" in run_cli("cache", "show", str(seed)).output
    app = start_form()
    result = run_cli("cache", "replay", str(seed), "-d", display.name, "--settle", "0")
    assert result.exit_code == 3 and "Visual validation failed at step 0" in result.output
    assert app.received(backend) == []


def five_clicks_then(bad: dict[str, Any]) -> list[dict[str, Any]]:
    steps = [click(USER), click(EMAIL), click(USER), click(EMAIL), click(USER), bad]
    return [
        {"type": "tool_use", "id": f"toolu_{n}", "name": "computer", "input": step}
        for n, step in enumerate(steps)
    ]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"action": "left_clack", "coordinate": [10, 10]}, "trajectory[5].input"),
        ({"action": "key", "text": "ctrl+Nonsense"}, "trajectory[5].input.text"),
        ({"action": "left_click", "coordinate": [10]}, "trajectory[5].input.coordinate"),
        ({"action": "left_click", "coordinate": ["10", "20"]}, "trajectory[5].input.coordinate"),
        ({"action": "left_click", "coordinate": [True, 20]}, "trajectory[5].input.coordinate"),
        ({"action": "left_click", "coordinate": [700, 20]}, "trajectory[5].input.coordinate"),
        ({"action": "type", "text": "a\x07b"}, "trajectory[5].input.text"),
    ],
)
def test_a_bad_step_is_found_before_anything_is_performed(
    tmp_path: Path,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    bad: dict[str, Any],
    field: str,
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"trajectory": five_clicks_then(bad)}))
    app = start_form()
    with pytest.raises(CacheFileError) as caught:
        CacheExecutor(backend, ExecutionSettings(delay_time_between_actions=0)).run(path)
    assert f"step 5: {field}" in str(caught.value) and "\n" not in str(caught.value)
    assert app.received(backend) == []
    assert json.loads(path.read_text()) == {"trajectory": five_clicks_then(bad)}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            json.dumps({"trajectory": five_clicks_then(click(USER))}).replace(
                "[120, 55]", "[NaN, 55]", 1
            ),
            "NaN",
        ),
        ("[" * 100_000 + "]" * 100_000, "nests JSON too deeply"),
    ],
)
def test_unreadable_numbers_and_nesting_are_one_line_errors(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "odd.json"
    path.write_text(text)
    result = run_cli("cache", "show", str(path))
    assert result.exit_code == 1 and problem in result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


@contextlib.contextmanager
def small_folder(tmp_path: Path) -> Iterator[tuple[Path, Callable[[], None]]]:
    """A folder and a way to make it read-only: a tmpfs remounted ro as root, else chmod."""
    folder = tmp_path / "storage"
    folder.mkdir()
    if os.geteuid() != 0:
        yield folder, lambda: folder.chmod(0o555)
        folder.chmod(0o755)
        return
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], check=True)
    try:
        yield folder, lambda: subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_read_only_storage_is_refused_before_anything_is_performed(
    tmp_path: Path, backend: XvfbBackend, start_form: Callable[..., FormApp]
) -> None:
    with small_folder(tmp_path) as (folder, make_read_only):
        path = folder / "clicks.json"
        path.write_text(json.dumps({"trajectory": five_clicks_then(click(SUBMIT))}))
        make_read_only()
        app = start_form()
        with pytest.raises(CacheError, match="nothing was performed"):
            CacheExecutor(backend, ExecutionSettings(delay_time_between_actions=0)).run(path)
        assert app.received(backend) == []
        unsaved = CacheExecutor(backend, ExecutionSettings(delay_time_between_actions=0)).run(
            path, save=False
        )
        assert unsaved.status is ReplayStatus.COMPLETED


def test_a_write_back_that_fails_after_acting_is_a_warning(
    tmp_path: Path, backend: XvfbBackend, start_form: Callable[..., FormApp]
) -> None:
    with small_folder(tmp_path) as (folder, make_read_only):
        path = folder / "clicks.json"
        original = json.dumps({"trajectory": five_clicks_then(click(SUBMIT))})
        path.write_text(original)
        app = start_form()
        pauses: list[float] = []

        def pause(seconds: float) -> None:
            if not pauses:
                make_read_only()  # the storage goes away mid-replay
            pauses.append(seconds)

        settings = ExecutionSettings(delay_time_between_actions=0.01)
        result = CacheExecutor(backend, settings, sleep=pause).run(path)
        assert result.status is ReplayStatus.COMPLETED and result.acted == [0, 1, 2, 3, 4, 5]
        assert result.warnings and "recording it in" in result.warnings[0]
        assert any(event["type"] == "submit" for event in app.received(backend))
        assert path.read_text() == original


def test_parameters_fill_only_placeholders_and_must_be_used(
    tmp_path: Path,
    display: Display,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    login = built(tmp_path, login_history, "-p", "x=a")
    steps = json.loads(login.read_text())["trajectory"]
    assert [step["input"]["action"] for step in steps] == [s["action"] for s in LOGIN]
    assert steps[1]["input"]["text"] == "Ad{{x}}" and steps[3]["input"]["text"].count("{{x}}") == 3
    unused = run_cli(
        "cache", "build", str(login_history), "-o", str(tmp_path / "u.json"), "-p", "user=Nobody"
    )
    assert unused.exit_code == 1 and "no step typed the text of parameter(s) user" in unused.output
    bogus = run_cli(
        "cache",
        "build",
        str(login_history),
        "-o",
        str(tmp_path / "b.json"),
        "--hashed-actions",
        "bogus",
    )
    assert bogus.exit_code == 1 and "unknown action(s) to hash: bogus" in bogus.output
    app = start_form()
    unknown = run_cli(
        "cache", "replay", str(login), "-d", display.name, "-p", "x=e", "-p", "usr=Grace"
    )
    assert unknown.exit_code == 1 and "usr are not used by any step" in unknown.output
    assert app.received(backend) == []


def test_unknown_backend_options_are_one_line_errors(
    tmp_path: Path,
    display: Display,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    cache = built(tmp_path, login_history)
    app = start_form()
    result = run_cli("cache", "replay", str(cache), "-d", display.name, "-O", "bogus=1")
    assert result.exit_code == 1 and "does not take the option(s)" in result.output
    assert "Traceback" not in result.output and app.received(backend) == []
