"""A third-party environment in one file, installed by entry point, is served by
``viewfinder serve --env`` and listed by ``serve --help`` and ``viewfinder plugins``."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openenv.core.generic_client import GenericEnvClient

from viewfinder.core.testing import wait_until

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "plugin-counter-env"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one-file plugin installed in a folder: its module and its entry point."""
    target = tmp_path_factory.mktemp("site")
    shutil.copy(PLUGIN / "viewfinder_counter_env.py", target)
    info = target / "viewfinder_counter_env-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: viewfinder-counter-env\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text("[viewfinder]\ncounter = viewfinder_counter_env\n")
    return target


def environ(site: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("VIEWFINDER_PLUGINS", None)
    return env


def cli(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", *args],
        env={**environ(site), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def counter_server(site: Path) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "viewfinder.cli", "serve", "--env", "counter",
         "--port", str(port), "--pool-size", "1", "--size", "320x240"],
        env=environ(site), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read().decode() if process.stderr else "")
        try:
            return httpx.get(f"{base}/health").status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, "the counter server to answer /health", timeout=60)
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
        if process.stderr is not None:
            process.stderr.close()


def test_serve_help_and_plugins_list_the_env(site: Path) -> None:
    helped = cli(site, "serve", "--help")
    assert helped.returncode == 0, helped.stderr
    flat = " ".join(helped.stdout.replace("│", " ").split())
    assert "counter: count up to a target (an example)" in flat
    assert "desktop:" in flat and "code:" in flat
    listed = cli(site, "plugins")
    assert listed.returncode == 0, listed.stderr
    assert "envs: counter" in listed.stdout
    assert "envs: code, desktop" in listed.stdout


def test_serve_env_serves_the_plugin_env(counter_server: str) -> None:
    with GenericEnvClient(base_url=counter_server).sync() as env:
        first = env.reset(target=2)
        assert first.observation["count"] == 0
        assert (first.reward, first.done) == (0.0, False)
        result = env.step({"add": 1})
        assert (result.observation["count"], result.reward, result.done) == (1, 0.0, False)
        result = env.step({"add": 1})
        assert (result.observation["count"], result.reward, result.done) == (2, 1.0, True)
    # the stateless HTTP step of an env with no routes of its own
    answer = httpx.post(f"{counter_server}/step", json={"add": 5}).json()
    assert answer["observation"]["count"] == 5
    assert answer["done"] is True
    refused = httpx.post(f"{counter_server}/step", json={"add": 50})
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["body", "add"]
    assert httpx.get(f"{counter_server}/metadata").json()["name"] == "counter"


def test_unknown_env_is_one_line(site: Path) -> None:
    result = cli(site, "serve", "--env", "nope")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --env: 'nope' is not a choice: use code or counter or desktop"
    ]


def test_plugins_page_shows_the_env_file_exactly() -> None:
    guide = (ROOT / "docs" / "plugins.md").read_text()
    source = (PLUGIN / "viewfinder_counter_env.py").read_text()
    assert f"```python\n{source.rstrip()}\n```" in guide
