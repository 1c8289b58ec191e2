"""CommandHistory without Textual: the walk, what is kept, the file and bad files."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from viewfinder.tui.errors import HistoryFileError
from viewfinder.tui.history import CommandHistory


def test_up_walks_older_down_walks_newer_and_restores_the_draft() -> None:
    history = CommandHistory(["!ps", "!help", "!logs 1"])
    assert not history.walking
    assert history.older("!ki") == "!logs 1"
    assert history.walking
    assert history.older("ignored while walking") == "!help"
    assert history.older("") == "!ps"
    assert history.older("") is None  # the oldest: stays there
    assert history.newer() == "!help"
    assert history.newer() == "!logs 1"
    assert history.newer() == "!ki"  # past the newest: what was being typed
    assert not history.walking
    assert history.newer() is None
    assert history.older("again") == "!logs 1"  # a new walk starts from the newest
    assert history.newer() == "again"


def test_an_empty_history_has_nothing_to_walk() -> None:
    history = CommandHistory()
    assert history.older("draft") is None
    assert history.newer() is None
    assert not history.walking


def test_add_ends_the_walk() -> None:
    history = CommandHistory(["!ps", "!help"])
    history.older("")
    history.older("")
    assert history.add("!kill 1")
    assert not history.walking
    assert history.older("") == "!kill 1"


def test_blank_lines_repeats_and_a_leading_space_are_not_kept() -> None:
    history = CommandHistory()
    assert history.add("!ps")
    assert not history.add("!ps")  # the same as the newest
    assert not history.add("  !ps  ")  # a leading space: not kept (bash's ignorespace)
    assert not history.add("")
    assert not history.add("   ")
    assert history.add("!help")
    assert history.add("!ps")  # a repeat of an older one is kept: it is newest now
    assert history.add("!run echo 'a\nb'")  # one line, whatever was pasted
    assert history.entries == ("!ps", "!help", "!ps", "!run echo 'a b'")
    seeded = CommandHistory(["!ps", "!ps", "", "  !help  ", "!help"])
    assert seeded.entries == ("!ps", "!help")


def test_escape_sequences_are_not_kept() -> None:
    history = CommandHistory()
    history.add("!run echo \x1b]0;title\x07hi\x07")
    assert history.entries == ("!run echo hi\u2407",)


def test_persists_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "config" / "viewfinder" / "history"  # folders made on first save
    first = CommandHistory.load(path)
    assert first.entries == () and first.problem is None and not path.exists()
    first.add("!run sleep 60")
    first.add("!ps")
    first.add("!ps")
    assert path.read_text(encoding="utf-8") == "!run sleep 60\n!ps\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # commands may hold secrets
    second = CommandHistory.load(path)
    assert second.entries == ("!run sleep 60", "!ps")
    assert second.older("") == "!ps"
    second.add("!kill 1")
    third = CommandHistory.load(path)
    assert third.entries == ("!run sleep 60", "!ps", "!kill 1")


def test_two_sessions_at_once_both_keep_their_commands(tmp_path: Path) -> None:
    path = tmp_path / "history"
    one, two = CommandHistory.load(path), CommandHistory.load(path)
    one.add("!ps")
    two.add("!help")
    one.add("!kill 1")
    assert CommandHistory.load(path).entries == ("!ps", "!help", "!kill 1")


def test_the_cap_keeps_the_newest(tmp_path: Path) -> None:
    path = tmp_path / "history"
    history = CommandHistory.load(path, max_entries=3)
    for number in range(10):
        history.add(f"!logs {number}")
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) <= 6  # rewritten once it holds twice the cap
        assert lines[-1] == f"!logs {number}"
    assert history.entries == ("!logs 7", "!logs 8", "!logs 9")
    assert CommandHistory.load(path, max_entries=3).entries == history.entries
    assert CommandHistory.load(path, max_entries=2).entries == ("!logs 8", "!logs 9")
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left


def test_a_cap_of_zero_keeps_nothing(tmp_path: Path) -> None:
    history = CommandHistory.load(tmp_path / "history", max_entries=0)
    assert not history.add("!ps")
    assert history.entries == () and history.older("") is None
    assert not (tmp_path / "history").exists()
    with pytest.raises(ValueError, match="max_entries"):
        CommandHistory(max_entries=-1)


def test_a_file_without_a_last_newline_or_with_crlf(tmp_path: Path) -> None:
    path = tmp_path / "history"
    path.write_bytes(b"!ps\r\n\n!help")
    history = CommandHistory.load(path)
    assert history.entries == ("!ps", "!help")
    history.add("!kill 1")
    assert path.read_bytes() == b"!ps\r\n\n!help\n!kill 1\n"
    assert CommandHistory.load(path).entries == ("!ps", "!help", "!kill 1")


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"!ps\n\xff\xfe!help\n", "not UTF-8 text"), (b"!ps\n\x00\x00\x00\n", "NUL bytes")],
)
def test_a_corrupt_file_is_set_aside_with_a_notice(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "history"
    path.write_bytes(content)
    history = CommandHistory.load(path)
    assert history.entries == ()
    assert history.problem is not None
    assert reason in history.problem and str(path) in history.problem
    aside = tmp_path / "history.bad"
    assert f"moved it to {aside}" in history.problem
    assert aside.read_bytes() == content  # nothing the user had is lost
    history.add("!ps")
    assert path.read_text(encoding="utf-8") == "!ps\n"
    assert CommandHistory.load(path).problem is None


def test_an_unreadable_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "history"
    path.mkdir()  # something that is not a readable file, even for root
    history = CommandHistory.load(path)
    assert history.problem is not None
    assert "cannot read the command history" in history.problem
    assert "not saved" in history.problem
    assert history.path is None
    assert history.add("!ps")  # kept in memory, never written
    assert history.entries == ("!ps",)
    assert path.is_dir() and list(path.iterdir()) == []


def test_a_file_that_cannot_be_written_is_said_once(tmp_path: Path) -> None:
    folder = tmp_path / "config"
    history = CommandHistory.load(folder / "history")
    assert history.problem is None
    folder.write_text("a file where the folder should be")  # made after the start
    with pytest.raises(HistoryFileError) as caught:
        history.add("!ps")
    assert str(caught.value).startswith(f"cannot save the command history to {folder}/history (")
    assert str(caught.value).endswith("commands of this session are kept in memory only")
    assert history.entries == ("!ps",) and history.path is None
    assert history.add("!help")  # no second error: saving stopped
    assert history.entries == ("!ps", "!help")
