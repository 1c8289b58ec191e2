"""The viewfinder command, in-process with CliRunner, on an in-process canvas backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core import Region, RegionError, Screenshot, hookimpl
from viewfinder.core.testing import Canvas

runner = CliRunner()


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(build_app(), list(args))


def test_version_lists_the_packages() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output.startswith("viewfinder ")
    assert "viewfinder-core" in result.output


def test_backends_lists_each_with_availability(canvas_backend: Canvas) -> None:
    result = invoke("backends", "--json")
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["canvas"]["available"] is True
    assert rows["canvas"]["plugin"] == "viewfinder-test-canvas"
    assert "mss" in rows
    table = invoke("backends").output
    assert "canvas" in table and "available: yes" in table


def test_plugins_lists_hooks(canvas_backend: Canvas) -> None:
    result = invoke("plugins", "--json")
    assert result.exit_code == 0
    infos = {info["name"]: info for info in json.loads(result.output)}
    assert infos["mss"]["distribution"] == "viewfinder-mss"
    assert infos["viewfinder-test-canvas"]["hooks"] == ["viewfinder_register_capture_backends"]


def test_capture_writes_the_file_and_prints_metadata(
    canvas_backend: Canvas, tmp_path: Path
) -> None:
    canvas_backend.fill(Region(x=10, y=10, width=20, height=20), (0, 0, 255))
    out = tmp_path / "shot.png"
    result = invoke("capture", "-b", "canvas", "-o", str(out), "--region", "10,10,20,20", "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["path"] == str(out)
    assert info["region"] == {"x": 10, "y": 10, "width": 20, "height": 20}
    assert "data" not in info
    shot = Screenshot.from_file(out)
    assert (shot.width, shot.height) == (20, 20)
    assert shot.pixel(5, 5) == (0, 0, 255)


def test_capture_jpeg(canvas_backend: Canvas, tmp_path: Path) -> None:
    result = invoke("capture", "-b", "canvas", "-f", "jpg", "-o", str(tmp_path / "a"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "a.jpg").read_bytes()[:3] == b"\xff\xd8\xff"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["capture", "-b", "nope"], "unknown capture backend 'nope'"),
        (["capture", "-b", "canvas", "--region", "600,0,100,10"], "reaches past the 640x480"),
        (["capture", "-b", "canvas", "--region", "a,b"], "X,Y,WIDTH,HEIGHT"),
        (["capture", "-b", "canvas", "--window", "7"], "has no windows"),
    ],
)
def test_bad_input_exits_1_with_a_clear_message(
    canvas_backend: Canvas, args: list[str], message: str
) -> None:
    result = invoke(*args)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["capture", "-b", "canvas", "--format", "gif"], "unsupported image format"),
        (["capture", "-b", "canvas", "--window", "zzz"], "is not a window id"),
        (["capture", "-b", "canvas", "-O", "novalue"], "is not KEY=VALUE"),
    ],
)
def test_usage_errors_exit_2(canvas_backend: Canvas, args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.output


class GreetingCommands:
    """A plugin adding a sub-command through viewfinder_register_commands."""

    @hookimpl
    def viewfinder_register_commands(self, app) -> None:  # type: ignore[no-untyped-def]
        import typer

        greet = typer.Typer(help="Say hello.")

        @greet.command("hello")
        def hello(name: str) -> None:
            typer.echo(f"hello {name}")

        @greet.command("fail")
        def fail() -> None:
            raise RegionError("the region was wrong; try a smaller one")

        app.add_typer(greet, name="greet")


def test_plugins_add_sub_commands(viewfinder_plugin) -> None:  # type: ignore[no-untyped-def]
    viewfinder_plugin(GreetingCommands(), name="greetings")
    assert invoke("greet", "hello", "ada").output == "hello ada\n"
    failed = invoke("greet", "fail")
    assert failed.exit_code == 1
    assert "error: the region was wrong" in failed.output


@pytest.mark.parametrize("target", ["/proc/nope/x.png", "/dev/null/x.png"])
def test_capture_to_a_folder_that_cannot_be_made_is_one_clear_line(
    canvas_backend: Canvas, target: str
) -> None:
    result = invoke("capture", "-b", "canvas", "-o", target)
    assert result.exit_code == 1
    assert result.output.startswith(f"error: cannot write {target}")
    assert len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_without_a_display_capture_says_what_to_do_and_invents_no_screen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("VIEWFINDER_BACKEND", raising=False)
    monkeypatch.chdir(tmp_path)
    result = invoke("capture")
    assert result.exit_code == 1
    message = result.output
    assert "DISPLAY" in message and "--display" in message and "--backend cdp --url" in message
    assert list(tmp_path.iterdir()) == []  # no white page saved as a screenshot


@pytest.mark.parametrize(
    ("name", "magic"),
    [("shot.png", b"\x89PNG"), ("shot.jpg", b"\xff\xd8\xff"), ("shot.JPEG", b"\xff\xd8\xff")],
)
def test_the_output_extension_decides_the_format(
    canvas_backend: Canvas, tmp_path: Path, name: str, magic: bytes
) -> None:
    out = tmp_path / name
    result = invoke("capture", "-b", "canvas", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(magic)
    webp = tmp_path / "shot.webp"
    assert invoke("capture", "-b", "canvas", "-o", str(webp)).exit_code == 0
    assert webp.read_bytes()[8:12] == b"WEBP"


def test_an_unknown_extension_or_a_contradicting_format_is_refused(
    canvas_backend: Canvas, tmp_path: Path
) -> None:
    unknown = invoke("capture", "-b", "canvas", "-o", str(tmp_path / "shot.txt"))
    assert unknown.exit_code == 2 and "image extension" in unknown.output
    contradiction = invoke("capture", "-b", "canvas", "-f", "jpeg", "-o", str(tmp_path / "a.png"))
    assert contradiction.exit_code == 2 and "contradicts" in contradiction.output
    assert list(tmp_path.iterdir()) == []
    agreeing = invoke("capture", "-b", "canvas", "-f", "jpg", "-o", str(tmp_path / "a.jpeg"))
    assert agreeing.exit_code == 0, agreeing.output


def test_default_names_never_collide(
    canvas_backend: Canvas, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for _ in range(5):  # well within one second
        assert invoke("capture", "-b", "canvas").exit_code == 0
    assert invoke("capture", "-b", "canvas", "-o", str(tmp_path)).exit_code == 0
    written = sorted(path.name for path in tmp_path.iterdir())
    assert len(written) == 6 and all(name.startswith("capture-") for name in written)


@pytest.mark.parametrize("bad", ["10,10,-5,5", "-1,0,10,10", "0,0,0,10", "", "1,2,3"])
def test_bad_regions_are_one_line_errors(canvas_backend: Canvas, bad: str) -> None:
    result = invoke("capture", "-b", "canvas", "--region", bad, "-o", "-")
    assert result.exit_code == 1, result.output
    assert result.output.startswith("error: ") and "region" in result.output
    assert len(result.output.strip().splitlines()) == 1
