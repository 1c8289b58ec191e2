"""Fixtures for the server tests: real servers on loopback, real workers and displays."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from viewfinder.codeenv import CodeEnvConfig
from viewfinder.codeenv.font_cache import shared_font_cache
from viewfinder.core.testing import child_processes
from viewfinder.server import LocalServer, ServerSettings


@pytest.fixture(scope="session", autouse=True)
def no_process_left() -> Iterator[None]:
    """After all tests, no Xvfb or worker started by them may still run."""
    before = child_processes("Xvfb") | child_processes("python")
    yield
    shared_font_cache().wait()
    left = (child_processes("Xvfb") | child_processes("python")) - before
    assert not left, f"the tests left processes running: {sorted(left)}"


def small_settings(**changes: Any) -> ServerSettings:
    """One warm 640x480 display, 20 s steps: light enough for a loaded two-core machine."""
    codeenv = changes.pop("codeenv", CodeEnvConfig(timeout_s=20, width=640, height=480))
    base = dict(pool_size=1, display_width=640, display_height=480, max_sessions=4)
    return ServerSettings(**{**base, **changes, "codeenv": codeenv})


@pytest.fixture
def serve() -> Iterator[Callable[..., LocalServer]]:
    """``serve(**settings)`` starts a real server on loopback; it is stopped afterwards,
    and then no worker or display of it may be left."""
    started: list[LocalServer] = []

    def start(**changes: Any) -> LocalServer:
        server = LocalServer(small_settings(**changes)).start()
        started.append(server)
        return server

    before = child_processes("Xvfb") | child_processes("python")
    yield start
    for server in started:
        server.stop()
    shared_font_cache().wait()  # its one-off build is a subprocess of ours
    left = (child_processes("Xvfb") | child_processes("python")) - before
    assert not left, f"a server left processes running: {sorted(left)}"


@pytest.fixture
def server(serve: Callable[..., LocalServer]) -> LocalServer:
    """A server with the small settings."""
    return serve()
