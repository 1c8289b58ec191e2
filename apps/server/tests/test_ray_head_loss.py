"""``viewfinder serve --provider ray`` when the cluster's head dies: its GCS is killed
(SIGKILL, by its pid) on a one-node cluster this test starts for itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from viewfinder.ray.testing import local_cluster

#: Ray ends a driver whose head has been gone this long; the server must outlive it.
RAY_DRIVER_GIVES_UP_S = 60


def probe(address: str) -> int:
    """The exit code of the Kubernetes probe command of docs/scale.md's manifest."""
    ray = Path(sys.executable).parent / "ray"
    return subprocess.run(
        [str(ray), "health-check", "--address", address],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
    ).returncode  # fmt: skip


@pytest.mark.slow
def test_a_lost_head_is_said_to_every_session_and_the_server_stays_up(
    tmp_path: Path, start_ray_server: Callable[..., tuple[subprocess.Popen[bytes], str]]
) -> None:
    with local_cluster([{"viewfinder_display": 1}], connect=False) as cluster:
        gcs = cluster.cluster.head_node.all_processes["gcs_server"][0].process.pid
        process, base = start_ray_server(cluster.address, tmp_path)
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
