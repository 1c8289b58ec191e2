"""The viewer serves only files under the PATH it was given.

A manifest or a run folder that names ``../../etc/passwd``, an absolute path, or a
file that is a symlink leading out gets a refusal, never the file; so does an artifact
name a page sends. Each way out is tested through the real server on loopback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from PIL import Image

from viewfinder.core import Event, EventKind, Point, ScreenSize
from viewfinder.recorder import SessionMetadata
from viewfinder.viewer import Confined, RefusedPathError, ViewerServer

SECRET = Path("/etc/passwd")
UP = "../" * 30  # far enough up from any temporary folder to reach /


def png(path: Path, colour: tuple[int, int, int] = (255, 0, 0)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 48), colour).save(path)


def write_session(folder: Path, refs: list[str], **metadata: object) -> None:
    """A session whose lines name the frames ``refs``; ``screenshots/N.png`` exist."""
    (folder / "screenshots").mkdir(parents=True)
    started = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    SessionMetadata(
        screen=ScreenSize(width=64, height=48),
        backend="xvfb",
        input_source="x11",
        interval_s=0.5,
        started_at=started,
        status="stopped",
        **metadata,  # type: ignore[arg-type]
    ).save(folder / "metadata.json")
    lines = []
    for seq, ref in enumerate(refs):
        png(folder / "screenshots" / f"{seq}.png", (seq * 60, 0, 0))
        event = Event(kind=EventKind.CLICK, position=Point(x=10, y=10), screenshot=ref)
        lines.append(json.dumps(event.to_manifest(seq)))
    (folder / "manifest.jsonl").write_text("".join(line + "\n" for line in lines))


def assert_refused(response: httpx.Response, why: str) -> None:
    assert response.status_code == 403, response.text
    assert "root:" not in response.text  # never a byte of the file
    assert why in response.json()["detail"]


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        (f"{UP}etc/passwd", "through '..'"),
        (str(SECRET), "an absolute path"),
        ("screenshots/link.png", "through a symlink"),
    ],
    ids=["dotdot", "absolute", "symlink"],
)
def test_a_manifest_naming_a_file_outside_gets_a_refusal_never_the_file(
    tmp_path: Path, serve: Callable[..., ViewerServer], ref: str, why: str
) -> None:
    session = tmp_path / "session"
    write_session(session, ["screenshots/0.png", ref, "screenshots/2.png"])
    (session / "screenshots" / "link.png").symlink_to(SECRET)
    viewer = serve(root=tmp_path)
    view = httpx.get(f"{viewer.url}/api/artifact", params={"id": "session"}).json()
    refused = view["steps"][1]
    assert refused["frame"] is None and refused["thumb"] is None
    assert refused["problem"].startswith("refused") and why in refused["problem"]
    assert "1 step(s) have no frame to show (steps 1)" in view["problems"][0]["message"]
    for size in ("full", "thumb"):
        response = httpx.get(
            f"{viewer.url}/api/frame", params={"id": "session", "step": 1, "size": size}
        )
        assert_refused(response, why)
    # the step before it shows its own frame, and is not given the refused one as "after"
    assert httpx.get(f"{viewer.url}{view['steps'][0]['frame']}").status_code == 200
    assert view["steps"][0]["after"] is None


def test_a_frame_file_that_is_a_symlink_out_is_refused_even_with_its_usual_name(
    tmp_path: Path, serve: Callable[..., ViewerServer]
) -> None:
    session = tmp_path / "session"
    write_session(session, ["screenshots/0.png", "screenshots/1.png"])
    (session / "screenshots" / "1.png").unlink()
    (session / "screenshots" / "1.png").symlink_to(SECRET)
    (session / "screenshots" / "current_screenshot.png").symlink_to(SECRET)
    viewer = serve(root=session)
    view = httpx.get(f"{viewer.url}/api/artifact").json()
    assert "through a symlink" in view["steps"][1]["problem"]
    assert view["steps"][1]["after"] is None  # the live frame left behind is refused too
    response = httpx.get(f"{viewer.url}/api/frame", params={"step": 1})
    assert_refused(response, "through a symlink")
    missing = httpx.get(f"{viewer.url}/api/frame", params={"step": 1, "which": "after"})
    assert missing.status_code == 404 and "root:" not in missing.text


@pytest.mark.parametrize(
    ("name", "why"),
    [("../../etc", "through '..'"), ("/etc", "an absolute path"), ("out", "through a symlink")],
    ids=["dotdot", "absolute", "symlink"],
)
def test_an_artifact_name_leading_out_is_refused(
    tmp_path: Path, serve: Callable[..., ViewerServer], name: str, why: str
) -> None:
    write_session(tmp_path / "inside", ["screenshots/0.png"])
    (tmp_path / "out").symlink_to("/etc")
    viewer = serve(root=tmp_path)
    listed = httpx.get(f"{viewer.url}/api/info").json()["top"]["items"]
    assert [item["id"] for item in listed] == ["inside"]  # the symlink out is not listed
    for path in ("/api/artifact", "/api/frame", "/api/video"):
        response = httpx.get(f"{viewer.url}{path}", params={"id": name, "step": 0, "index": 0})
        assert_refused(response, why)


def test_videos_and_exec_captures_leading_out_are_refused(
    tmp_path: Path, serve: Callable[..., ViewerServer]
) -> None:
    session = tmp_path / "session"
    runs = [
        {"started_at": "2026-01-05T10:00:00Z", "backend": "xvfb", "input_source": "x11",
         "video": {"file": f"{UP}etc/passwd", "started_at": "2026-01-05T10:00:00Z"}},
    ]  # fmt: skip
    write_session(session, ["screenshots/0.png"], runs=runs)
    run = tmp_path / "run"
    run.mkdir()
    (run / "stdout.txt").write_text("out")
    (run / "stderr.txt").symlink_to(SECRET)
    (run / "capture-001.png").symlink_to(SECRET)
    (run / "video-001.mp4").symlink_to(SECRET)
    viewer = serve(root=tmp_path)
    view = httpx.get(f"{viewer.url}/api/artifact", params={"id": "session"}).json()
    assert view["videos"] == []
    assert any("video of run 1: refused" in problem["message"] for problem in view["problems"])
    assert (
        httpx.get(f"{viewer.url}/api/video", params={"id": "session", "index": 0}).status_code
        == 404
    )

    view = httpx.get(f"{viewer.url}/api/artifact", params={"id": "run"}).json()
    assert view["kind"] == "exec-run"
    assert view["texts"] == {"stdout": "out", "stderr": ""}
    assert view["videos"] == [] and view["steps"][0]["frame"] is None
    said = " ".join(problem["message"] for problem in view["problems"])
    assert said.count("through a symlink") == 2  # stderr.txt and the video
    response = httpx.get(f"{viewer.url}/api/frame", params={"id": "run", "step": 0})
    assert_refused(response, "through a symlink")


def test_confined_names() -> None:
    confined = Confined("/tmp")
    assert confined.resolve("a/b.png") == Path("/tmp/a/b.png").resolve()
    assert confined.resolve("a/../b.png") == Path("/tmp/b.png").resolve()  # stays inside
    for name in ("", "a\0b", "/tmp/x", "\\\\server\\share", "C:\\x", "../x", "a/../../x"):
        with pytest.raises(RefusedPathError):
            confined.resolve(name)
