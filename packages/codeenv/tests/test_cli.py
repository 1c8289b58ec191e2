"""``viewfinder exec FILE.py``: a fresh env, and stdout, stderr and numbered PNGs on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
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


def run_exec(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`viewfinder exec` as a real process, as a shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", "exec", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_exec_runs_a_file_as_python_runs_it(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "data.txt").write_text("beside the script\n")
    (folder / "helper.py").write_text("GREETING = 'imported from beside it'\n")
    (folder / "main.py").write_text(
        "import os, sys\n"
        "import helper\n"
        "print(sys.argv)\n"
        "print(__file__ == sys.argv[0] == os.path.abspath(__file__))\n"
        "print(os.environ['COLOUR'], os.environ['EMPTY'] == '')\n"
        "print(open(os.path.join(os.path.dirname(__file__), 'data.txt')).read().strip())\n"
        "print(helper.GREETING)\n"
        "print('stdin:', sys.stdin.read().strip())\n"
        "print(sorted(name for name in globals() if not name.startswith('__')))\n"
        "raise ValueError('from the file')\n"
    )
    result = run_exec(
        "project/main.py", "--env", "COLOUR=blue", "-e", "EMPTY=", "--out", "run",
        "--size", "320x240", "--", "one", "--two",
        cwd=tmp_path, stdin="piped in\n",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    lines = (tmp_path / "run" / "stdout.txt").read_text().splitlines()
    assert lines == [
        str([str(folder / "main.py"), "one", "--two"]),
        "True",
        "blue True",
        "beside the script",
        "imported from beside it",
        "stdin: piped in",
        "['attach_image', 'capture_screenshot', 'helper', 'os', 'start_recording', "
        "'stop_recording', 'sys']",
    ]
    stderr = (tmp_path / "run" / "stderr.txt").read_text()
    # the traceback names the file and its line, as python's does
    assert f'File "{folder / "main.py"}", line 10' in stderr
    assert "ValueError: from the file" in stderr


def test_exec_writes_its_folder_afresh(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in ("stdout.txt", "stderr.txt", "capture-007.png"):
        (out / name).write_text("from an earlier run")
    (out / "notes.txt").write_text("the user's")
    script = tmp_path / "quiet.py"
    script.write_text("pass\n")
    result = run_exec(str(script), "--out", str(out), "--size", "320x240", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (out / "stdout.txt").read_text() == "" and (out / "stderr.txt").read_text() == ""
    assert not (out / "capture-007.png").exists()
    assert (out / "notes.txt").read_text() == "the user's"  # not ours: left alone


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (b"print('caf\xe9')\n", [], "is not UTF-8 text (byte 10"),
        (b"pass\n", ["--env", "NOEQUALS"], "'NOEQUALS' is not NAME=VALUE"),
        (b"pass\n", ["--env", "=v"], "'=v' is not NAME=VALUE"),
    ],
)
def test_exec_bad_input_is_one_clear_error(
    tmp_path: Path, content: bytes, args: list[str], message: str
) -> None:
    script = tmp_path / "latin1.py"
    script.write_bytes(content)
    result = run_exec(str(script), *args, "--out", "o", cwd=tmp_path)
    assert result.returncode in (1, 2)
    assert message in " ".join(result.stderr.replace("│", " ").split())
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "o").exists()  # nothing ran, nothing written


def test_exec_leaves_no_process_or_folder_behind(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    script = tmp_path / "quick.py"
    script.write_text("print('done')\n")
    result = subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", "exec", str(script), "--out", "o"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
        env={**os.environ, "TMPDIR": str(temp)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "o" / "stdout.txt").read_text() == "done\n"
    # nothing is left in its temporary folder (the sandbox user ids' lock files are the
    # machine's registry, outside any TMPDIR)
    assert list(temp.iterdir()) == []
