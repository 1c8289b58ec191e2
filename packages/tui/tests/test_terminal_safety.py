"""What a child prints never drives the user's terminal.

The corpus holds what a hostile program (or a file it cats) could send: a window
title, a clipboard write (OSC 52), a hyperlink (OSC 8), a full reset, a clear screen,
the alternate screen, cursor moves, a DCS string, 8-bit C1 sequences, a bell, a bare
ESC. In the TUI every one is dropped or shown as a visible symbol; in a real pty no
sequence of the child's reaches the terminal.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

from viewfinder.tui import ProcessManager
from viewfinder.tui.output import LineSplitter, terminal_safe
from viewfinder.tui.testing import SIZE, build_app, log_lines, type_command, until

CORPUS = [
    ("title", "\x1b]0;OWNED\x07after", "after"),
    ("title with ST", "\x1b]2;OWNED\x1b\\after", "after"),
    ("clipboard", "\x1b]52;c;T1dORUQ=\x07after", "after"),
    ("hyperlink", "\x1b]8;;https://example.invalid\x1b\\text\x1b]8;;\x1b\\", "text"),
    ("clear screen and home", "\x1b[2J\x1b[Hafter", "after"),
    ("alternate screen", "\x1b[?1049hafter\x1b[?1049l", "after"),
    ("cursor moves", "a\x1b[10;10Hb\x1b[5Ac\x1b7d\x1b8", "abcd"),
    ("colours", "\x1b[1;31mred\x1b[0m", "red"),
    ("full reset", "\x1bcafter", "after"),
    ("DCS", "\x1bP1$r0m\x1b\\after", "after"),
    ("8-bit CSI", "a\x9b2Jb", "ab"),
    ("8-bit OSC", "\x9d0;OWNED\x9cafter", "after"),
    ("bell", "ding\x07", "ding\u2407"),
    ("bare ESC", "esc\x1b", "esc\u241b"),
    ("lone C1", "x\x85y", "x\\x85y"),
    ("tab stays", "a\tb", "a\tb"),
]


def hostile_script(folder: Path, *, linger: bool) -> Path:
    """A program printing the corpus, one item a line (then staying alive if ``linger``)."""
    script = folder / "hostile.py"
    script.write_text(
        "import sys, time\n"
        f"for _, text, _ in {CORPUS!r}:\n"
        "    sys.stdout.write(text + '\\n')\n"
        "sys.stdout.flush()\n"
        f"time.sleep({30 if linger else 0})\n"
    )
    return script


def test_every_sequence_of_the_corpus_is_dropped_or_shown() -> None:
    for name, text, shown in CORPUS:
        assert terminal_safe(text) == shown, name


def test_sequences_split_across_reads_are_still_caught() -> None:
    splitter = LineSplitter()
    data = "".join(text + "\n" for _, text, _ in CORPUS).encode()
    lines = []
    for start in range(0, len(data), 7):  # a pipe hands over any number of bytes
        lines += splitter.feed(data[start : start + 7])
    assert lines == [shown for _, _, shown in CORPUS]


def test_a_carriage_return_starts_the_line_over() -> None:
    assert LineSplitter().feed(b"10%\r50%\r100%\n") == ["100%"]


async def test_the_tui_shows_a_hostile_childs_output_as_text(
    processes: ProcessManager, tmp_path: Path
) -> None:
    script = hostile_script(tmp_path, linger=False)
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        title = app.title
        await type_command(pilot, f"!run {sys.executable} {script}")
        await until(pilot, lambda: len(log_lines(app)) == len(CORPUS), "the corpus in the log")
        assert log_lines(app) == [shown for _, _, shown in CORPUS]
        assert app.title == title


def test_in_a_real_terminal_no_sequence_of_the_child_gets_through(tmp_path: Path) -> None:
    script = hostile_script(tmp_path, linger=True)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    env["XDG_CONFIG_HOME"] = str(tmp_path)  # no user configuration
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI on the pty
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-m", "viewfinder.cli", "tui"], env)
    seen = bytearray()
    try:
        _read_until(fd, seen, b"!help", timeout=60)
        os.write(fd, f"!run {sys.executable} {script}".encode())
        os.write(fd, b"\r")
        _read_until(fd, seen, b"after", timeout=60)
        _read_until(fd, seen, "ding\u2407".encode(), timeout=30)
        os.write(fd, b"\x11")  # Ctrl-Q
        _read_until(fd, seen, None, timeout=30)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    for forbidden in (b"\x1b]0;OWNED", b"\x1b]2;OWNED", b"\x1b]52;", b"\x1b]8;;https", b"\x9d0;"):
        assert forbidden not in seen, forbidden
    assert b"\x1bc" not in seen  # no full reset of the terminal
    assert b"T1dORUQ=" not in seen  # the clipboard payload is not even shown


def _alive(pid: int) -> bool:
    """True while ``pid`` runs; reaps it once it has exited."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == 0


def _read_until(fd: int, seen: bytearray, marker: bytes | None, timeout: float) -> None:
    """Read the pty into ``seen`` until ``marker`` shows up (None: until it closes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker is not None and marker in seen:
            return
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the TUI exited and closed the pty
            chunk = b""
        if not chunk:
            if marker is None:
                return
            break
        seen += chunk
    raise AssertionError(f"no {marker!r} from the TUI within {timeout:g} s")
