"""``viewfinder desktop act``: where the screenshot goes, where the text comes from,
and the inputs it refuses in one line."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core.testing import wait_until
from viewfinder.desktop import Desktop

runner = CliRunner()
GREY = (128, 128, 128)


@pytest.fixture(scope="module")
def form_desktop(
    tmp_path_factory: pytest.TempPathFactory, form_app: Callable[..., list[str]]
) -> Iterator[tuple[Desktop, Path]]:
    state = tmp_path_factory.mktemp("form") / "state.json"
    with Desktop(size=(800, 600), apps=[form_app(state)]) as desktop:
        yield desktop, state


def act(desktop: Desktop, action: dict[str, Any] | str, *options: str, stdin: str = "") -> Any:
    text = action if isinstance(action, str) else json.dumps(action)
    return runner.invoke(
        build_app(), ["desktop", "act", text, "-d", desktop.display_name, *options], input=stdin
    )


def entry_text(state: Path, form_state: Callable[[Path], Any]) -> str:
    return form_state(state).get("entry", {}).get("text", "")


def focus_entry(desktop: Desktop, state: Path, form_state: Callable[[Path], Any]) -> None:
    layout = wait_until(lambda: form_state(state).get("layout"), "the form drawn")
    x, y, width, height = layout["entry"]
    centre = [x + width // 2, y + height // 2]
    assert act(desktop, {"action": "triple_click", "coordinate": centre}).exit_code == 0
    assert act(desktop, {"action": "key", "text": "BackSpace"}).exit_code == 0
    wait_until(lambda: entry_text(state, form_state) == "", "an empty entry")


@pytest.mark.parametrize(("name", "magic"), [("shot.jpg", b"\xff\xd8"), ("shot.webp", b"RIFF")])
def test_the_extension_names_the_format_written(
    form_desktop: tuple[Desktop, Path], tmp_path: Path, name: str, magic: bytes
) -> None:
    desktop, _ = form_desktop
    path = tmp_path / name
    result = act(desktop, {"action": "screenshot"}, "-o", str(path))
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    assert data.startswith(magic)
    image = Image.open(io.BytesIO(data)).convert("RGB")
    assert image.size == (800, 600)
    # the form's grey background, as the PNG would show it (lossy: within a few levels)
    png = desktop.screenshot().to_pil().convert("RGB")
    corner = (790, 590)
    pairs = zip(image.getpixel(corner), png.getpixel(corner), strict=True)
    assert all(abs(a - b) <= 8 for a, b in pairs)


def test_dash_writes_the_png_to_stdout_and_the_words_to_stderr(
    form_desktop: tuple[Desktop, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    desktop, _ = form_desktop
    monkeypatch.chdir(tmp_path)
    result = act(desktop, {"action": "screenshot"}, "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes.startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(result.stdout_bytes)).size == (800, 600)
    assert "screenshot 800x600 PNG" in result.stderr
    assert not list(tmp_path.iterdir())  # no file named "-.png"


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("/nonexistent/dir/x.png", "does not exist"),
        ("shot.gif", "not an image extension"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_acting(
    form_desktop: tuple[Desktop, Path], tmp_path: Path, out: str, message: str
) -> None:
    desktop, _ = form_desktop
    target = out if out.startswith("/") else str(tmp_path / out)
    result = act(desktop, {"action": "screenshot"}, "-o", target)
    assert result.exit_code == 2 and message in result.output
    assert not Path("/nonexistent").exists()
    assert not list(tmp_path.iterdir())


def test_cursor_position_with_an_output_says_there_is_no_screenshot(
    form_desktop: tuple[Desktop, Path], tmp_path: Path
) -> None:
    desktop, _ = form_desktop
    result = act(desktop, {"action": "cursor_position"}, "-o", str(tmp_path / "f.png"))
    assert result.exit_code == 2 and "returns no screenshot" in result.output


@pytest.mark.parametrize("action", ["[" * 100_000, '{"a":' * 100_000])
def test_deeply_nested_json_is_one_line(form_desktop: tuple[Desktop, Path], action: str) -> None:
    desktop, _ = form_desktop
    result = act(desktop, action)
    assert result.exit_code == 2
    assert "Traceback" not in result.output and "RecursionError" not in result.output
    assert result.output.startswith("error: ") and len(result.output.splitlines()) == 1


def test_text_comes_from_a_file_or_stdin(
    form_desktop: tuple[Desktop, Path], tmp_path: Path, form_state: Callable[[Path], Any]
) -> None:
    desktop, state = form_desktop
    focus_entry(desktop, state, form_state)
    source = tmp_path / "name.txt"
    source.write_text("Grüße aus 東京", encoding="utf-8")
    typed = act(desktop, {"action": "type"}, "--text-file", str(source))
    assert typed.exit_code == 0, typed.output
    wait_until(lambda: entry_text(state, form_state) == "Grüße aus 東京", "the file's text")
    piped = act(desktop, {"type": "type"}, "--text-file", "-", stdin=" & Co")
    assert piped.exit_code == 0, piped.output
    wait_until(lambda: entry_text(state, form_state) == "Grüße aus 東京 & Co", "stdin's text")


@pytest.mark.parametrize(
    ("action", "options", "message"),
    [
        ({"action": "type", "text": "a"}, ["--text-file", "-"], "give the text in one place"),
        ({"action": "type"}, ["--text-file", "/nonexistent/t.txt"], "cannot read it"),
        ({"action": "type", "text": "x" * 100_001}, [], "over the limit of 100000"),
        ({"type": "scroll", "x": 5, "y": 5, "scroll_y": 10**12}, [], "scroll_y"),
        ({"action": "key", "text": "ctrl+"}, [], "lone '+'"),
    ],
)
def test_bad_text_and_amounts_are_one_line_errors(
    form_desktop: tuple[Desktop, Path], action: dict[str, Any], options: list[str], message: str
) -> None:
    desktop, _ = form_desktop
    result = act(desktop, action, *options)
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1
