"""A real Ray cluster of several nodes on this one machine, for tests and benchmarks.

>>> with local_cluster([{"viewfinder_display": 2}, {"viewfinder_display": 2}]) as cluster:
...     provider = open_provider("ray", spec)           # doctest: +SKIP
...     cluster.remove(1)                                 # the second node dies

Every node listens on 127.0.0.1 only, with no dashboard, one CPU and a small object
store, so a two-core machine can hold a few. Each node also gets a resource of its own
(``cluster.marker(i)``), so a test can place work on a given node. The driver (this
process) is connected to the cluster while it runs; everything is stopped at the end.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Ray reads these when it is imported: loopback only, no usage statistics.
TEST_ENVIRONMENT = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
MiB = 1024 * 1024


@dataclass
class LocalCluster:
    """The running cluster: its address, and its nodes in the order they were asked for."""

    cluster: Any
    address: str
    nodes: list[Any] = field(default_factory=list)
    #: What every node is started with (CPUs, object store, address).
    node_args: dict[str, Any] = field(default_factory=dict)

    def node_id(self, index: int) -> str:
        """The Ray node id (hex) of node ``index``."""
        return str(self.nodes[index].node_id)

    @staticmethod
    def marker(index: int) -> str:
        """The resource only node ``index`` has (one unit of it)."""
        return f"viewfinder_test_node_{index}"

    def add(self, resources: Mapping[str, float]) -> int:
        """Start one more node with ``resources`` (and its marker); its index."""
        index = len(self.nodes)
        node = self.cluster.add_node(
            **self.node_args, resources={**resources, self.marker(index): 1}
        )
        self.nodes.append(node)
        self.cluster.wait_for_nodes()
        return index

    def remove(self, index: int, timeout: float = 60.0) -> None:
        """Stop node ``index`` (its raylet, and every worker on it) and return once the
        cluster counts it dead."""
        import ray

        node_id = self.node_id(index)
        self.cluster.remove_node(self.nodes[index])
        deadline = time.monotonic() + timeout
        while any(n["NodeID"] == node_id and n["Alive"] for n in ray.nodes()):
            if time.monotonic() > deadline:
                raise AssertionError(f"node {node_id} still counts as alive after {timeout:g} s")
            time.sleep(0.1)

    def kill_raylet(self, index: int) -> None:
        """SIGKILL node ``index``'s raylet and every process below it (its workers and
        actors, and what they started), by their pids, as a crashed machine ends them:
        the head learns of it only later, by its health checks. Returns at once; the
        node's other processes are stopped with the cluster."""
        import signal

        raylet = self.nodes[index].all_processes["raylet"][0].process
        below = descendants(raylet.pid)
        for pid in (raylet.pid, *below):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raylet.wait(30)


@contextlib.contextmanager
def local_cluster(
    nodes: Sequence[Mapping[str, float]],
    *,
    object_store_mb: int = 100,
    connect: bool = True,
) -> Iterator[LocalCluster]:
    """Start a head node and worker nodes with the resources ``nodes`` gives (the
    first is the head), connect this process to it (``connect``), and stop it all at
    the end."""
    if not nodes:
        raise ValueError("a cluster needs at least one node")
    for name, value in TEST_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    import ray
    from ray.cluster_utils import Cluster

    common: dict[str, Any] = {
        "num_cpus": 1,
        "object_store_memory": object_store_mb * MiB,
        "node_ip_address": "127.0.0.1",
    }

    def resources(index: int) -> dict[str, float]:
        return {**nodes[index], LocalCluster.marker(index): 1}

    cluster = Cluster(
        initialize_head=True,
        head_node_args={**common, "resources": resources(0), "include_dashboard": False},
    )
    running = LocalCluster(cluster, cluster.address, [cluster.head_node], common)
    try:
        for index in range(1, len(nodes)):
            running.nodes.append(cluster.add_node(**common, resources=resources(index)))
        cluster.wait_for_nodes()
        if connect:
            ray.init(
                address=cluster.address,
                include_dashboard=False,
                log_to_driver=False,
                _node_ip_address="127.0.0.1",
            )
        yield running
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


def session_actor_processes() -> set[int]:
    """Live session actors on this machine (Ray titles their processes
    ``ray::SessionActor``)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:  # it ended while we looked
            continue
        if title.startswith(b"ray::SessionActor") and state != "Z":
            found.add(int(entry.name))
    return found


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children, their children, ...). Reads /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parents[int(entry.name)] = int(
                (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            )
        except OSError:  # it ended while we looked
            continue
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


class ProbeEnv:
    """A small env for tests of providers: it keeps a total across calls, tells where
    it runs, sleeps until cancelled, fails on request, and writes ``closed_marker``
    (a file path) when it is closed."""

    def __init__(self, session_id: str, closed_marker: str | None = None) -> None:
        self.session_id = session_id
        self.total = 0
        self._closed_marker = closed_marker
        self._cancelled = threading.Event()

    def where(self) -> dict[str, Any]:
        """This process's id and the Ray node it is on (None outside Ray)."""
        node = None
        with contextlib.suppress(Exception):
            import ray

            node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else None
        return {"pid": os.getpid(), "node": node, "session_id": self.session_id}

    def add(self, amount: int) -> int:
        self.total += amount
        return self.total

    def payload(self, size: int) -> bytes:
        """``size`` bytes (a large result travels through the object store)."""
        return bytes(range(256)) * (size // 256) + bytes(size % 256)

    def sleep(self, seconds: float) -> str:
        """Wait ``seconds``, or until cancelled; says which."""
        cancelled = self._cancelled.wait(seconds)
        self._cancelled.clear()
        return "cancelled" if cancelled else "slept"

    def fail(self, message: str) -> None:
        raise ValueError(message)

    def fail_oddly(self) -> None:
        raise _OddError("odd", 3)

    def cancel(self, reason: str) -> bool:
        self._cancelled.set()
        return True

    def close(self) -> None:
        if self._closed_marker is not None:
            with open(self._closed_marker, "w") as marker:
                marker.write(self.session_id)


class _OddError(Exception):
    """An exception pickle cannot rebuild (its __init__ takes two arguments)."""

    def __init__(self, message: str, count: int) -> None:
        super().__init__(f"{message} x{count}")


def probe_env(session_id: str, **kwargs: Any) -> ProbeEnv:
    """The :class:`ProbeEnv` factory, for ``EnvSpec("viewfinder.ray.testing:probe_env")``."""
    return ProbeEnv(session_id, **kwargs)
