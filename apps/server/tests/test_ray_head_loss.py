"""``viewfinder serve --provider ray`` when the cluster's head dies: its GCS is killed
(SIGKILL, by its pid) on a one-node cluster this test starts for itself, under two
servers: one that stays up (the default) and one started with ``--on-head-lost exit``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from viewfinder.cli.app import build_app
from viewfinder.core.testing import running, wait_until
from viewfinder.ray.testing import descendants, local_cluster, session_actor_processes
from viewfinder.server import ServerSettings
from viewfinder.xvfb.server import reap_abandoned

#: Ray ends a driver whose head has been gone this long (60 s unless this variable says
#: otherwise); the server must outlive it. The test's environment asks for 15 s: the
#: server sets its own value over it, so it outlives that too (it would exit at 15 s
#: if it took the environment's).
RAY_DRIVER_GIVES_UP_S = 15
GIVE_UP_ENV = {"RAY_gcs_rpc_server_reconnect_timeout_s": str(RAY_DRIVER_GIVES_UP_S)}


@contextlib.contextmanager
def open_session(ws_url: str) -> Iterator[ClientConnection]:
    """A WebSocket whose session has opened (its reset answered)."""
    with connect(ws_url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv(timeout=120))["type"] == "observation"
        yield ws


def probe(address: str) -> int:
    """The exit code of the Kubernetes probe command of docs/scale.md's manifest."""
    ray = Path(sys.executable).parent / "ray"
    return subprocess.run(
        [str(ray), "health-check", "--address", address],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
    ).returncode  # fmt: skip


@pytest.mark.slow
def test_a_lost_head_is_said_to_every_session_and_the_server_stays_up_or_exits(
    tmp_path: Path, start_ray_server: Callable[..., tuple[subprocess.Popen[bytes], str]]
) -> None:
    (tmp_path / "stay").mkdir()
    (tmp_path / "exit").mkdir()
    with local_cluster([{"viewfinder_display": 2}], connect=False) as cluster:
        gcs = cluster.cluster.head_node.all_processes["gcs_server"][0].process.pid
        process, base = start_ray_server(cluster.address, tmp_path / "stay", env=GIVE_UP_ENV)
        exiting, exiting_base = start_ray_server(
            cluster.address, tmp_path / "exit", 4, "--on-head-lost", "exit", env=GIVE_UP_ENV
        )
        ws_url = base.replace("http://", "ws://") + "/ws"
        try:
            assert probe(cluster.address) == 0  # the manifest's probe passes on a live node
            with (
                open_session(ws_url) as ws,
                open_session(exiting_base.replace("http://", "ws://") + "/ws") as exiting_ws,
            ):
                exiting_processes = descendants(exiting.pid)
                os.kill(gcs, signal.SIGKILL)
                killed_at = time.monotonic()
                # told without asking: SESSION_LOST with the reason, then a close frame
                lost = json.loads(ws.recv(timeout=60))
                with pytest.raises(ConnectionClosed) as closed:
                    ws.recv(timeout=30)
                # the same on the server that then exits
                exiting_lost = json.loads(exiting_ws.recv(timeout=60))
                with pytest.raises(ConnectionClosed) as exiting_closed:
                    exiting_ws.recv(timeout=30)
            assert lost["data"]["code"] == "SESSION_LOST"
            assert "the cluster's head is gone" in lost["data"]["message"]
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
            assert "head is gone" in closed.value.rcvd.reason
            assert exiting_lost["data"]["code"] == "SESSION_LOST"
            assert "the cluster's head is gone" in exiting_lost["data"]["message"]
            assert exiting_closed.value.rcvd is not None
            assert exiting_closed.value.rcvd.code == 1011
            # --on-head-lost exit: status 0, one clear line, nothing left behind
            assert exiting.wait(60) == 0
            exiting_log = (tmp_path / "exit" / "server.log").read_text(errors="replace")
            line = "the Ray cluster's head is gone; stopping (--on-head-lost exit)"
            assert exiting_log.count(line) == 1, exiting_log[-3000:]
            assert [pid for pid in exiting_processes if running(pid)] == []
            # a new session is refused with the reason
            with connect(ws_url) as refused:
                refused.send(json.dumps({"type": "reset", "data": {}}))
                error = json.loads(refused.recv(timeout=30))["data"]
            assert error["code"] == "SESSION_ERROR" and "head is gone" in error["message"]
            # /health says so, for as long as Ray would have kept its driver and past it
            while time.monotonic() < killed_at + RAY_DRIVER_GIVES_UP_S + 10:
                assert process.poll() is None, "the server exited with its cluster's head"
                health = httpx.get(f"{base}/health", timeout=10)
                assert health.status_code == 503
                assert health.json()["provider"]["state"] == "head lost"
                time.sleep(5)
            assert health.json()["lost_sessions"] == 1
            assert probe(cluster.address) != 0  # and fails once the head is gone
        finally:
            for server in (process, exiting):
                if server.poll() is None:
                    server.send_signal(signal.SIGTERM)
            for server in (process, exiting):
                try:
                    server.wait(60)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait(30)
    # Ray kills a lost head's actors outright, so an actor's display may outlive it,
    # owned by a dead pid: the node's next viewfinder start reaps such displays
    # (reap_abandoned); this cluster has no next start, so the test does it.
    wait_until(lambda: not session_actor_processes(), "the session actors to end", timeout=60)
    reap_abandoned()
    log = (tmp_path / "stay" / "server.log").read_text(errors="replace")
    assert process.returncode in (0, 128 + signal.SIGTERM), log[-3000:]
    assert "1 sessions lost: the cluster's head is gone" in log
    assert "--on-head-lost exit" not in log


def test_a_bad_on_head_lost_is_refused() -> None:
    result = CliRunner().invoke(build_app(), ["serve", "--on-head-lost", "restart"])
    assert result.exit_code == 2
    said = " ".join(result.output.replace("│", " ").split())  # unwrapped from its box
    assert "--on-head-lost: 'restart' is not a choice: use stay or exit" in said
    with pytest.raises(ValueError, match="on_head_lost must be stay or exit, got 'later'"):
        ServerSettings(on_head_lost="later")  # type: ignore[arg-type]
    assert ServerSettings().on_head_lost == "stay"
