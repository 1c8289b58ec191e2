"""`make setup` installs every program the tests, the demo and the benchmarks start.

The test run itself records each program it starts (an audit hook in the root
conftest) and fails when one would be missing on a fresh machine; these tests check the
checker, and the programs that the demo and the benchmarks name in their sources.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNNERS = {"run", "Popen", "call", "check_call", "check_output", "create_subprocess_exec"}


def _load_checker() -> ModuleType:
    name = "viewfinder_scripts_system_packages"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "system_packages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


checker = _load_checker()
needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="a Debian system")


def programs_named(path: Path) -> Iterator[str]:
    """Programs a source file starts: the literal first word of a subprocess command.

    Follows a command list assigned to a name (``command = ["import", ...]`` then
    ``subprocess.run(command)``).
    """
    tree = ast.parse(path.read_text(), str(path))
    lists: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            first = _first_word(value)
            if isinstance(target, ast.Name) and first is not None:
                lists[target.id] = first
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in RUNNERS:
            continue
        command = node.args[0]
        if name == "create_subprocess_exec":
            word = command.value if isinstance(command, ast.Constant) else None
        elif isinstance(command, ast.Name):
            word = lists.get(command.id)
        else:
            word = _first_word(command)
        if isinstance(word, str):
            yield word


def _first_word(node: ast.expr) -> str | None:
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        first = node.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def test_the_setup_list_is_read_from_the_setup_script() -> None:
    packages = checker.setup_packages()
    assert {"xvfb", "xdotool", "chromium", "x11-xserver-utils", "imagemagick"} <= set(packages)


@needs_dpkg
def test_a_program_from_a_package_missing_from_the_list_is_a_gap() -> None:
    # xsetroot once made CI green only on a machine where it had been installed by hand
    (gap,) = checker.gaps(["xsetroot"], packages=["xvfb"])
    assert gap.package == "x11-xserver-utils"
    assert "scripts/setup-system.sh" in str(gap)
    assert checker.gaps(["xsetroot", "Xvfb", "xdotool"]) == []


@needs_dpkg
def test_a_program_no_package_installed_is_a_gap() -> None:
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        program = Path(folder, "handmade")
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
        (gap,) = checker.gaps([str(program)])
        assert gap.package is None
        assert "installed by hand" in str(gap)
    (missing,) = checker.gaps(["viewfinder-no-such-program"])
    assert "not installed" in str(missing)


@needs_dpkg
def test_essential_programs_and_the_interpreter_need_no_listing() -> None:
    assert checker.gaps(["sh", "sleep", sys.executable]) == []


@needs_dpkg
def test_scripts_in_temporary_folders_and_probed_programs_are_not_gaps(tmp_path: Path) -> None:
    # a test's own script, already deleted when the run ends, is not a missing package;
    # docker is only probed: its tests hold whether or not the program is there
    gone = tmp_path / "fake-chromium"
    assert checker.gaps([str(gone), "docker"]) == []


def test_the_source_scan_finds_command_lists(tmp_path: Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        "import subprocess\n"
        "command = ['import', '-window', 'root']\n"
        "subprocess.run(command)\n"
        "subprocess.Popen(['xsetroot', '-solid', 'red'])\n"
        "words = ['capture', 'frame']\n"
    )
    assert sorted(programs_named(source)) == ["import", "xsetroot"]


@needs_dpkg
@pytest.mark.parametrize("folder", ["examples", "benchmarks", "tests"])
def test_programs_named_by_the_demo_benchmarks_and_tests_are_installed(folder: str) -> None:
    sources = sorted((ROOT / folder).rglob("*.py"))
    if folder == "tests":
        sources += sorted(ROOT.glob("*/*/tests/**/*.py"))
    named = {word for path in sources for word in programs_named(path)}
    named.discard("")
    programs = {word for word in named if os.sep not in word}
    gaps = checker.gaps(programs)
    assert gaps == [], "\n".join(str(gap) for gap in gaps)


@needs_dpkg
@pytest.mark.parametrize("workers", ["0", "2"], ids=["one-process", "xdist-workers"])
@pytest.mark.parametrize("through_a_shell", [False, True], ids=["directly", "sh-exec"])
def test_a_test_run_that_starts_a_hand_installed_program_fails(
    tmp_path: Path, through_a_shell: bool, workers: str
) -> None:
    """The root conftest's check, in a real pytest run of its own (as `make test` runs it:
    on pytest-xdist workers, which hand what they started to the controller)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        program = Path(folder, "handmade")
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
        command = ["sh", "-c", f"exec env A=1 {program}"] if through_a_shell else [str(program)]
        test_file = tmp_path / "test_uses_it.py"
        test_file.write_text(
            f"import subprocess\ndef test_it():\n    subprocess.run({command!r}, check=True)\n"
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "conftest",
                "-c",
                os.devnull,
                "--rootdir",
                str(tmp_path),
                "-p",
                "no:cacheprovider",
                "-n",
                workers,
                "--dist",
                "loadfile",
                str(test_file),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    assert "handmade" in run.stdout and "installed by hand" in run.stdout
    assert "exec:" not in run.stdout and "env:" not in run.stdout
