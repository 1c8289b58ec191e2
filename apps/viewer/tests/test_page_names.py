"""What the page names, in a real Chromium: a title with bidirectional controls cannot
read backwards, and a downloaded frame keeps its format."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.browser.dump import dump_file_name
from viewfinder.recorder import Recorder
from viewfinder.viewer import ViewerServer

from .conftest import open_page

CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_bidi_controls_in_a_folder_name_are_neutralised_in_titles(
    tmp_path: Path, serve: Callable[..., ViewerServer], page: Any, canvas_backend: Any
) -> None:
    name = "report\u202egnp.exe"  # reads "reportexe.png" when the control works
    with Recorder(tmp_path / name, "canvas") as recorder:
        recorder.click(3, 4)
    (tmp_path / f"other{CONTROLS}").mkdir()
    (tmp_path / f"other{CONTROLS}" / "stdout.txt").write_text("")
    (tmp_path / f"other{CONTROLS}" / "stderr.txt").write_text("")
    viewer = serve(root=tmp_path)
    open_page(page, viewer.url)
    listed = page.locator("table.list a").all_inner_texts()
    assert sorted(listed) == sorted(["other" + "\ufffd" * 9, "report\ufffdgnp.exe"])
    open_page(page, f"{viewer.url}/?a={name}")
    for text in (
        page.title(),
        page.locator("h1").inner_text(),
        page.locator("p.path").inner_text(),
    ):
        assert not any(control in text for control in CONTROLS), repr(text)
        assert "report\ufffdgnp.exe" in text
    # the name is kept, only shown safely: the step's frame is still there
    page.wait_for_function("document.getElementById('frame')?.naturalWidth > 0")


def test_a_downloaded_frame_keeps_its_format(
    tmp_path: Path, serve: Callable[..., ViewerServer], page: Any
) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    call = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    formats = [("png", "PNG", b"\x89PNG"), ("jpg", "JPEG", b"\xff\xd8"), ("webp", "WEBP", b"RIFF")]
    for seq, (extension, pillow, _) in enumerate(formats, start=1):
        Image.new("RGB", (40, 30), (0, 90 * seq, 0)).save(
            shots / dump_file_name("agent", call, seq, extension), pillow
        )
    viewer = serve(root=shots)
    open_page(page, viewer.url)
    for index, (extension, _, magic) in enumerate(formats):
        page.goto(f"{viewer.url}/#step-{index}")
        page.wait_for_selector(f"#step-item-{index}[aria-current]")
        link = page.locator("a.download")
        assert link.get_attribute("download") == f"step-{index}.{extension}"
        with page.expect_download() as started:
            link.click()
        download = started.value
        assert download.suggested_filename == f"step-{index}.{extension}"
        assert Path(download.path()).read_bytes().startswith(magic)
