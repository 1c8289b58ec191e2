"""Session providers behind the server: the ``local`` one, one a plugin registers, and
``viewfinder serve --provider ray`` on a real Ray cluster of several nodes on this machine.

The cluster (two nodes with one display slot each; a third added by the test that loses
it) and the ray server are shared by the module: Ray starts slowly.
"""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openenv.core.generic_client import GenericEnvClient
from PIL import Image
from websockets.sync.client import connect

from viewfinder.codeenv import CodeAction, CodeEnvConfig
from viewfinder.core import EnvSpec, PluginError, hookimpl, open_provider
from viewfinder.core.providers import (
    NoFreeSlotError,
    ProviderOptionError,
    UnknownProviderError,
    session_providers,
)
from viewfinder.core.testing import running, wait_until
from viewfinder.ray.testing import (
    LocalCluster,
    descendants,
    local_cluster,
    session_actor_processes,
)
from viewfinder.server import CodingEnv, EnvServerError, LocalServer, ServerSettings
from viewfinder.server.local_provider import LocalProvider
from viewfinder.server.provided import env_spec

TK_RED = """
import tkinter as tk
root = tk.Tk()
root.overrideredirect(True)
root.geometry("320x240+0+0")
tk.Frame(root, bg="#ff0000", width=320, height=240).pack()
root.update()
capture_screenshot()
"""


def pixel(shot: str, x: int, y: int) -> tuple[int, int, int]:
    image = Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
    found: tuple[int, int, int] = image.getpixel((x, y))  # type: ignore[assignment]
    return found


