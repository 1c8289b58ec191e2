"""The wheels, installed the way users install them: pip, a fresh venv, outside the workspace.

Builds every member's wheel, installs them (and their dependencies from the package
index) into a new virtual environment, and runs the commands from a folder outside the
repository: every command's --help, a capture of a real display and an `exec`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from viewfinder.xvfb import Display

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ["capture", "backends", "plugins", "display", "exec", "record", "cache", "browser"]
COMMANDS += ["tui", "serve"]


def _uv() -> str:
    uv = shutil.which("uv")
    assert uv, "uv is missing: `make setup` installs it"
    return uv


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [_uv(), "build", "--all-packages", "--wheel", "--out-dir", str(out), "--quiet"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    built = sorted(out.glob("*.whl"))
    members = [
        path.parent.name
        for folder in ("packages", "plugins", "apps")
        for path in (ROOT / folder).glob("*/pyproject.toml")
    ]
    names = {wheel.name.split("-")[0] for wheel in built}
    # every member and the meta distribution
    assert names == {"viewfinder", *(f"viewfinder_{member}" for member in members)}
    return built


@pytest.fixture(scope="module")
def installed(wheels: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheels installed by pip; its bin folder."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    subprocess.run(
        [_uv(), "pip", "install", "--quiet", "--python", str(python), *map(str, wheels)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return venv / "bin"


def run(bin_dir: Path, *args: str, cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [str(bin_dir / "viewfinder"), *args],
        cwd=cwd,
        env={**env, **kwargs.pop("env", {})},  # type: ignore[dict-item]
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_every_wheel_carries_types_readme_classifiers_and_licence(wheels: list[Path]) -> None:
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
            metadata = Parser().parsestr(archive.read(metadata_name).decode())
        assert metadata["License-Expression"] == "MIT", wheel.name
        assert any(n.endswith("/licenses/LICENSE") for n in names), wheel.name
        assert metadata.get_all("Classifier"), wheel.name
        assert metadata["Description-Content-Type"] == "text/markdown", wheel.name
        assert metadata.get_payload().strip(), wheel.name  # the readme
        if not wheel.name.startswith("viewfinder-0"):  # the meta distribution has no code
            assert any(n.endswith("/py.typed") for n in names), wheel.name


def test_every_command_helps_from_an_installed_venv(installed: Path, tmp_path: Path) -> None:
    version = run(installed, "--version", cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert "viewfinder-server" in version.stdout
    assert version.stderr == ""  # no plugin failed to import
    for command in COMMANDS:
        result = run(installed, command, "--help", cwd=tmp_path)
        assert result.returncode == 0, f"{command} --help: {result.stderr}"
        assert "Usage: viewfinder" in result.stdout
    plugins = run(installed, "plugins", cwd=tmp_path)
    assert plugins.returncode == 0 and "BROKEN" not in plugins.stdout


def test_an_installed_capture_sees_the_display(installed: Path, tmp_path: Path) -> None:
    with Display(320, 200) as display:
        subprocess.run(["xsetroot", "-solid", "#1e3cc8"], env=display.env(), check=True)
        result = run(
            installed, "capture", "--display", display.name, "-o", "shot.png", cwd=tmp_path
        )
    assert result.returncode == 0, result.stderr
    from viewfinder.core import Screenshot

    shot = Screenshot.from_file(tmp_path / "shot.png")
    assert shot.size == (320, 200)
    assert shot.pixel(0, 0) == (30, 60, 200) and shot.pixel(319, 199) == (30, 60, 200)


def test_an_installed_exec_runs_code_and_captures(installed: Path, tmp_path: Path) -> None:
    program = tmp_path / "draw.py"
    program.write_text(
        "import tkinter as tk\n"
        "root = tk.Tk()\n"
        "root.geometry('200x100+0+0')\n"
        "tk.Frame(root, bg='#00ff00', width=200, height=100).pack()\n"
        "capture_screenshot()\n"
        "print('drawn')\n"
    )
    result = run(installed, "exec", str(program), "--out", "run", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "run" / "stdout.txt").read_text() == "drawn\n"
    from viewfinder.core import Screenshot

    shot = Screenshot.from_file(tmp_path / "run" / "capture-001.png")
    assert shot.pixel(100, 50) == (0, 255, 0)


def test_an_installed_code_env_runs_isolated(installed: Path, tmp_path: Path) -> None:
    # the installed venv lives under /tmp, where each session has a private tmpfs: the
    # installation must still be reachable by the session's user, inside bubblewrap
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    script = tmp_path / "session.py"
    script.write_text(
        "import json\n"
        "from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeEnvironment\n"
        "with CodeEnvironment(CodeEnvConfig(width=320, height=200)) as env:\n"
        "    env.reset()\n"
        "    code = ('import tkinter as tk\\nroot = tk.Tk()\\n'\n"
        "            \"root.geometry('200x100+0+0')\\n\"\n"
        "            \"tk.Frame(root, bg='#00ff00', width=200, height=100).pack()\\n\"\n"
        "            'root.update()\\ncapture_screenshot()\\nprint(\"drawn\")')\n"
        "    obs = env.step(CodeAction(code=code, timeout_s=60))\n"
        "    isolation = env.worker.ready_info['isolation']\n"
        "    print(json.dumps([obs.stdout, obs.stderr, len(obs.screenshots), isolation]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(
        [str(installed / "python"), str(script)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    stdout, stderr, captures, isolation = json.loads(done.stdout.strip().splitlines()[-1])
    assert (stdout, captures) == ("drawn\n", 1), stderr
    assert isolation["via"] == "bubblewrap" and isolation["network"] == "none"
