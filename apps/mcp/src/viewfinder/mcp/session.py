"""One MCP session's resources: its desktop, its sandbox and the context its tools run in.

A session's desktop (a display with the apps of ``--app``) starts on its first tool
call; its sandbox (the code env's isolated worker on that display) on the first call
that runs code; both, and whatever the tools kept (a computer tool, a recording, a
browser), are closed with the session, when the client disconnects or the server stops.

Every call of a session runs on one thread of its own, which lives as long as the
session: the tools are called one at a time, as an agent calls them, and the programs
they start (apps, the worker) are tied to that thread by their parent-death signal
(see :mod:`viewfinder.core.lifetime`), which a pooled thread would fire when it idles.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from viewfinder.core import (
    Screenshot,
    Tool,
    ToolContext,
    ToolError,
    ToolInputError,
    ToolResult,
    ViewfinderError,
)
from viewfinder.core.result_budget import budget_for, fit_result
from viewfinder.desktop.tools import CANCEL_VALUE, ELEMENTS_VALUE
from viewfinder.mcp.full_size import FullSizeImages
from viewfinder.mcp.options import DesktopOptions
from viewfinder.mcp.sandbox import SessionSandbox, sandbox_environment

if TYPE_CHECKING:
    from viewfinder.desktop import Desktop

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: ``ToolContext.values`` keys: the scaling target the ``computer`` tool reads, and the
#: session's Desktop (the code env's ``DISPLAY_VALUE`` holds its Display). The session's
#: cancel event is under the desktop tools' ``CANCEL_VALUE``: set when the client cancels
#: the call in progress, cleared as each call begins.
TARGET_VALUE = "target"
DESKTOP_VALUE = "desktop"
#: Parameters by which a tool lets its caller choose the size of the image it returns;
#: a call that sets none of them gets the server's ``--max-size``.
SIZE_PARAMETERS = ("max_width", "max_height")
SIZE_CHOICES = ("max_width", "max_height", "scale")
#: The folder (in the session's) of the full-size images results link.
FULL_SIZE_FOLDER = ".viewfinder-full-size"


class SessionClosedError(ToolError):
    """A call came after its session was closed (the client disconnected)."""


class McpSession:
    """The desktop, sandbox and tool context of one MCP session.

    :meth:`call` and :meth:`screen` are coroutines for the server's event loop; the work
    runs on the session's thread. :meth:`close` may be called from any thread, also
    while a call runs (the code it runs is cancelled), and leaves nothing running.
    """

    def __init__(
        self, options: DesktopOptions, key: str = "stdio", workdir: Path | None = None
    ) -> None:
        self.options = options
        self.key = key
        #: The folder this session's files stay inside (``--workdir``, or a folder of its
        #: own there: see :class:`~viewfinder.mcp.sessions.SessionRegistry`).
        self.workdir = workdir if workdir is not None else options.workdir
        #: The limits every result of this session is fitted to (``--client``).
        self.budget = budget_for(options.client)
        #: Full-size images the budget shrank, for ``resources/read``.
        self.full_size = FullSizeImages(self.workdir / FULL_SIZE_FOLDER)
        self._cancelled = threading.Event()
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=f"viewfinder-mcp-{key[:12]}")
        self._lock = threading.Lock()
        self._desktop: Desktop | None = None
        self._sandbox: SessionSandbox | None = None
        self._context: ToolContext | None = None
        self._closed = False
        self._calls = 0
        self.created = time.monotonic()

    # -- for the server ------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def desktop(self) -> Desktop | None:
        """The session's desktop, once a call started it."""
        return self._desktop

    async def call(
        self,
        tool: Tool,
        arguments: Mapping[str, Any] | None,
        encode: Callable[[ToolResult], _T],
    ) -> _T:
        """Call ``tool`` in this session (every failure is an error result) and hand back
        ``encode(result)``, what the transport sends: that runs on the session's thread
        too, so the base64 of a large frame is not made on the server's event loop."""

        def call_and_encode() -> _T:
            return encode(self.fit(self._call(tool, arguments)))

        try:
            return await self._run(call_and_encode)
        except asyncio.CancelledError:
            self.cancel()  # the client gave up on the call: stop the code it runs
            raise

    def fit(self, result: ToolResult) -> ToolResult:
        """``result`` within the session's client's limits, the one place every tool's
        result passes: images shrunk or re-encoded (the full-size ones kept and linked),
        text cut to its head and tail, structured content without the text again."""
        return fit_result(result, self.budget, keep=self.full_size)

    async def screen(self) -> Screenshot:
        """The session's screen now, at full size (its desktop starts if it has not)."""
        desktop = self._desktop
        if desktop is None or not desktop.started:
            context = await self._run(self._ensure_context)
            desktop = context.values[DESKTOP_VALUE]
        # not on the session's thread: a long call there does not hold up the picture
        return await asyncio.to_thread(desktop.screenshot)

    def recording_manifest(self) -> Path | None:
        """The manifest of the recording in progress in this session, if any."""
        context = self._context
        if context is None:
            return None
        try:
            from viewfinder.recorder.agent_tools import RECORDER_RESOURCE
        except ImportError:  # the recorder is not installed: nothing records
            return None
        recording = context.get_resource(RECORDER_RESOURCE)
        recorder = getattr(recording, "recorder", None)
        if recorder is None or not getattr(recorder, "running", False):
            return None
        return Path(recorder.session_dir) / "manifest.jsonl"

    def cancel(self) -> bool:
        """Stop the call in progress now: the code it runs in the sandbox, a pause of a
        tool (the computer tool's ``wait``, ``hold_key``); True when there was a call."""
        if not self._calls:
            return False
        self._cancelled.set()
        sandbox = self._sandbox
        if sandbox is None:
            return True
        try:
            return sandbox.cancel()
        except Exception:
            log.exception("session %s: cancelling its sandbox's run failed", self.key)
            return False

    def close(self) -> None:
        """Stop everything the session started: its tools' resources, its sandbox (the
        code running there first), its apps and its display. Idempotent; errors are
        logged, and each step runs whatever the one before did."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.cancel()
        self._teardown()
        self._thread.shutdown(wait=False, cancel_futures=True)
        try:
            self.full_size.clear()
        except OSError:
            log.exception("session %s: removing its full-size images failed", self.key)

    async def aclose(self) -> None:
        """:meth:`close` off the event loop."""
        await asyncio.to_thread(self.close)

    # -- on the session's thread -----------------------------------------------------------

    async def _run(self, function: Callable[..., _T], *args: Any) -> _T:
        try:
            future: Future[_T] = self._thread.submit(function, *args)
        except RuntimeError:  # shut down: the session was closed meanwhile
            raise SessionClosedError("this MCP session was closed; connect again") from None
        return await asyncio.wrap_future(future)

    def _call(self, tool: Tool, arguments: Mapping[str, Any] | None) -> ToolResult:
        try:
            # bad arguments are reported before any desktop starts for them
            tool.parse(arguments)
            context = self._ensure_context()
        except ViewfinderError as exc:
            return ToolResult.error(
                str(exc), kind="input" if isinstance(exc, ToolInputError) else "execution"
            )
        except Exception as exc:
            log.exception("session %s: starting its desktop failed", self.key)
            return ToolResult.error(
                f"{tool.name}: the session's desktop could not start: {type(exc).__name__}: {exc}"
            )
        self._cancelled.clear()
        log.debug("session %s: calling %s", self.key, tool.name)
        self._calls += 1
        try:
            return tool.call(self.with_size_defaults(tool, arguments), context)
        finally:
            self._calls -= 1

    def with_size_defaults(
        self, tool: Tool, arguments: Mapping[str, Any] | None
    ) -> Mapping[str, Any] | None:
        """``arguments`` with the server's ``--max-size`` for a tool that lets the caller
        choose its image's size (``max_width``, ``max_height``) when the call chose none."""
        if self.options.max_size is None:
            return arguments
        fields = tool.parameters.model_fields
        if not all(name in fields for name in SIZE_PARAMETERS):
            return arguments
        given = dict(arguments or {})
        if any(given.get(name) is not None for name in SIZE_CHOICES):
            return arguments
        width, height = self.options.max_size
        return {**given, "max_width": width, "max_height": height}

    def _ensure_context(self) -> ToolContext:
        with self._lock:
            if self._closed:
                raise SessionClosedError("this MCP session was closed; connect again")
            context, desktop = self._context, self._desktop
        if context is not None and desktop is not None and _alive(desktop):
            return context
        if desktop is not None:  # its display died: start afresh
            log.warning("session %s: the desktop's display is gone; starting a new one", self.key)
            self._teardown()
        return self._start()

    def _start(self) -> ToolContext:
        from viewfinder.codeenv import CodeEnvSandbox
        from viewfinder.codeenv.tools import DISPLAY_VALUE, TOOL_SANDBOX_CONFIG
        from viewfinder.desktop import Desktop
        from viewfinder.desktop.scaling import Scaling
        from viewfinder.mcp.options import TOKEN_ENV

        options = self.options
        desktop = Desktop(
            options.display,
            size=None if options.display is not None else options.size,
            apps=[list(app) for app in options.apps],
            env={TOKEN_ENV: ""},  # the token is the server's alone
            # a display given by name has the buses its owner started, or none
            accessibility=options.elements and options.display is None,
        )
        self._adopt("_desktop", desktop)
        try:
            desktop.start()
        except ViewfinderError as exc:
            self._teardown()
            raise ToolError(self._start_failure(exc)) from None
        width, height = desktop.size
        config = TOOL_SANDBOX_CONFIG.with_changes(
            width=width,
            height=height,
            # the sandbox has only its own loopback, unless its browser is elsewhere
            session_network="host" if options.browser_url is not None else "none",
        )
        sandbox = SessionSandbox(
            CodeEnvSandbox(desktop.display, config=config),
            sandbox_environment(options.browser_url),
        )
        self._adopt("_sandbox", sandbox)
        target = None
        if options.max_size is not None:
            max_width, max_height = options.max_size
            scaling = Scaling.choose(width, height, max_width=max_width, max_height=max_height)
            if scaling.model_size != (width, height):
                target = scaling.model_size
        context = ToolContext(
            display=desktop.display_name,
            sandbox=sandbox,
            require_sandbox=True,
            workdir=self.workdir,
            values={
                TARGET_VALUE: target,
                DISPLAY_VALUE: desktop.display,
                DESKTOP_VALUE: desktop,
                # the browser the browser toolset's tools drive (viewfinder.browser's
                # CDP_URL_VALUE); without one they start none outside the sandbox
                "browser.cdp_url": options.browser_url,
                CANCEL_VALUE: self._cancelled,
                ELEMENTS_VALUE: options.elements,
            },
        )
        self._adopt("_context", context)
        log.info("session %s: desktop %r ready", self.key, desktop)
        return context

    def _adopt(self, name: str, thing: Any) -> None:
        """Keep ``thing`` for :meth:`close`, unless the session closed meanwhile."""
        with self._lock:
            if not self._closed:
                setattr(self, name, thing)
                return
        _close_quietly(thing, name.strip("_"), self.key)
        raise SessionClosedError("this MCP session was closed; connect again")

    def _start_failure(self, exc: ViewfinderError) -> str:
        from viewfinder.core.errors import DisplayGoneError
        from viewfinder.desktop import DesktopError

        options = self.options
        if options.display is not None:
            where = f"on display {options.display} (--display)"
        else:
            where = f"on a {options.size[0]}x{options.size[1]} display"
        hint = ""
        if isinstance(exc, DisplayGoneError) and options.display is not None:
            hint = (
                f"; is an X server running on {options.display}? Start one (viewfinder "
                "desktop start), or start this server without --display to give each "
                "session a display of its own"
            )
        elif isinstance(exc, DesktopError) and options.apps:
            hint = "; check the apps this server was started with (--app)"
        return f"this session's desktop {where} did not start: {exc}{hint}"

    def _teardown(self) -> None:
        with self._lock:
            context, self._context = self._context, None
            sandbox, self._sandbox = self._sandbox, None
            desktop, self._desktop = self._desktop, None
        # the tools' resources first (they use the sandbox and the display), then the
        # sandbox (its windows are on the display), then the apps and the display
        _close_quietly(context, "tool resources", self.key)
        _close_quietly(sandbox, "sandbox", self.key)
        _close_quietly(desktop, "desktop", self.key)


def _alive(desktop: Desktop) -> bool:
    display = desktop.display
    return desktop.started and (display is None or display.is_alive())


def _close_quietly(thing: Any, what: str, key: str) -> None:
    # each step goes on past a failure of the one before: nothing may be left running
    closer = getattr(thing, "close", None)
    if closer is None:
        return
    try:
        closer()
    except Exception:
        log.exception("session %s: closing its %s failed", key, what)
