"""The hooks viewfinder plugins implement.

Every hook is documented with an example in docs/hooks.md. Implement one with::

    from viewfinder.core import hookimpl

    @hookimpl
    def viewfinder_register_capture_backends(register):
        register("mybackend", MyBackend)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from viewfinder.core.backend import CaptureBackend
    from viewfinder.core.screenshot import Screenshot

PROJECT = "viewfinder"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

#: ``register(name, factory)``: the callback handed to
#: :func:`viewfinder_register_capture_backends`.
RegisterBackend = Callable[[str, Callable[..., "CaptureBackend"]], None]


@hookspec
def viewfinder_register_capture_backends(register: RegisterBackend) -> None:
    """Register capture backends by calling ``register(name, factory)`` once per backend.

    ``factory(**options)`` returns a :class:`~viewfinder.core.CaptureBackend`. When the
    factory has an ``availability(**options)`` callable (a backend class has), ``viewfinder
    backends`` and backend selection use it; an integer ``priority`` attribute orders the
    choice of "best available" backend (higher first; below zero: never picked unless
    named). Every implementation is called; results are ignored. Called again whenever the
    backend table is needed, so plugins registered later are seen.
    """


@hookspec
def viewfinder_register_commands(app: Any) -> None:
    """Add sub-commands to the ``viewfinder`` command.

    ``app`` is the root ``typer.Typer``; call ``app.add_typer(sub_app, name=...)`` or
    ``app.command()(fn)``. Import typer inside the implementation, not at module level,
    so the plugin stays importable without the CLI. Every implementation is called.
    """


@hookspec
def viewfinder_screenshot_captured(screenshot: Screenshot, context: Mapping[str, Any]) -> None:
    """Observe every screenshot any backend captured, once per capture.

    ``context`` always has ``backend`` (the backend's name) and whatever the caller
    added (a code env adds ``session_id`` and ``step``, the browser tool ``call_id``).
    Every implementation is called, each on its own: one that raises is logged and
    neither the capture nor the other observers are affected. Keep it quick; it runs in
    the capturing thread.
    """
