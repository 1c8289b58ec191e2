"""Every file the viewer reads itself is confined as its frames are: ``manifest.jsonl``,
``metadata.json`` and ``run.json`` that are symlinks out of PATH are refused, never read;
a FIFO in their place is refused at once, so forty cross-origin ``<img>`` tags on a
page in a real Chromium (they carry no Origin) leave the viewer answering."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from viewfinder.viewer import ViewerServer

from .test_confinement import write_session

#: What a file outside PATH says; none of it may reach a page.
OUTSIDE_DISPLAY = ":4242"


def _artifact(viewer: ViewerServer, name: str) -> dict[str, Any]:
    response = httpx.get(f"{viewer.url}/api/artifact", params={"id": name}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def _problems(view: dict[str, Any]) -> str:
    return " | ".join(problem["message"] for problem in view["problems"])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside PATH (outside it) holding a session of its own."""
    folder = tmp_path / "outside"
    write_session(folder, ["screenshots/0.png", "screenshots/1.png", "screenshots/2.png"],
                  backend_options={"display": OUTSIDE_DISPLAY})  # fmt: skip
    (folder / "run.json").write_text(json.dumps({"exit_code": 77, "file": "secret.py"}))
    return folder


@pytest.mark.parametrize("name", ["manifest.jsonl", "metadata.json"])
def test_a_session_file_that_is_a_symlink_out_is_refused_never_read(
    tmp_path: Path, outside: Path, serve: Callable[..., ViewerServer], name: str
) -> None:
    root = tmp_path / "root"
    session = root / "session"
    write_session(session, ["screenshots/0.png"])
    (session / name).unlink()
    (session / name).symlink_to(outside / name)
    view = _artifact(serve(root=root), "session")
    assert f"{name} cannot be read: refused" in _problems(view), view["problems"]
    assert "symlink" in _problems(view)
    assert OUTSIDE_DISPLAY not in json.dumps(view)
    assert len(view["steps"]) == (0 if name == "manifest.jsonl" else 1)


def test_a_run_json_that_is_a_symlink_out_is_refused_never_read(
    tmp_path: Path, outside: Path, serve: Callable[..., ViewerServer]
) -> None:
    run = tmp_path / "root" / "run"
    run.mkdir(parents=True)
    for text in ("code.py", "stdout.txt", "stderr.txt"):
        (run / text).write_text("print(1)\n" if text == "code.py" else "")
    (run / "run.json").symlink_to(outside / "run.json")
    view = _artifact(serve(root=tmp_path / "root"), "run")
    assert view["kind"] == "exec-run"
    assert "run.json cannot be read: refused" in _problems(view), view["problems"]
    assert "77" not in json.dumps(view["facts"]) and "secret.py" not in json.dumps(view)


def _release(fifo: Path) -> None:
    """End every read still waiting on ``fifo`` (a writer that opens and closes it)."""
    for _ in range(200):
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno in (errno.ENXIO, errno.ENOENT):
                return  # no reader waits on it
            raise
        os.close(fd)


@pytest.fixture
def fifo_session(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "root"
    session = root / "session"
    write_session(session, ["screenshots/0.png"])
    (session / "manifest.jsonl").unlink()
    os.mkfifo(session / "manifest.jsonl")
    try:
        yield root
    finally:
        _release(session / "manifest.jsonl")


def test_a_fifo_manifest_is_refused_at_once_and_the_viewer_keeps_answering(
    fifo_session: Path, serve: Callable[..., ViewerServer], page: Any
) -> None:
    viewer = serve(root=fifo_session)
    address = f"{viewer.url}/api/artifact?id=session"
    # a page of another origin (about:blank) asks forty times; an <img> sends no Origin
    page.set_content("".join(f'<img src="{address}&n={n}">' for n in range(40)))
    page.wait_for_function(
        "() => [...document.images].every((image) => image.complete)", timeout=30000
    )
    info = httpx.get(f"{viewer.url}/api/info", timeout=30)
    assert info.status_code == 200
    view = _artifact(viewer, "session")
    assert "manifest.jsonl cannot be read: refused" in _problems(view)
    assert "not a regular file" in _problems(view)
