"""OpenEnv's own clients (from the openenv-core package) drive this server unchanged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.generic_client import GenericEnvClient

from viewfinder.server import LocalServer

TOKEN = "openenv-compat-token"


class OpenEnvCodeAction(Action):
    """OpenEnv's coding env action, as its envs/coding_env package defines it."""

    code: str


class OpenEnvCodeObservation(Observation):
    """OpenEnv's coding env observation: its base forbids unknown fields."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


class OpenEnvCodeState(State):
    last_exit_code: int = 0


class OpenEnvCodingEnv(EnvClient[OpenEnvCodeAction, OpenEnvCodeObservation, OpenEnvCodeState]):
    """OpenEnv's coding env client, written as that package writes it."""

    def _step_payload(self, action: OpenEnvCodeAction) -> dict[str, Any]:
        return {"code": action.code}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[OpenEnvCodeObservation]:
        return StepResult(
            observation=OpenEnvCodeObservation(**payload["observation"]),
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )

    def _parse_state(self, payload: dict[str, Any]) -> OpenEnvCodeState:
        return OpenEnvCodeState(
            episode_id=payload.get("episode_id"),
            step_count=payload.get("step_count", 0),
            last_exit_code=payload.get("last_exit_code", 0),
        )


def test_openenv_generic_client_sync(server: LocalServer) -> None:
    with GenericEnvClient(base_url=server.base_url).sync() as env:
        first = env.reset()
        assert first.observation["exit_code"] == 0
        env.step({"code": "x = 20"})
        result = env.step(
            {"code": "import tkinter\ntkinter.Tk()\ncapture_screenshot()\nprint(x + 1)"}
        )
        assert result.observation["stdout"] == "21\n"
        assert len(result.observation["screenshots"]) == 1
        # the last capture is sent once, in screenshots (see observation_payload)
        assert "screenshot" not in result.observation
        assert result.done is False
        assert env.state() == {
            "episode_id": first.observation["metadata"]["episode_id"],
            "step_count": 2,
            "last_exit_code": 0,
        }


async def test_openenv_generic_client_async(server: LocalServer) -> None:
    async with GenericEnvClient(base_url=server.base_url) as env:
        await env.reset()
        result = await env.step({"code": "import sys\nsys.exit(4)"})
        assert result.observation["exit_code"] == 4


async def test_openenv_typed_coding_client_reads_our_observations(server: LocalServer) -> None:
    # Its observation model forbids unknown fields: plain steps carry only its own.
    async with OpenEnvCodingEnv(base_url=server.base_url) as env:
        await env.reset()
        result = await env.step(OpenEnvCodeAction(code="print('same as OpenEnv')"))
        assert result.observation.stdout == "same as OpenEnv\n"
        assert result.observation.exit_code == 0
        state = await env.state()
        assert (state.step_count, state.last_exit_code) == (1, 0)


async def test_openenv_client_with_a_token_in_the_url(serve: Callable[..., LocalServer]) -> None:
    # OpenEnv's client cannot set headers; credentials in the URL become basic auth.
    server = serve(token=TOKEN)
    url = server.base_url.replace("http://", f"http://openenv:{TOKEN}@")
    async with GenericEnvClient(base_url=url) as env:
        await env.reset()
        assert (await env.step({"code": "print('ok')"})).observation["stdout"] == "ok\n"


async def test_openenv_client_sees_capacity_reached(serve: Callable[..., LocalServer]) -> None:
    server = serve(max_sessions=1)
    async with GenericEnvClient(base_url=server.base_url) as first:
        await first.reset()
        second = GenericEnvClient(base_url=server.base_url)
        try:
            with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
                await second.reset()
        finally:
            await second.close()
