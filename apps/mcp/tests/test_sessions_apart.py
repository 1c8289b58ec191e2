"""Two HTTP sessions of one ``viewfinder mcp --http`` as root, with one ``--workdir``:
neither reads the other's recordings, through the tools or through the code it runs.

Each session writes under a folder of its own (``session-<random>``, mode 0700, the
server's user alone, in a workdir made 0700 too); paths the tools take stay inside it;
the sandbox runs as a user id of its own, which the folders keep out.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.codeenv.shared_tmp import SHARED_FOLDERS
from viewfinder.codeenv.tools import RUN_CODE_DESCRIPTION
from viewfinder.mcp.testing import HttpServer, text_of

ROOT = Path(__file__).resolve().parents[3]


def world_enterable_parent() -> Path:
    """A folder every user may enter and a sandbox sees as it is: the checkout's
    ``build/``, unless the checkout lies under /tmp, /var/tmp or /dev/shm (a clone made
    there), of which each sandbox has a private one."""
    for parent in (ROOT / "build", Path("/srv"), Path("/opt"), Path("/var/lib")):
        real = Path(os.path.realpath(parent))
        if any(real == top or top in real.parents for top in SHARED_FOLDERS):
            continue
        above = [folder for folder in [real, *real.parents] if folder.exists()]
        if all(folder.stat().st_mode & stat.S_IXOTH for folder in above):
            return parent
    raise AssertionError("no folder outside /tmp that every user may enter")


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    # a folder every user may enter, as a user's own workdir would be
    folder = world_enterable_parent() / f"viewfinder-mcp-apart-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    server = HttpServer(folder, "--size", "640x480")
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder)


def test_a_session_cannot_read_another_sessions_recording(server: HttpServer) -> None:
    alice, bob = server.connect(), server.connect()
    try:
        started = alice.call("record_start", {"folder": "secret-run"})
        assert not started.is_error, text_of(started)
        alice.call("computer", {"action": "left_click", "coordinate": [20, 20]})
        assert not alice.call("record_stop").is_error
        recording = Path(started.structured_content["folder"])
        folder = recording.parent
        assert folder.parent == server.workdir and folder.name.startswith("session-")
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert (recording / "manifest.jsonl").exists()

        # through the tools: paths stay inside bob's own folder
        for path in (str(recording), f"../{folder.name}/secret-run"):
            refused = bob.call("record_start", {"folder": path})
            assert refused.is_error and "outside this session's folder" in text_of(refused)
            checked = bob.call("cache_check", {"file": f"{path}/manifest.jsonl"})
            assert checked.is_error and "outside this session's folder" in text_of(checked)
        own = bob.call("record_start", {"folder": "secret-run"})
        assert not own.is_error, text_of(own)  # a folder of the name, bob's own
        assert Path(own.structured_content["folder"]).parent != folder
        bob.call("record_stop")

        # through run_code: the sandbox's user is kept out of alice's folder, though it
        # reads what every user may (a file beside the workdir)
        public = server.workdir.parent / "public.txt"
        public.write_text("anyone")
        public.chmod(0o644)
        code = (
            "import json, os\n"
            f"out = {{'public': open({str(public)!r}).read()}}\n"
            f"for path in ({str(folder)!r}, {str(recording / 'manifest.jsonl')!r}):\n"
            "    try:\n"
            "        open(path).read() if path.endswith('.jsonl') else os.listdir(path)\n"
            "        out[path] = 'read'\n"
            "    except OSError as exc:\n"
            "        out[path] = type(exc).__name__\n"
            "print(json.dumps(out))\n"
        )
        ran = bob.call("run_code", {"code": code})
        assert not ran.is_error, text_of(ran)
        (line,) = [line for line in text_of(ran).splitlines() if line.startswith("{")]
        seen = json.loads(line)
        assert seen.pop("public") == "anyone"
        assert set(seen.values()) == {"PermissionError"}, seen
        # which is what the tool tells the model
        assert "can read what every user of this machine may read" in RUN_CODE_DESCRIPTION
        assert "not other sessions' files" in RUN_CODE_DESCRIPTION
    finally:
        alice.close()
        bob.close()
