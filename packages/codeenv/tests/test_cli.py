"""``viewfinder exec FILE.py``: a fresh env, and stdout, stderr and numbered PNGs on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image
from typer.testing import CliRunner

from viewfinder.cli.app import build_app

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "codeenv"
runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(build_app(), list(args))


def test_exec_writes_output_and_numbered_captures(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out).mkdir()
    (out / "capture-009.png").write_bytes(b"stale")  # left by an earlier run
    result = invoke(
        "exec", str(EXAMPLES / "progressive.py"), "--out", str(out), "--size", "640x480"
    )

    assert result.exit_code == 0, result.output
    assert f"{EXAMPLES / 'progressive.py'}: exit code 0, 3 capture(s)" in result.output
    assert sorted(p.name for p in out.glob("*.png")) == [
        "capture-001.png",
        "capture-002.png",
        "capture-003.png",
    ]
    assert (out / "stdout.txt").read_text() == "three captures\n"
    assert (out / "stderr.txt").read_text() == ""
    with (
        Image.open(out / "capture-001.png") as first,
        Image.open(out / "capture-002.png") as second,
    ):
        assert first.size == (640, 480)
        assert first.convert("RGB").getpixel((280, 70)) == (255, 255, 255)
        assert second.convert("RGB").getpixel((280, 70)) == (255, 0, 0)


def test_exec_exits_with_the_codes_status_and_json(tmp_path: Path) -> None:
    script = tmp_path / "fails.py"
    script.write_text("import sys\nprint('partial')\nsys.exit(5)\n")
    result = invoke(
        "exec", str(script), "--out", str(tmp_path / "o"), "--json", "--size", "320x240"
    )
    assert result.exit_code == 5
    summary = json.loads(result.output)
    assert summary["exit_code"] == 5
    assert summary["captures"] == []
    assert (tmp_path / "o" / "stdout.txt").read_text() == "partial\n"


def test_exec_rejects_a_bad_size_and_a_missing_file(tmp_path: Path) -> None:
    script = tmp_path / "ok.py"
    script.write_text("pass\n")
    bad_size = invoke("exec", str(script), "--size", "big")
    assert bad_size.exit_code == 2
    assert "'big' is not WIDTHxHEIGHT" in bad_size.output
    missing = invoke("exec", str(tmp_path / "nope.py"))
    assert missing.exit_code == 2
    # the error box wraps a long path anywhere: read the words, not the layout
    assert "does not exist" in " ".join(missing.output.replace("│", " ").split())