def health(base: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{base}/health").json()
    return found


# -- the hook, and the local provider ---------------------------------------------------------


class CountingProvider(LocalProvider):
    """The local provider, counting the sessions it opens."""

    opened: list[str] = []

    def open(self, session_id: str) -> Any:
        CountingProvider.opened.append(session_id)
        return super().open(session_id)


class CountingPlugin:
    @hookimpl
    def viewfinder_register_session_providers(self, register: Callable[..., None]) -> None:
        register("counting", CountingProvider)


def test_a_plugin_provider_runs_the_servers_sessions(
    viewfinder_plugin: Callable[..., str], serve: Callable[..., LocalServer]
) -> None:
    viewfinder_plugin(CountingPlugin(), name="counting-plugin")
    assert session_providers()["counting"].plugin == "counting-plugin"
    CountingProvider.opened.clear()
    options = {"max_sessions": 1, "pool_size": 1, "width": 640, "height": 480}
    server = serve(provider="counting", provider_options=options)
    with CodingEnv(server.base_url) as env:
        env.reset()
        assert env.step("print(6 * 7)").observation.stdout == "42\n"
        provider = health(server.base_url)["provider"]
        assert (provider["sessions"], provider["displays"]["in_use"]) == (1, 1)
    assert len(CountingProvider.opened) == 1
    wait_until(lambda: health(server.base_url)["provider"]["sessions"] == 0, "the session to end")
    # the provider's slots count: a second session is refused with CAPACITY_REACHED
    with CodingEnv(server.base_url) as first:
        first.reset()
        with CodingEnv(server.base_url) as second, pytest.raises(EnvServerError) as refused:
            second.reset()
        assert refused.value.code == "CAPACITY_REACHED"
        assert "the most this provider allows (1)" in str(refused.value)


def test_two_plugins_claiming_one_provider_name_is_an_error(
    viewfinder_plugin: Callable[..., str],
) -> None:
    viewfinder_plugin(CountingPlugin(), name="first-plugin")

    class Thief:
        @hookimpl
        def viewfinder_register_session_providers(self, register: Callable[..., None]) -> None:
            register("counting", "somewhere.else:Provider")

    viewfinder_plugin(Thief(), name="thief")
    with pytest.raises(PluginError, match="'counting' is registered by both"):
        session_providers()


def test_unknown_providers_and_options_are_refused_clearly() -> None:
    spec = env_spec(ServerSettings())
    with pytest.raises(UnknownProviderError, match=r"unknown session provider 'kubernetes'.*local"):
        open_provider("kubernetes", spec)
    with pytest.raises(ProviderOptionError, match=r"no option 'adress'.*height"):
        open_provider("local", spec, adress="auto")
    with pytest.raises(ValueError, match="import path"):
        EnvSpec("no_colon_here")
    with pytest.raises(ValueError, match="provider must be"):
        ServerSettings(provider=" ")


def test_the_local_provider_runs_sessions_here() -> None:
    settings = ServerSettings(codeenv=CodeEnvConfig(width=320, height=240, timeout_s=20))
    provider = open_provider(
        "local", env_spec(settings), pool_size=1, width=320, height=240, max_sessions=1
    )
    try:
        session = provider.open("here")
        assert session.node == "local"
        session.call("reset")
        result = session.call("step", CodeAction(code=TK_RED + "print('drawn')"))
        assert result.stdout == "drawn\n"
        assert pixel(result.screenshots[0], 160, 120) == (255, 0, 0)
        assert session.call("state").step_count == 1
        with pytest.raises(NoFreeSlotError, match="most this provider allows"):
            provider.open("one too many")
        assert provider.stats()["displays"]["in_use"] == 1
        session.close()
        assert provider.free_slots() == 1
    finally:
        provider.close()


# -- viewfinder serve --provider ray ------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with local_cluster([{"viewfinder_display": 1}, {"viewfinder_display": 1}]) as running_cluster:
        yield running_cluster


def stopped_log(process: subprocess.Popen[bytes], folder: Path) -> str:
    """The server's log once it has ended (SIGKILL if SIGTERM did not end it in 60 s)."""
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(30)
    return (folder / "server.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def ray_server(
    cluster: LocalCluster,
    tmp_path_factory: pytest.TempPathFactory,
    start_ray_server: Callable[..., tuple[subprocess.Popen[bytes], str]],
) -> Iterator[str]:
    """``viewfinder serve --provider ray`` for the module. After it stops, no session
    actor, nor anything an actor started, may be left."""
    folder = tmp_path_factory.mktemp("ray-server")
    process, base = start_ray_server(cluster.address, folder)
    ray_server_sessions.clear()
    try:
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        log = stopped_log(process, folder)
    assert process.returncode in (0, 128 + signal.SIGTERM), log[-3000:]
    assert "Application shutdown complete" in log and "Traceback" not in log, log[-3000:]
    assert ray_server_sessions  # the tests noted them
    wait_until(
        lambda: (
            not session_actor_processes() and not any(running(pid) for pid in ray_server_sessions)
        ),
        "every session actor, and its display and worker, to exit with the server",
    )


#: Every process of the ray server's sessions seen by the tests (actors and below).
ray_server_sessions: set[int] = set()


def note_session_processes() -> None:
    for actor in session_actor_processes():
        ray_server_sessions.update({actor} | descendants(actor))


def all_slots_free(base: str) -> None:
    """Wait until both display slots of the cluster are free, whoever held them: the
    sessions of the tests before close once their server saw the client leave, and
    their slots come back once Ray has reaped their actors (a test's own server starts
    beside the module's)."""
    wait_until(lambda: health(base)["provider"]["free_slots"] == 2, "the cluster's slots")


def nodes_with_sessions(base: str) -> dict[str, int]:
    nodes = health(base)["provider"]["nodes"]
    return {node["node"]: node["sessions"] for node in nodes if node["sessions"]}


def test_openenv_client_drives_a_ray_session_end_to_end(
    ray_server: str, code_observation_client: type[Any], blue_then_red: str
) -> None:
    all_slots_free(ray_server)
    provider = health(ray_server)["provider"]
    assert (provider["name"], provider["free_slots"]) == ("ray", 2)
    with GenericEnvClient(base_url=ray_server).sync() as env:
        first = env.reset()
        assert first.observation["exit_code"] == 0
        env.step({"code": "x = 20"})
        result = env.step({"code": blue_then_red + "print(x + 1)"})
        assert result.observation["stdout"] == "21\n"  # globals kept across steps
        blue, red = result.observation["screenshots"]
        assert (pixel(blue, 160, 120), pixel(red, 160, 120)) == ((0, 0, 255), (255, 0, 0))
        # the last capture, where OpenEnv's clients read it
        assert base64.b64decode(result.observation["screenshot"]) == base64.b64decode(red)
        assert env.state()["step_count"] == 2
        assert sum(nodes_with_sessions(ray_server).values()) == 1
        note_session_processes()
    with code_observation_client(base_url=ray_server).sync() as typed:
        typed.reset()
        observation = typed.step(CodeAction(code=blue_then_red)).observation
        assert observation.screenshot is not None
        assert pixel(observation.screenshot, 160, 120) == (255, 0, 0)
        assert observation.screenshot == observation.screenshots[-1]
    wait_until(lambda: not nodes_with_sessions(ray_server), "the session's slot to be free")


def test_sessions_land_on_distinct_nodes_and_the_cluster_caps_them(
    ray_server: str, cluster: LocalCluster
) -> None:
    all_slots_free(ray_server)
    with CodingEnv(ray_server) as first, CodingEnv(ray_server) as second:
        first.reset()
        second.reset()
        assert nodes_with_sessions(ray_server) == {cluster.node_id(0): 1, cluster.node_id(1): 1}
        note_session_processes()
        # --max-sessions is 4, but the cluster has two display slots
        with CodingEnv(ray_server) as third, pytest.raises(EnvServerError) as refused:
            third.reset()
        assert refused.value.code == "CAPACITY_REACHED"
        assert "no free display slot" in str(refused.value)
        assert first.step("print('still here')").observation.stdout == "still here\n"


def test_a_node_that_dies_fails_only_its_sessions(ray_server: str, cluster: LocalCluster) -> None:
    all_slots_free(ray_server)
    with CodingEnv(ray_server) as kept, CodingEnv(ray_server) as other:
        kept.reset()
        other.reset()
        kept.step("x = 41")
        doomed_index = cluster.add({"viewfinder_display": 1})
        doomed_node = cluster.node_id(doomed_index)
        with CodingEnv(ray_server) as doomed:
            doomed.reset()  # the only free slot: on the new node
            assert nodes_with_sessions(ray_server)[doomed_node] == 1
            doomed.step("import tkinter; tkinter.Tk(); capture_screenshot()")
            note_session_processes()
            cluster.remove(doomed_index)
            with pytest.raises(EnvServerError) as lost:
                doomed.step("print('never')")
            assert lost.value.code == "SESSION_LOST"
            assert lost.value.data["node"] == doomed_node  # the id, as /health gives it
            assert "its node died" in str(lost.value)
        # the others go on, and the server counts the loss
        assert kept.step("print(x + 1)").observation.stdout == "42\n"
        assert health(ray_server)["lost_sessions"] == 1
        assert doomed_node not in nodes_with_sessions(ray_server)
        other.close()
        # a new session goes to a node that is alive
        wait_until(lambda: len(nodes_with_sessions(ray_server)) == 1, "the other's slot")
        with CodingEnv(ray_server) as replacement:
            assert replacement.step("print('new')").observation.stdout == "new\n"
            assert set(nodes_with_sessions(ray_server)) == {cluster.node_id(0), cluster.node_id(1)}
            note_session_processes()


def test_a_stop_that_takes_more_than_three_seconds_still_ends_cleanly(
    cluster: LocalCluster,
    tmp_path: Path,
    start_ray_server: Callable[..., tuple[subprocess.Popen[bytes], str]],
) -> None:
    # Ray's driver hands SIGTERM to abseil's failure handler first, which arms a 3 s
    # SIGABRT (ray-project/ray#64830); a stop that closes sessions for longer than that
    # was a core dump, with the sessions' actors left to Ray. A session whose actor is
    # stopped (SIGSTOP) for 5 s makes the stop that long.
    process, base = start_ray_server(cluster.address, tmp_path)
    try:
        all_slots_free(base)
        before = session_actor_processes()
        env = CodingEnv(base)
        env.reset()
        (actor,) = session_actor_processes() - before
        os.kill(actor, signal.SIGSTOP)
        try:
            process.send_signal(signal.SIGTERM)
            time.sleep(5)
        finally:
            os.kill(actor, signal.SIGCONT)
        log = stopped_log(process, tmp_path)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
    assert process.returncode == 128 + signal.SIGTERM, log[-3000:]
    assert "Application shutdown complete" in log and "Traceback" not in log, log[-3000:]
    wait_until(lambda: not running(actor), "the session's actor to end with the server")


def test_a_ray_session_slow_to_start_keeps_its_websocket_answering(
    cluster: LocalCluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    start_ray_server: Callable[..., tuple[subprocess.Popen[bytes], str]],
) -> None:
    # the actor waits 4 s before it builds its env (the test hook), longer than the
    # client's keepalive allows (a ping every 0.5 s, 1 s for its pong)
    monkeypatch.setenv("VIEWFINDER_RAY_TEST_OPEN_DELAY_S", "4")
    process, base = start_ray_server(cluster.address, tmp_path)
    try:
        all_slots_free(base)
        with connect(
            base.replace("http://", "ws://") + "/ws", ping_interval=0.5, ping_timeout=1.0
        ) as ws:
            ws.send(json.dumps({"type": "reset", "data": {}}))  # queued while it opens
            ws.send(json.dumps({"type": "step", "data": {"code": "print('after the wait')"}}))
            pongs = 0
            while True:  # keepalive runs meanwhile; the answers come once it is open
                assert ws.ping().wait(5), "no pong: the server does not read the socket"
                pongs += 1
                try:
                    reset = json.loads(ws.recv(timeout=0.5))
                    break
                except TimeoutError:
                    assert pongs < 600, "the session did not open"
            step = json.loads(ws.recv(timeout=60))
        assert reset["type"] == "observation", reset
        assert step["data"]["observation"]["stdout"] == "after the wait\n"
        assert pongs >= 4  # pongs came while the actor waited its 4 s
    finally:
        process.send_signal(signal.SIGTERM)
        log = stopped_log(process, tmp_path)
    assert process.returncode in (0, 128 + signal.SIGTERM), log[-3000:]
