"""The commands the README, docs/guide.md and docs/elements.md show run as written.

Each ```console block is a session: its ``$`` lines run in order in an empty folder (the
repository's ``examples/`` linked in), with a fresh display state; the lines after a
command are output it must print (display numbers may differ). Commands that run until
stopped (``serve``, ``mcp --http``, ``record``, ``tui``) are started, given something to
do, and stopped the way a person stops them (Ctrl-C, Ctrl-Q). The doc's ``--port N`` becomes
a port that is free here, so that a listener the machine (or another test) has on N is
never taken for the command's.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from viewfinder.cdp.testing import free_port
from viewfinder.xvfb import registry

ROOT = Path(__file__).resolve().parent.parent
DOCS = ["README.md", "docs/guide.md"]
#: Docs with shorter sessions, run the same way (docs/elements.md: the elements from a shell).
SHORT_DOCS = ["docs/elements.md"]
#: A program for `viewfinder exec program.py` in the guides' sessions (the README's
#: writes its own).
PROGRAM = (
    "import tkinter as tk\n"
    "root = tk.Tk()\n"
    "tk.Frame(root, bg='blue', width=200, height=100).pack()\n"
    "capture_screenshot()\n"
)


@dataclass
class Command:
    line: str
    where: str
    expected: list[str] = field(default_factory=list)


def console_commands(doc: str) -> list[Command]:
    """Every ``$`` line of the doc's console blocks, with the output lines that follow it."""
    commands: list[Command] = []
    inside = False
    for number, line in enumerate((ROOT / doc).read_text().splitlines(), 1):
        if line.startswith("```"):
            inside = line.strip() == "```console"
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            commands.append(Command(line[2:], f"{doc}:{number}"))
        elif commands and line.strip():
            commands[-1].expected.append(line)
    return commands


def _normal(text: str) -> str:
    return " ".join(re.sub(r":\d+\b", ":N", text).split())


class DocSession:
    """Runs one doc's commands in a scratch folder, as a person at a shell would."""

    def __init__(self, folder: Path, *, checkout: bool = True) -> None:
        self.folder = folder
        if checkout:  # the guides run in a checkout; the README's session in an empty folder
            (folder / "examples").symlink_to(ROOT / "examples")
            (folder / "program.py").write_text(PROGRAM)
        self.env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
        self.env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{self.env['PATH']}"
        self.env[registry.STATE_DIR_ENV] = str(folder / ".state")
        self.displays: list[str] = []  # the doc's :1, :2 ... as started here

    def substitute(self, line: str) -> str:
        """The doc's display numbers (:1, :2) become the ones this session started."""
        for index, name in enumerate(self.displays, 1):
            line = re.sub(rf"(?<![\w.]):{index}\b", name, line)
        return line

    def run(self, command: Command) -> str:
        line = re.sub(r"--port \d+", lambda _: f"--port {free_port()}", command.line)
        line = self.substitute(line)
        words = shlex.split(line, comments=True)
        evaluated = re.fullmatch(r'eval "\$\((.*)\)"', line.split("  #")[0].strip())
        if evaluated:
            output = self._run(evaluated.group(1), command)
            for name, value in re.findall(r"^export (\w+)=(\S+)$", output, re.MULTILINE):
                self.env[name] = value
        elif (
            words[1:2] in (["serve"], ["tui"])
            or words[1:3] == ["mcp", "--http"]
            or (words[1:2] == ["record"] and words[2] != "show")
        ):
            output = self._run_until_stopped(line, words, command)
        else:
            output = self._run(line, command)
        started = re.findall(r"^export DISPLAY=(:\d+)$", output, re.MULTILINE)
        self.displays += started
        return output

    def _run(self, line: str, command: Command) -> str:
        result = subprocess.run(
            ["bash", "-c", line],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        output = result.stdout + result.stderr
        assert result.returncode == 0, (
            f"{command.where}: `{line}` exited {result.returncode}\n{output}"
        )
        self._check(command, output)
        return output

    def _run_until_stopped(self, line: str, words: list[str], command: Command) -> str:
        tui = words[1] == "tui"
        argv = ["script", "-qfec", line, "/dev/null"] if tui else ["bash", "-c", f"exec {line}"]
        process = subprocess.Popen(
            argv,
            cwd=self.folder,
            env={**self.env, "TERM": "xterm-256color"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            if words[1] in ("serve", "mcp"):
                port = int(words[words.index("--port") + 1])
                _wait_for(
                    lambda: _listening(port) or process.poll() is not None,
                    f"{command.where}: the server on {port}",
                )
            elif tui:
                time.sleep(5)  # drawn by then, even on a loaded machine
                assert process.stdin is not None
                process.stdin.write(b"\x11")  # Ctrl-Q
                process.stdin.flush()
            else:  # record: a person clicks and types while it runs
                _wait_for(lambda: (self.folder / "session" / "manifest.jsonl").exists(), "record")
                time.sleep(1)
                xdotool = ["xdotool", "mousemove", "200", "150", "click", "1", "type", "hi"]
                subprocess.run(xdotool, env=self.env, check=True, timeout=30)
                time.sleep(2)
            if not tui and process.poll() is None:  # ended on its own: its output says why
                os.killpg(process.pid, signal.SIGINT)  # Ctrl-C
            output, _ = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        text = output.decode(errors="replace")
        assert process.returncode in (0, 130), (
            f"{command.where}: `{line}` exited {process.returncode}\n{text}"
        )
        assert "Traceback" not in text, f"{command.where}: `{line}`\n{text}"
        self._check(command, text)
        return text

    @staticmethod
    def _check(command: Command, output: str) -> None:
        assert "Traceback" not in output, f"{command.where}\n{output}"
        printed = [_normal(line) for line in output.splitlines()]
        for expected in command.expected:
            want = _normal(expected)
            assert any(line.startswith(want) for line in printed), (
                f"{command.where}: expected a line starting {expected!r}; got:\n{output}"
            )

    def close(self) -> None:
        """Stop the displays the doc left running (its own state folder's only)."""
        subprocess.run(
            ["viewfinder", "display", "stop", "--all"],
            env=self.env,
            capture_output=True,
            timeout=60,
            check=True,
        )


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _wait_for(predicate: object, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_the_docs_have_console_sessions() -> None:
    for doc in DOCS:
        assert len(console_commands(doc)) >= 10, doc


@pytest.mark.parametrize("doc", DOCS + SHORT_DOCS)
def test_every_command_of_the_doc_runs_as_written(doc: str, tmp_path: Path) -> None:
    session = DocSession(tmp_path, checkout=doc != "README.md")
    short = None
    if doc in SHORT_DOCS:  # the buses' sockets live there: a unix socket path is short
        short = tempfile.mkdtemp(prefix="vfdoc-")
        session.env[registry.STATE_DIR_ENV] = short
    try:
        for command in console_commands(doc):
            session.run(command)
    finally:
        session.close()
        if short is not None:
            shutil.rmtree(short, ignore_errors=True)
