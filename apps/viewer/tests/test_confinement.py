"""The viewer serves only files under the PATH it was given.

A manifest or a run folder that names ``../../etc/passwd``, an absolute path, or a
file that is a symlink leading out gets a refusal, never the file; so does an artifact
name a page sends; so does a file swapped after it was read (a symlink, a renamed
folder, a hard link, a FIFO). A decompression bomb gets a 422, not a thumbnail. Each
way out is tested through the real server on loopback.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from PIL import Image

from viewfinder.core import Event, EventKind, Point, ScreenSize
from viewfinder.core.testing import huge_png
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


# -- what is served is what was checked: the file is opened once, under PATH ----------


def frame_of(viewer: ViewerServer, step: int, size: str = "full") -> httpx.Response:
    params = {"id": "session", "step": step, "size": size}
    return httpx.get(f"{viewer.url}/api/frame", params=params, timeout=60)


@pytest.fixture
def served_session(
    tmp_path: Path, serve: Callable[..., ViewerServer]
) -> tuple[ViewerServer, Path, Path]:
    """A viewer whose session was read and its frame 0 served once (full and thumb);
    and a folder outside PATH with a PNG of its own."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    write_session(root / "session", ["screenshots/0.png", "screenshots/1.png"])
    png(outside / "secret.png", (0, 0, 255))
    viewer = serve(root=root)
    assert httpx.get(f"{viewer.url}/api/artifact", params={"id": "session"}).status_code == 200
    first = frame_of(viewer, 0)
    assert first.status_code == 200
    assert Image.open(io.BytesIO(first.content)).getpixel((5, 5)) == (0, 0, 0)
    assert frame_of(viewer, 1, "thumb").status_code == 200
    return viewer, root / "session" / "screenshots", outside


@pytest.mark.parametrize("size", ["full", "thumb"])
def test_a_frame_swapped_for_a_symlink_after_it_was_read_is_refused(
    served_session: tuple[ViewerServer, Path, Path], size: str
) -> None:
    viewer, shots, _ = served_session
    (shots / "0.png").unlink()
    (shots / "0.png").symlink_to(SECRET)
    assert_refused(frame_of(viewer, 0, size), "symlink")
    assert frame_of(viewer, 1, size).status_code == 200  # the others are still served


def test_a_folder_renamed_and_replaced_by_a_symlink_out_is_refused(
    served_session: tuple[ViewerServer, Path, Path],
) -> None:
    """The rename race: the frame's folder moves away and a symlink to a folder outside,
    holding a file of the same name, takes its place."""
    viewer, shots, outside = served_session
    (outside / "0.png").write_bytes((outside / "secret.png").read_bytes())
    shots.rename(shots.with_name("moved"))
    shots.symlink_to(outside, target_is_directory=True)
    for size in ("full", "thumb"):
        response = frame_of(viewer, 0, size)
        assert response.status_code == 403 and "symlink" in response.json()["detail"]
    # a regular file renamed into the frame's place is a file under PATH: served
    shots.unlink()
    shots.with_name("moved").rename(shots)
    (shots / "1.png").rename(shots / "0.png")
    renamed = frame_of(viewer, 0)
    assert renamed.status_code == 200
    assert Image.open(io.BytesIO(renamed.content)).getpixel((5, 5)) == (60, 0, 0)


def test_a_hard_link_to_a_file_outside_is_refused(
    served_session: tuple[ViewerServer, Path, Path],
) -> None:
    viewer, shots, outside = served_session
    (shots / "0.png").unlink()
    os.link(outside / "secret.png", shots / "0.png")
    for size in ("full", "thumb"):
        response = frame_of(viewer, 0, size)
        assert response.status_code == 403 and "hard links" in response.json()["detail"]


def test_a_fifo_in_a_frames_place_is_refused_without_waiting_for_a_writer(
    served_session: tuple[ViewerServer, Path, Path],
) -> None:
    viewer, shots, _ = served_session
    (shots / "0.png").unlink()
    os.mkfifo(shots / "0.png")
    response = frame_of(viewer, 0)
    assert response.status_code == 403 and "not a regular file" in response.json()["detail"]
    (shots / "0.png").unlink()
    assert frame_of(viewer, 0).status_code == 404  # gone: missing, not refused


def test_a_decompression_bomb_gets_a_4xx_with_the_reason(
    tmp_path: Path, serve: Callable[..., ViewerServer]
) -> None:
    """13000x13000 (0.5 MB, 507 MB decoded) gets no thumbnail; past Pillow's own limit
    neither; the full frame is still sent as it is, and the server keeps serving."""
    session = tmp_path / "session"
    write_session(session, ["screenshots/0.png", "screenshots/1.png", "screenshots/2.png"])
    huge_png(session / "screenshots" / "0.png", 13000, 13000)
    huge_png(session / "screenshots" / "1.png", 20000, 10000)  # over Pillow's limit, x2
    viewer = serve(root=tmp_path)
    for step, size in ((0, "13000x13000"), (1, "200000000 pixels")):
        refused = frame_of(viewer, step, "thumb")
        assert refused.status_code == 422, refused.text
        assert size in refused.json()["detail"] and "full frame" in refused.json()["detail"]
        whole = frame_of(viewer, step)
        assert whole.status_code == 200 and whole.content[:8] == b"\x89PNG\r\n\x1a\n"
    (session / "screenshots" / "2.png").write_bytes(b"\x89PNG\r\n\x1a\nnot a png at all")
    broken = frame_of(viewer, 2, "thumb")
    assert broken.status_code == 422 and "cannot be decoded" in broken.json()["detail"]
    assert frame_of(viewer, 3, "thumb").status_code == 404
