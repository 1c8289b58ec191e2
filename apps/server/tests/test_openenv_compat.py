"""OpenEnv's own clients (from the openenv-core package) drive this server unchanged."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.generic_client import GenericEnvClient
from PIL import Image
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from viewfinder.codeenv import CodeAction
from viewfinder.server import CodingEnv, LocalServer

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


def pixel(shot: str, x: int, y: int) -> tuple[int, int, int]:
    image = Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
    found: tuple[int, int, int] = image.getpixel((x, y))  # type: ignore[assignment]
    return found


def test_openenv_generic_client_sync(server: LocalServer, blue_then_red: str) -> None:
    with GenericEnvClient(base_url=server.base_url).sync() as env:
        first = env.reset()
        assert first.observation["exit_code"] == 0
        assert "screenshot" not in first.observation  # nothing captured yet
        env.step({"code": "x = 20"})
        result = env.step({"code": blue_then_red + "print(x + 1)"})
        assert result.observation["stdout"] == "21\n"
        first_shot, last_shot = result.observation["screenshots"]
        assert pixel(first_shot, 160, 120) == (0, 0, 255)
        # the last capture is where OpenEnv's clients read it, as well as in screenshots
        assert pixel(result.observation["screenshot"], 160, 120) == (255, 0, 0)
        assert base64.b64decode(result.observation["screenshot"]) == base64.b64decode(last_shot)
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


async def test_a_code_observation_client_reads_the_last_capture(
    server: LocalServer, code_observation_client: type[Any], blue_then_red: str
) -> None:
    async with code_observation_client(base_url=server.base_url) as env:
        await env.reset()
        result = await env.step(CodeAction(code=blue_then_red))
        observation = result.observation
        assert observation.screenshot is not None
        assert pixel(observation.screenshot, 160, 120) == (255, 0, 0)
        assert observation.screenshot == observation.screenshots[-1]


def test_viewfinders_client_gets_the_last_capture_once_when_it_asks(
    server: LocalServer, blue_then_red: str
) -> None:
    ws_url = server.base_url.replace("http://", "ws://") + "/ws"
    step = json.dumps({"type": "step", "data": {"code": blue_then_red}})
    with connect(ws_url + "?screenshot=deduplicated", max_size=2**26) as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        ws.recv(timeout=60)
        ws.send(step)
        sent = json.loads(ws.recv(timeout=60))["data"]["observation"]
    assert "screenshot" not in sent and len(sent["screenshots"]) == 2
    with connect(ws_url + "?screenshot=full", max_size=2**26) as ws:
        ws.send(step)
        sent = json.loads(ws.recv(timeout=60))["data"]["observation"]
    assert sent["screenshot"] == sent["screenshots"][-1]
    # CodingEnv asks for it, and puts the last capture back
    with CodingEnv(server.base_url) as env:
        observation = env.step(blue_then_red).observation
    assert observation.screenshot == observation.screenshots[-1]
    assert pixel(observation.screenshot, 160, 120) == (255, 0, 0)
    with CodingEnv(server.base_url, deduplicate_screenshot=False) as env:
        full = env.step(blue_then_red).observation
    assert full.screenshot is not None and pixel(full.screenshot, 160, 120) == (255, 0, 0)


def test_a_form_that_does_not_exist_is_refused(server: LocalServer) -> None:
    ws_url = server.base_url.replace("http://", "ws://") + "/ws"
    with connect(ws_url + "?screenshot=once") as ws:
        refusal = json.loads(ws.recv(timeout=30))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=30)
    assert refusal["data"]["code"] == "VALIDATION_ERROR"
    assert "full, deduplicated" in refusal["data"]["message"]
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


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
