"""A ``--workdir`` outside /tmp, where every sandbox sees the machine's files: the
folder names there give no session id away, and code in one session can neither list
the workdir nor read another session's folder.

On loopback a session's ``Mcp-Session-Id`` is its only credential; a folder named by it,
in a workdir any user may list, handed it to every sandbox.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from viewfinder.codeenv.shared_tmp import SHARED_FOLDERS
from viewfinder.mcp.testing import Connection, HttpServer, text_of

ROOT = Path(__file__).resolve().parents[3]


def outside_tmp() -> Path:
    """A folder that sandboxes see as it is (not under /tmp, /var/tmp or /dev/shm, of
    which each sandbox has its own): the checkout's build folder, or, for a checkout
    under one of those, the user's cache folder."""
    for candidate in (ROOT / "build", Path.home() / ".cache"):
        parent = Path(os.path.realpath(candidate))
        if not any(parent == top or top in parent.parents for top in SHARED_FOLDERS):
            return parent
    raise AssertionError(f"no folder outside {SHARED_FOLDERS} to put the workdir in")


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    folder = outside_tmp() / f"viewfinder-mcp-workdir-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    server = HttpServer(folder, "--size", "640x480")
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder)


def connect(server: HttpServer, ids: list[str]) -> Connection:
    """A client session whose ``Mcp-Session-Id`` is appended to ``ids``."""

    async def keep_id(response: httpx2.Response) -> None:
        value = response.headers.get("mcp-session-id")
        if value and value not in ids:
            ids.append(value)

    http = httpx2.AsyncClient(
        timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [keep_id]}
    )
    return Connection(Client(streamable_http_client(server.url, http_client=http)), http)


def test_no_session_id_is_a_name_and_no_sandbox_lists_the_workdir(server: HttpServer) -> None:
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    alice_ids: list[str] = []
    bob_ids: list[str] = []
    alice, bob = connect(server, alice_ids), connect(server, bob_ids)
    try:
        started = alice.call("record_start", {"folder": "secret-run"})
        assert not started.is_error, text_of(started)
        alice.call("computer", {"action": "left_click", "coordinate": [20, 20]})
        assert not alice.call("record_stop").is_error
        recording = Path(started.structured_content["folder"])
        folder = recording.parent
        assert alice_ids and bob_ids

        # the names in the workdir say nothing of the ids
        names = os.listdir(server.workdir)
        assert all(re.fullmatch(r"session-[0-9a-f]{32}", name) for name in names), names
        for session_id in (*alice_ids, *bob_ids):
            assert not any(session_id in name for name in names), (session_id, names)
        info = server.workdir.stat()
        assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.geteuid()

        # code in bob's sandbox: the workdir cannot be listed, alice's folder not read
        targets = [str(server.workdir), str(folder), str(recording / "manifest.jsonl")]
        code = (
            "import json, os\n"
            "out = {}\n"
            f"for path in {targets!r}:\n"
            "    try:\n"
            "        out[path] = repr(open(path).read()[:80] if path.endswith('.jsonl')"
            " else os.listdir(path))\n"
            "    except OSError as exc:\n"
            "        out[path] = type(exc).__name__\n"
            "print(json.dumps(out))\n"
        )
        ran = bob.call("run_code", {"code": code})
        assert not ran.is_error, text_of(ran)
        (line,) = [line for line in text_of(ran).splitlines() if line.startswith("{")]
        seen = json.loads(line)
        # refused, or not even there in the sandbox's view: never listed, never read
        assert set(seen) == set(targets), seen
        assert set(seen.values()) <= {"PermissionError", "FileNotFoundError"}, seen
    finally:
        alice.close()
        bob.close()
