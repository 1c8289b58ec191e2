"""``viewfinder serve --provider ray`` when the cluster's head dies: its GCS is killed
(SIGKILL, by its pid) on a one-node cluster this test starts for itself."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from viewfinder.core.testing import wait_until
from viewfinder.ray.testing import local_cluster

#: Ray ends a driver whose head has been gone this long; the server must outlive it.
RAY_DRIVER_GIVES_UP_S = 60


def start_server(address: str, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "viewfinder.cli", "serve", "--port", str(port),
             "--size", "320x240", "--max-sessions", "2",
             "--provider", "ray", "--ray-address", address],
            stdout=subprocess.DEVNULL, stderr=log_file,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {log_path.read_text()[-3000:]}")
        try:
            return httpx.get(f"{base}/health").status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(answers, "the ray server to answer /health", timeout=120)
    return process, base


def probe(address: str) -> int:
    """The exit code of the Kubernetes probe command of docs/scale.md's manifest."""
    ray = Path(sys.executable).parent / "ray"
    return subprocess.run(
        [str(ray), "health-check", "--address", address],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
    ).returncode  # fmt: skip


@pytest.mark.slow
def test_a_lost_head_is_said_to_every_session_and_the_server_stays_up(tmp_path: Path) -> None:
    with local_cluster([{"viewfinder_display": 1}], connect=False) as cluster:
        gcs = cluster.cluster.head_node.all_processes["gcs_server"][0].process.pid
        process, base = start_server(cluster.address, tmp_path / "server.log")
        ws_url = base.replace("http://", "ws://") + "/ws"
        try:
            assert probe(cluster.address) == 0  # the manifest's probe passes on a live node
            with connect(ws_url) as ws:
                ws.send(json.dumps({"type": "reset", "data": {}}))
                assert json.loads(ws.recv(timeout=120))["type"] == "observation"
                os.kill(gcs, signal.SIGKILL)
                killed_at = time.monotonic()
                # told without asking: SESSION_LOST with the reason, then a close frame
                lost = json.loads(ws.recv(timeout=60))
                with pytest.raises(ConnectionClosed) as closed:
                    ws.recv(timeout=30)
            assert lost["data"]["code"] == "SESSION_LOST"
            assert "the cluster's head is gone" in lost["data"]["message"]
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
            assert "head is gone" in closed.value.rcvd.reason
            # a new session is refused with the reason
            with connect(ws_url) as refused:
                refused.send(json.dumps({"type": "reset", "data": {}}))
                error = json.loads(refused.recv(timeout=30))["data"]
            assert error["code"] == "SESSION_ERROR" and "head is gone" in error["message"]
            # /health says so, for as long as Ray would have kept its driver and past it
            while time.monotonic() < killed_at + RAY_DRIVER_GIVES_UP_S + 10:
                health = httpx.get(f"{base}/health", timeout=10)
                assert health.status_code == 503
                assert health.json()["provider"]["state"] == "head lost"
                assert process.poll() is None, "the server exited with its cluster's head"
                time.sleep(5)
            assert health.json()["lost_sessions"] == 1
            assert probe(cluster.address) != 0  # and fails once the head is gone
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert process.returncode in (0, 128 + signal.SIGTERM), log[-3000:]
    assert "1 sessions lost: the cluster's head is gone" in log
