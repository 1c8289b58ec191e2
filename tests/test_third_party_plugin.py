"""A third-party plugin installed by entry point shows up in the CLI and captures."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from viewfinder.core import Screenshot

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "plugin-testcard"


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Install the example plugin (built from source) into a folder of its own."""
    target = install_into_folder(PLUGIN, tmp_path_factory.mktemp("site"))
    assert list(target.glob("viewfinder_testcard-*.dist-info"))
    return target


def install_into_folder(source: Path, target: Path) -> Path:
    """``pip install --target``: the distribution at ``source``, alone, in a folder."""
    uv = shutil.which("uv")
    command = (
        [uv, "pip", "install", "--python", sys.executable]
        if uv
        else [sys.executable, "-m", "pip", "install"]
    )
    subprocess.run(
        [*command, "--no-deps", "--quiet", "--target", str(target), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def run_cli(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("VIEWFINDER_PLUGINS", None)
    return subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_installed_plugin_is_listed(plugin_site: Path) -> None:
    result = run_cli(plugin_site, "backends", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["testcard"]["available"] is True
    assert rows["testcard"]["plugin"] == "testcard"
    plugins = json.loads(run_cli(plugin_site, "plugins", "--json").stdout)
    card = next(info for info in plugins if info["name"] == "testcard")
    assert card["distribution"] == "viewfinder-testcard"


def test_installed_plugin_captures(plugin_site: Path, tmp_path: Path) -> None:
    out = tmp_path / "card.png"
    result = run_cli(plugin_site, "capture", "--backend", "testcard", "-o", str(out))
    assert result.returncode == 0, result.stderr
    shot = Screenshot.from_file(out)
    assert (shot.width, shot.height) == (800, 600)
    # docs/plugins.md shows this command's output: the size it states is the real one
    guide = (ROOT / "docs" / "plugins.md").read_text()
    shown = re.search(r"^card\.png  800x600 png (\d+) bytes via testcard", guide, re.MULTILINE)
    assert shown is not None and int(shown.group(1)) == len(shot.data)
    assert shot.pixel(50, 300) == (255, 255, 255)  # first bar
    assert shot.pixel(750, 300) == (0, 0, 0)  # last bar
    assert shot.pixel(550, 10) == (255, 0, 0)  # sixth bar


def test_plugin_can_be_disabled(plugin_site: Path) -> None:
    env_result = subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", "backends", "--json"],
        env={
            **os.environ,
            "PYTHONPATH": str(plugin_site),
            "VIEWFINDER_DISABLE_PLUGINS": "testcard",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "testcard" not in {row["name"] for row in json.loads(env_result.stdout)}


def test_docs_show_the_plugin_as_it_is() -> None:
    guide = (ROOT / "docs" / "plugins.md").read_text()
    assert (PLUGIN / "viewfinder_testcard.py").read_text().strip() in guide
    assert (PLUGIN / "pyproject.toml").read_text().strip() in guide


@pytest.fixture(scope="module")
def broken_plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real distribution whose plugin module fails to import, installed on its own."""
    source = tmp_path_factory.mktemp("broken-src")
    (source / "pyproject.toml").write_text(
        '[project]\nname = "viewfinder-broken-example"\nversion = "1.0"\n'
        '[project.entry-points.viewfinder]\nbrokenexample = "viewfinder_broken_example"\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    (source / "viewfinder_broken_example.py").write_text("import a_module_that_is_not_there\n")
    return install_into_folder(source, tmp_path_factory.mktemp("broken-site"))


def test_a_plugin_that_fails_to_import_leaves_everything_else_working(
    broken_plugin_site: Path, tmp_path: Path
) -> None:
    version = run_cli(broken_plugin_site, "--version")
    assert version.returncode == 0, version.stderr
    warning = version.stderr
    assert "'brokenexample'" in warning and "'viewfinder-broken-example'" in warning
    assert "viewfinder_broken_example" in warning  # the entry point
    assert "a_module_that_is_not_there" in warning
    assert "VIEWFINDER_DISABLE_PLUGINS=brokenexample" in warning
    assert warning.count("brokenexample' from") == 1  # reported once

    listed = run_cli(broken_plugin_site, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert "a_module_that_is_not_there" in rows["brokenexample"]["broken"]
    assert rows["xvfb"]["broken"] is None
    assert "BROKEN" in run_cli(broken_plugin_site, "plugins").stdout

    backends = run_cli(broken_plugin_site, "backends", "--json")
    assert backends.returncode == 0 and "xvfb" in backends.stdout
