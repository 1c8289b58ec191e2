"""``EnvPool`` on both providers, ``local`` and ``ray``: the same steps give the same results.

The Ray cluster (one node with three display slots; nodes added by the test that loses
one) is shared by the module: Ray starts slowly.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeObservation
from viewfinder.core.testing import running, wait_until
from viewfinder.ray.testing import LocalCluster, local_cluster, session_actor_processes
from viewfinder.server import DesktopTask, EnvError, EnvPool, ServerSettings
from viewfinder.server.mcp_wire import CallToolObservation, ListToolsObservation

SETTINGS = ServerSettings(
    pool_size=1,
    display_width=320,
    display_height=240,
    codeenv=CodeEnvConfig(width=320, height=240, timeout_s=30),
)
PROVIDERS = ("local", "ray")
#: A window of one colour over the whole 320x240 screen.
TK_WINDOW = """
import tkinter as tk
root = tk.Tk()
root.overrideredirect(True)
root.geometry("320x240+0+0")
tk.Frame(root, bg="{colour}", width=320, height=240).pack()
"""
#: Code for a code session: the window, its screenshot, its colour printed.
TK_COLOUR = TK_WINDOW + 'root.update()\ncapture_screenshot()\nprint("{colour}")\n'
#: An app for a desktop session.
TK_APP = TK_WINDOW.format(colour="#008000") + "root.mainloop()\n"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with local_cluster([{"viewfinder_display": 3}]) as running_cluster:
        yield running_cluster
    assert session_actor_processes() == set()


def centre(shot: str) -> tuple[int, int, int]:
    image = Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
    found: tuple[int, int, int] = image.getpixel((image.width // 2, image.height // 2))  # type: ignore[assignment]
    return found


def summary(result: Any) -> Any:
    """What must be the same on every provider (not ids, displays or timings)."""
    if isinstance(result, EnvError):
        return ("error", result.code, result.index)
    if isinstance(result, CodeObservation):
        return (result.stdout, result.exit_code, [centre(shot) for shot in result.screenshots])
    if isinstance(result, ListToolsObservation):
        return sorted(tool.name for tool in result.tools)
    if isinstance(result, CallToolObservation):
        images = [
            part for part in (result.result or {}).get("content", []) if part["type"] == "image"
        ]
        return (result.tool_name, result.error, [centre(part["data"]) for part in images])
    if isinstance(result, dict):  # a desktop reset
        return result["observation"]["metadata"]["screen_size"]
    raise AssertionError(f"unexpected result {result!r}")


def run_code_batch(provider: str) -> list[Any]:
    with EnvPool(3, provider, "code", settings=SETTINGS) as pool:
        assert len(pool) == 3
        first = pool.reset_all()
        assert all(isinstance(obs, CodeObservation) for obs in first)
        outcomes = [pool.step_all([f"x = {i}" for i in range(3)])]
        outcomes.append(
            pool.step_all(
                [
                    TK_COLOUR.format(colour="#ff0000"),
                    CodeAction(code="print(x * 10)"),
                    {"code": "import sys; print(x); sys.exit(3)"},
                ]
            )
        )
        # a malformed action is that session's error; the others run
        outcomes.append(pool.step_all(["print(x + 1)", {"code": 5}, "print(x + 1)"]))
        return [summary(result) for batch in outcomes for result in batch]


def test_code_sessions_give_the_same_results_on_both_providers(cluster: LocalCluster) -> None:
    results = {provider: run_code_batch(provider) for provider in PROVIDERS}
    assert results["local"] == results["ray"]
    assert results["local"][3:6] == [
        ("#ff0000\n", 0, [(255, 0, 0)]),  # globals kept, the Tk window captured
        ("10\n", 0, []),
        ("2\n", 3, []),
    ]
    assert results["local"][6:] == [
        ("1\n", 0, []),
        ("error", "VALIDATION_ERROR", 1),
        ("3\n", 0, []),
    ]


async def test_the_async_calls_and_timeouts_on_both_providers(cluster: LocalCluster) -> None:
    seen = {}
    for provider in PROVIDERS:
        async with EnvPool(2, provider, "code", settings=SETTINGS, timeout_s=60) as pool:
            await pool.areset_all()
            results = await pool.astep_all(
                ["import time; time.sleep(120)", "print('quick')"], timeout_s=3
            )
            late, quick = results
            assert isinstance(late, EnvError) and late.code == "TIMEOUT"
            assert (late.index, late.node) == (0, pool.nodes[0])
            # the session that timed out goes on (its interpreter was restarted)
            after = await pool.astep_all(["print('again')", "print('quick')"])
            seen[provider] = [summary(quick), *map(summary, after), summary(late)]
    assert seen["local"] == seen["ray"]
    assert seen["local"][:3] == [("quick\n", 0, []), ("again\n", 0, []), ("quick\n", 0, [])]


def test_desktop_sessions_give_the_same_results_on_both_providers(cluster: LocalCluster) -> None:
    # each reset starts an app: in a Ray actor, whose threads may hold locks at a fork,
    # the app is started without a preexec_fn (viewfinder.core.lifetime)
    app = [sys.executable, "-c", TK_APP]
    settings = dataclasses.replace(SETTINGS, desktop=DesktopTask(apps=[app]))
    results = {}
    for provider in PROVIDERS:
        with EnvPool(2, provider, "desktop", settings=settings) as pool:
            resets = pool.reset_all()
            steps = pool.step_all(
                [{"type": "list_tools"}, {"type": "call_tool", "tool_name": "screenshot"}]
            )
            results[provider] = [summary(result) for result in [*resets, *steps]]
    assert results["local"] == results["ray"]
    assert results["local"][:2] == [[320, 240], [320, 240]]
    assert "computer" in results["local"][2]
    assert results["local"][3] == ("screenshot", None, [(0, 128, 0)])  # the app's green


def test_a_lost_session_is_a_value_and_can_be_reopened(cluster: LocalCluster) -> None:
    # the pool takes every slot, so one session must be on the node that goes away
    doomed = cluster.add({"viewfinder_display": 1})
    with EnvPool(4, "ray", "code", settings=SETTINGS) as pool:
        assert pool.nodes.count(cluster.node_id(doomed)) == 1
        index = pool.nodes.index(cluster.node_id(doomed))
        pool.reset_all()
        actor_pids = set(session_actor_processes())
        cluster.remove(doomed)
        results = pool.step_all(["print('alive')"] * 4)
        for i, result in enumerate(results):
            if i == index:
                assert isinstance(result, EnvError) and result.code == "SESSION_LOST"
                # the node's id, in the form pool.nodes gives it
                assert result.node == pool.nodes[index] == cluster.node_id(doomed)
            else:
                assert isinstance(result, CodeObservation) and result.stdout == "alive\n"
        # one of the others ends, so a node that is alive has a free slot (starting one
        # more node would do too, at the price of a Ray node's start)
        freed = next(i for i in range(4) if i != index)
        pool.envs[freed].close()
        pool.reopen(index)
        assert pool.nodes[index] == cluster.node_id(0)
        assert summary(pool.step_all(["print('alive')"] * 4)[index]) == ("alive\n", 0, [])
    wait_until(lambda: not any(running(pid) for pid in actor_pids), "the pool's actors to exit")
