"""Elements in desktop sessions (``--env desktop``) on a real server on loopback: a task
with ``elements`` starts the screen's accessibility buses, its computer results carry
the elements, an action on an element by ref lands, and a stale ref is an invalid-args
error naming it. The app is a GTK form that logs what is done to it."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

from viewfinder.core.testing import wait_until
from viewfinder.server import LocalServer

from .test_desktop_env import ask, call, ws_url

ROOT = Path(__file__).resolve().parents[3]
GTK_FORM = ROOT / "packages" / "desktop" / "tests" / "gtk_click_form.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi


def text_of(observation: dict[str, Any]) -> str:
    content = (observation.get("result") or {}).get("content", [])
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def said(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_a_task_with_elements_carries_them_and_acts_on_an_element_by_ref(
    serve: Callable[..., LocalServer], tmp_path: Path
) -> None:
    server = serve(env="desktop", allow_any_app=True)
    log = tmp_path / "form.log"
    app = [SYSTEM_PYTHON, str(GTK_FORM), "--log", str(log)]
    with connect(ws_url(server), max_size=None) as ws:
        reset = ask(ws, {"type": "reset", "data": {"apps": [app], "elements": True}})
        assert reset["data"]["observation"]["metadata"]["elements"] is True
        wait_until(lambda: "ready" in said(log), "the form to be drawn")
        # every computer result carries the elements now (the app registers on the bus
        # once it is drawn: the first looks may come before it)
        found = wait_until(
            lambda: re.search(
                r'(e\d+) push button "Save"',
                text_of(call(ws, "computer", action="screenshot")),
            ),
            "the snapshot to list the Save button",
        )
        ref = found.group(1)
        clicked = call(ws, "computer", action="left_click", element=ref)
        assert clicked["error"] is None, clicked
        assert f"left_click on element {ref}" in text_of(clicked)
        assert 'push button "Save"' in text_of(clicked)  # the snapshot after the click
        wait_until(lambda: "clicked Save" in said(log), "the click by element to land")

        gone = call(ws, "computer", action="left_click", element="e999")
        assert gone["error"]["error_type"] == "invalid_args"
        assert "element e999 is not on the screen" in gone["error"]["message"]
        marked = call(ws, "screenshot", elements=True, set_of_mark=True)
        images = [part for part in marked["result"]["content"] if part["type"] == "image"]
        assert len(images) == 2 and 'push button "Save"' in text_of(marked)
    assert said(log).count("clicked Save") == 1


def test_a_task_without_elements_carries_none(
    serve: Callable[..., LocalServer], tmp_path: Path
) -> None:
    server = serve(env="desktop", allow_any_app=True)
    with connect(ws_url(server), max_size=None) as ws:
        reset = ask(ws, {"type": "reset", "data": {"elements": False}})
        assert reset["data"]["observation"]["metadata"]["elements"] is False
        plain = call(ws, "computer", action="screenshot")
        assert plain["error"] is None and "elements (" not in text_of(plain)
        # asked for anyway: an empty list with the reason (no accessibility bus)
        asked = call(ws, "computer", action="screenshot", elements=True)
        assert "none:" in text_of(asked) and "accessibility bus" in text_of(asked)
        bad = ask(ws, {"type": "reset", "data": {"elements": "yes"}})
        assert bad["type"] == "error" and "elements" in json.dumps(bad)


def bus_socket(display: str) -> str:
    """The path of the socket of ``display``'s accessibility bus, from its root window."""
    from Xlib.display import Display as XDisplay

    conn = XDisplay(display)
    try:
        atom = conn.intern_atom("AT_SPI_BUS")
        value = conn.screen().root.get_full_property(atom, 0).value
    finally:
        conn.close()
    address = value.decode() if isinstance(value, bytes) else str(value)
    return address.split("unix:path=", 1)[1].split(",", 1)[0]


def test_a_sessions_code_reaches_no_accessibility_bus_of_its_own_or_anothers(
    serve: Callable[..., LocalServer],
) -> None:
    server = serve(env="desktop")
    url = server.base_url.replace("http://", "ws://") + "/ws"
    with connect(url, max_size=None) as mine, connect(url, max_size=None) as theirs:
        displays = [
            ask(ws, {"type": "reset", "data": {"elements": True, "size": [320, 240]}})["data"][
                "observation"
            ]["metadata"]["display"]
            for ws in (mine, theirs)
        ]
        sockets = [bus_socket(display) for display in displays]
        for path in sockets:  # the server's user reaches them: the paths are right
            with socket.socket(socket.AF_UNIX) as probe:
                probe.connect(path)
        code = (
            "import socket\n"
            f"for path in {sockets!r}:\n"
            "    try:\n"
            "        socket.socket(socket.AF_UNIX).connect(path)\n"
            "        print('reached')\n"
            "    except OSError as exc:\n"
            "        print(type(exc).__name__)\n"
        )
        ran = call(mine, "run_code", code=code)
        assert ran["error"] is None, ran
        outcomes = ran["result"]["structuredContent"]["stdout"].split()
        assert len(outcomes) == 2 and "reached" not in outcomes, outcomes
