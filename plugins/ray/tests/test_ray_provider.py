"""The ray provider on a real Ray cluster of several nodes on this machine.

One cluster for the module (Ray starts slowly): two nodes with one display slot each,
and a third added by the test that loses it. Every node listens on 127.0.0.1 only.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvConfig
from viewfinder.core import EnvSpec, SessionLostError, open_provider
from viewfinder.core.providers import (
    NoFreeSlotError,
    ProviderError,
    ProviderOptionError,
    session_providers,
)
from viewfinder.core.testing import running, wait_until
from viewfinder.ray import RayProvider
from viewfinder.ray.testing import (
    LocalCluster,
    descendants,
    local_cluster,
    session_actor_processes,
)

PROBE = EnvSpec("viewfinder.ray.testing:probe_env")
#: The server's code env, by import path (this plugin does not import the server).
CODE = EnvSpec(
    "viewfinder.server.code_served:code_env",
    {"config": CodeEnvConfig(width=320, height=240, timeout_s=30)},
    "viewfinder.server.provided:RESULTS",
)
TK_RED = """
import tkinter as tk
root = tk.Tk()
root.overrideredirect(True)
root.geometry("320x240+0+0")
tk.Frame(root, bg="#ff0000", width=320, height=240).pack()
root.update()
capture_screenshot()
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with local_cluster([{"viewfinder_display": 1}, {"viewfinder_display": 1}]) as running_cluster:
        yield running_cluster
    assert session_actor_processes() == set()


def test_the_plugin_registers_the_ray_provider() -> None:
    # through viewfinder_register_session_providers, by import path
    spec = session_providers()["ray"]
    assert (spec.plugin, spec.target) == ("ray", "viewfinder.ray.provider:RayProvider")
    with pytest.raises(ProviderOptionError, match="no option 'adress'"):
        open_provider("ray", PROBE, adress="auto")


def test_a_ray_client_address_without_rays_client_is_a_clear_error() -> None:
    # `ray[client]` (grpcio) is not in the lock: a ray:// address says what to install,
    # where Ray itself would fail deep in its import
    assert importlib.util.find_spec("grpc") is None
    with pytest.raises(ProviderError, match=r"pip install 'ray\[client\]'"):
        open_provider("ray", PROBE, address="ray://127.0.0.1:10001")


def test_sessions_land_on_distinct_nodes_and_the_cluster_caps_them(
    cluster: LocalCluster,
) -> None:
    provider = open_provider("ray", PROBE)
    assert isinstance(provider, RayProvider)
    try:
        assert provider.free_slots() == 2
        first, second = provider.open("first"), provider.open("second")
        assert {first.pid, second.pid} <= session_actor_processes()
        assert {first.node, second.node} == {cluster.node_id(0), cluster.node_id(1)}
        # each session reports the node it runs on itself
        assert first.call("where") == {"pid": first.pid, "node": first.node, "session_id": "first"}
        assert second.call("where")["node"] == second.node
        with pytest.raises(NoFreeSlotError, match="no free display slot") as refused:
            provider.open("third")
        assert refused.value.code == "CAPACITY_REACHED"
        stats = provider.stats()
        assert stats["free_slots"] == 0
        assert sorted(node["sessions"] for node in stats["nodes"]) == [1, 1]
        node_of_first = first.node
        first.close()
        wait_until(lambda: provider.free_slots() == 1, "the closed session's slot to be free")
        again = provider.open("again")  # the freed slot, on the freed node
        assert again.node == node_of_first
        wait_until(lambda: not running(first.pid), "the closed session's actor to exit")
    finally:
        provider.close()


def test_slots_held_by_others_count_and_a_full_cluster_refuses_at_once(
    cluster: LocalCluster,
) -> None:
    import ray
    from ray.util.placement_group import placement_group, remove_placement_group

    # another driver (a second server, a trainer's EnvPool) holds one of the two slots
    held = placement_group([{"viewfinder_display": 1}])
    ray.get(held.ready(), timeout=60)
    provider = open_provider("ray", PROBE, placement_timeout_s=1.0)
    assert isinstance(provider, RayProvider)
    try:
        wait_until(lambda: provider.free_slots() == 1, "the held slot to count as taken")
        mine = provider.open("mine")
        assert mine.call("add", 2) == 2
        with pytest.raises(NoFreeSlotError, match="no free display slot") as refused:
            provider.open("one too many")
        # true counts: this provider runs one session, and can run one now
        assert (refused.value.running, refused.value.slots) == (1, 1)
        assert "other drivers" in str(refused.value)
        assert "none came free within 1 s" in str(refused.value)  # not queued behind them
    finally:
        remove_placement_group(held)
        provider.close()


