"""CodingEnv and AsyncCodingEnv against a real server, local servers and Docker."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from viewfinder.codeenv import CodeAction
from viewfinder.core.testing import child_processes
from viewfinder.server import (
    AsyncCodingEnv,
    CodingEnv,
    DockerUnavailableError,
    EnvServerError,
    LocalServer,
    ServerConnectionError,
)


def test_sync_client_episode(server: LocalServer) -> None:
    with CodingEnv(server.base_url) as env:
        reset = env.reset(episode_id="mine")
        assert reset.observation.metadata["episode_id"] == "mine"
        env.step(CodeAction(code="import tkinter\nroot = tkinter.Tk()"))
        result = env.step(CodeAction(code="png = capture_screenshot()\nprint(len(png) > 100)"))
        assert result.observation.stdout == "True\n"
        assert base64.b64decode(result.observation.screenshot or "")[:4] == b"\x89PNG"
        assert (result.reward, result.done) == (None, False)
        state = env.state()
        assert (state.episode_id, state.step_count, state.last_exit_code) == ("mine", 2, 0)


async def test_async_client_episode(server: LocalServer) -> None:
    async with AsyncCodingEnv(server.base_url) as env:
        await env.reset()
        result = await env.step("raise ValueError('bad')")
        assert result.observation.exit_code == 1
        assert "ValueError: bad" in result.observation.stderr
        assert (await env.state()).last_exit_code == 1


def test_local_starts_a_server_and_close_stops_it() -> None:
    before = child_processes("Xvfb")
    with CodingEnv.local() as env:
        assert env.base_url.startswith("http://127.0.0.1:")
        env.reset()
        assert env.step("print(1 + 1)").observation.stdout == "2\n"
        assert child_processes("Xvfb") - before
    assert not child_processes("Xvfb") - before


async def test_async_local() -> None:
    env = await AsyncCodingEnv.local()
    try:
        await env.reset()
        assert (await env.step("print('async')")).observation.stdout == "async\n"
    finally:
        await env.close()


def test_from_docker_image_without_an_engine_says_so() -> None:
    # On this kind of machine Docker's client may be installed with no engine running.
    with pytest.raises(
        DockerUnavailableError,
        match=r"no Docker engine is running|the docker program is not installed",
    ):
        CodingEnv.from_docker_image("viewfinder-server:latest")


def test_from_docker_image_without_the_docker_program_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no docker anywhere
    with pytest.raises(DockerUnavailableError, match="the docker program is not installed"):
        CodingEnv.from_docker_image("viewfinder-server:latest")


async def test_async_from_docker_image_without_an_engine_says_so() -> None:
    with pytest.raises(DockerUnavailableError, match=r"CodingEnv\.local\(\)"):
        await AsyncCodingEnv.from_docker_image("viewfinder-server:latest")


def test_server_errors_and_unreachable_servers_raise_typed_errors(server: LocalServer) -> None:
    with CodingEnv(server.base_url) as env, pytest.raises(EnvServerError) as error:
        env._call('{"type": "dance"}', "observation")
    assert error.value.code == "UNKNOWN_TYPE"
    with pytest.raises(ServerConnectionError, match="lost the connection"):
        CodingEnv("http://127.0.0.1:9", connect_timeout_s=5).reset()
