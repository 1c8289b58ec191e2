"""The disk dump: a copy of every collected screenshot, named per session and call."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from viewfinder.browser import (
    SCREENSHOT_DIR_ENV,
    BrowserSession,
    dump_file_name,
    safe_session_name,
)
from viewfinder.core import Screenshot


def test_the_dump_directory_receives_both_files(
    open_session: Callable[..., BrowserSession], tmp_path: Path, layout: Any
) -> None:
    session = open_session("agent/7", screenshot_dir=tmp_path / "shots")
    result = session.execute("""
await page.screenshot()
await page.screenshot(format="jpeg")
""")
    assert result.ok, result.output
    stamp = result.started_at.strftime("%Y%m%dT%H%M%S%fZ")
    prefix = safe_session_name("agent/7")
    names = sorted(path.name for path in (tmp_path / "shots").iterdir())
    assert names == [f"{prefix}-{stamp}-001.png", f"{prefix}-{stamp}-002.jpg"]
    assert result.files == [str(tmp_path / "shots" / name) for name in names]
    for path, shot in zip(result.files, result.screenshots, strict=True):
        assert Path(path).read_bytes() == shot.data
    on_disk = Screenshot.from_file(result.files[0])
    assert on_disk.pixel(*layout.inside_block()) == layout.colors["blue"]


def test_the_environment_variable_names_the_dump_directory(
    session: BrowserSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCREENSHOT_DIR_ENV, str(tmp_path))
    result = session.execute("await page.screenshot(format='webp')")
    assert [Path(path).name for path in result.files] == [
        f"test-{result.started_at:%Y%m%dT%H%M%S%fZ}-001.webp"
    ]
    monkeypatch.delenv(SCREENSHOT_DIR_ENV)
    assert session.execute("await page.screenshot()").files == []


def test_an_unwritable_dump_directory_is_logged_and_never_fails_the_call(
    open_session: Callable[..., BrowserSession],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    session = open_session("dump", screenshot_dir=blocker / "shots")
    with caplog.at_level(logging.WARNING, logger="viewfinder.browser.dump"):
        result = session.execute("await page.screenshot()\nreturn 'still fine'")
    assert result.ok
    assert result.result == "still fine"
    assert len(result.screenshots) == 1
    assert result.files == []
    assert len(result.warnings) == 1
    assert "screenshot 1 was not written to" in result.warnings[0]
    assert f"Warning: {result.warnings[0]}" in result.output
    assert result.output.endswith("[1 screenshot attached]")
    assert any("screenshot 1 was not written" in record.message for record in caplog.records)


@pytest.mark.parametrize(
    "session_id",
    ["", ".", "..", "../../etc/passwd", "a b/c\\d", "émoji 🦊", "x" * 300, "con:1", "\x00\n"],
)
def test_any_session_id_makes_a_safe_file_name(session_id: str) -> None:
    name = safe_session_name(session_id)
    assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", name), name
    assert len(name) <= 73
    file_name = dump_file_name(session_id, datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=UTC), 3, "png")
    assert file_name == f"{name}-20250102T030405000006Z-003.png"
    assert "/" not in file_name and "\\" not in file_name


def test_ids_that_clean_up_alike_keep_different_names() -> None:
    assert safe_session_name("plain-id_1.2") == "plain-id_1.2"
    assert safe_session_name("a/b") != safe_session_name("a_b")
    assert safe_session_name("a/b") != safe_session_name("a:b")
    assert safe_session_name("a/b") == safe_session_name("a/b")