def test_calls_keep_state_and_bring_back_results_and_errors(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    marker = tmp_path / "closed"
    spec = EnvSpec("viewfinder.ray.testing:probe_env", {"closed_marker": str(marker)})
    provider = open_provider("ray", spec)
    try:
        session = provider.open("calls")
        assert [session.call("add", 2), session.call("add", 3)] == [2, 5]
        assert session.call("total") == 5  # an attribute: its value
        big = session.call("payload", 3 * 1024 * 1024)  # through the object store
        assert len(big) == 3 * 1024 * 1024 and big[:3] == b"\x00\x01\x02"
        with pytest.raises(ValueError, match="as asked"):
            session.call("fail", "failed as asked")
        with pytest.raises(ProviderError, match=r"_OddError: odd x3"):
            session.call("fail_oddly")  # it cannot be rebuilt here: its type and message
        with pytest.raises(AttributeError, match="private"):
            session.call("_cancelled")
        with pytest.raises(TypeError, match="attribute of the env"):
            session.call("total", 1)
        assert session.call("add", 1) == 6  # the session went on after every error
        session.close()
        assert marker.read_text() == "calls"  # the env was closed in the actor
        with pytest.raises(ProviderError, match="closed"):
            session.call("add", 1)
    finally:
        provider.close()


def test_cancel_stops_a_running_call(cluster: LocalCluster) -> None:
    provider = open_provider("ray", PROBE)
    try:
        session = provider.open("cancel")
        answer: list[str] = []
        sleeper = threading.Thread(target=lambda: answer.append(session.call("sleep", 120)))
        sleeper.start()
        session.cancel("stop")  # the probe keeps a cancel that comes before its sleep
        sleeper.join(60)
        assert answer == ["cancelled"]
        assert session.call("sleep", 0.01) == "slept"
    finally:
        provider.close()


def test_a_node_that_dies_fails_only_its_sessions(cluster: LocalCluster) -> None:
    provider = open_provider("ray", CODE)
    try:
        kept, other = provider.open("kept"), provider.open("other")  # nodes 0 and 1: full
        doomed_index = cluster.add({"viewfinder_display": 1})
        doomed = provider.open("doomed")  # the only free slot is on the new node
        assert doomed.node == cluster.node_id(doomed_index)
        for session in (kept, doomed):
            session.call("reset")
        result = doomed.call("step", CodeAction(code=TK_RED))
        (shot,) = result.screenshots  # came back as bytes, handed over as base64 again
        image = Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
        assert image.size == (320, 240) and image.getpixel((160, 120)) == (255, 0, 0)
        doomed_processes = {doomed.pid} | descendants(doomed.pid)
        assert len(doomed_processes) >= 3  # the actor, its Xvfb, its worker (and bwrap)

        # a crash, not a stop: the call fails before the head counts the node dead
        cluster.kill_raylet(doomed_index)
        with pytest.raises(SessionLostError, match="its node died") as lost:
            doomed.call("step", CodeAction(code="print('never')"))
        assert lost.value.code == "SESSION_LOST"
        assert lost.value.node == doomed.node == cluster.node_id(doomed_index)  # one form
        with pytest.raises(SessionLostError):  # and again: the session cannot go on
            doomed.call("state")
        # the other sessions go on
        kept.call("step", CodeAction(code="x = 41"))
        assert kept.call("step", CodeAction(code="print(x + 1)")).stdout == "42\n"
        # the lost slot no longer counts; a new session goes to a node that is alive
        assert provider.free_slots() == 0
        other_node = other.node
        other.close()
        replacement = provider.open("replacement")
        assert replacement.node == other_node
        replacement.call("reset")  # its actor cleans up what the dead node's actor left
        doomed.close()
        wait_until(
            lambda: not any(running(pid) for pid in doomed_processes),
            "the dead node's actor, display and worker to be gone",
        )
        everything = {s.pid for s in (kept, replacement)}
        everything |= {pid for s in (kept, replacement) for pid in descendants(s.pid)}
    finally:
        provider.close()
    wait_until(
        lambda: not any(running(pid) for pid in everything),
        "every actor, display and worker to exit",
    )
