"""Desktop sessions behind OpenEnv's tool calls (``viewfinder serve --env desktop``).

Each session is a :class:`DesktopEnvironment`: at each reset, a
:class:`viewfinder.desktop.Desktop` (a display from the server's pool, or one of its
own for another screen size, with the task's apps on it) and the
:class:`~viewfinder.core.ToolContext` its tool calls run in. The tools are the
registry's (:func:`viewfinder.core.tool_registry`), whatever the installed packages
register; a tool that runs model-written code (``run_code``, ``browser_execute``) runs
it in the session's sandbox, a code env worker on the session's display with the code
env's isolation (``require_sandbox``), never in the server.

The apps themselves are started by the server, as its user: so a reset may start only
the apps the operator gave (``--app``), unless the operator allows any
(``--allow-any-app``).
"""

from __future__ import annotations

import logging
import threading
import uuid
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from viewfinder.codeenv.tools import DISPLAY_VALUE, TOOL_SANDBOX_CONFIG
from viewfinder.core import (
    Tool,
    ToolContext,
    ToolInputError,
    ToolResult,
    UnknownToolError,
    fit_result,
    tool_registry,
)
from viewfinder.server.desktop_task import DesktopTask, check_apps
from viewfinder.server.errors import ServerError, TaskRejectedError
from viewfinder.server.mcp_wire import (
    RESERVED_TOOL_NAMES,
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    ToolCallError,
    ToolErrorType,
    ToolSpec,
    mcp_result,
)
from viewfinder.server.settings import TOKEN_ENV
from viewfinder.server.tasks.episode import TaskEpisode
from viewfinder.server.tasks.recording import EpisodeRecording

if TYPE_CHECKING:
    from collections.abc import Callable

    from viewfinder.codeenv.displays import DisplaySource
    from viewfinder.desktop.desktop import Desktop
    from viewfinder.server.settings import ServerSettings

log = logging.getLogger(__name__)

#: The ``ToolContext.values`` key of the scaling target the desktop's ``computer`` tool
#: reads (``DISPLAY_VALUE``, the code env's, holds the session's Display).
TARGET_VALUE = "target"
#: ... and of whether its results carry the elements on the screen (a task's ``elements``).
ELEMENTS_VALUE = "elements"


class DesktopState(BaseModel):
    """A desktop session's state (OpenEnv's ``State``)."""

    episode_id: str | None = None
    step_count: int = 0


def served_tools(tools: dict[str, Tool] | None = None) -> dict[str, Tool]:
    """The registry's tools a session may call: all but OpenEnv's reserved names."""
    table = tool_registry() if tools is None else tools
    reserved = sorted(RESERVED_TOOL_NAMES & set(table))
    if reserved:
        log.warning("tools named %s are not served: OpenEnv reserves those names", reserved)
    return {name: tool for name, tool in table.items() if name not in RESERVED_TOOL_NAMES}


def tool_specs(tools: dict[str, Tool]) -> list[ToolSpec]:
    """The tools as a ``list_tools`` step lists them."""
    return [
        ToolSpec(name=tool.name, description=tool.description, input_schema=tool.input_schema())
        for tool in tools.values()
    ]


class DesktopEnvironment:
    """One session's desktop: reset starts a task's desktop, steps list and call tools.

    Methods may be called from any thread, one at a time (a lock keeps them so);
    :meth:`cancel` and :meth:`close` may come while a call runs.
    """

    def __init__(
        self,
        settings: ServerSettings,
        pool: DisplaySource,
        session_id: str,
        tools: Callable[[], dict[str, Tool]] = served_tools,
    ) -> None:
        self.settings = settings
        self.pool = pool
        self.session_id = session_id
        self._tools = tools
        self._lock = threading.RLock()
        self._desktop: Desktop | None = None
        self._sandbox: Any = None
        self._context: ToolContext | None = None
        self._state = DesktopState()
        self._closed = False
        self._calling = False
        self._episode: TaskEpisode | None = None
        self._recording: EpisodeRecording | None = None
        self._scaling: Any = None

    @property
    def state(self) -> DesktopState:
        return self._state.model_copy()

    @property
    def desktop(self) -> Desktop | None:
        """The current episode's desktop (None before the first reset)."""
        return self._desktop

    # -- OpenEnv's Environment interface ------------------------------------------------

    def reset(self, task: DesktopTask | None = None) -> dict[str, Any]:
        """End the episode (its apps, its display) and start ``task``'s; OpenEnv's reset
        payload, with where and how big the screen is in ``observation.metadata``."""
        from viewfinder.desktop.desktop import Desktop
        from viewfinder.desktop.scaling import Scaling

        task = (task or DesktopTask()).over(self.settings.desktop)
        scored = task.task
        apps = scored.apps if scored is not None else task.apps or []
        check_apps(apps, self.settings.desktop.apps or [], self.settings.allow_any_app)
        if task.record_to is not None and not self.settings.allow_any_app:
            raise TaskRejectedError(
                "record_to: a recording is written as the server's user; its operator can "
                "allow it with --allow-any-app"
            )
        size = (scored.size if scored is not None else None) or task.size
        size = size or (self.settings.display_width, self.settings.display_height)
        with self._lock:
            self._check_open()
            self._end_episode()
            episode = None
            if scored is not None:
                episode = TaskEpisode(scored, trusted=self.settings.allow_any_app)
                self._episode, apps = episode, episode.apps()
            # the token is the server's alone: apps do not inherit it
            elements = episode.elements() if episode is not None else bool(task.elements)
            options: dict[str, Any] = {
                "apps": apps,
                "env": {TOKEN_ENV: ""},
                "accessibility": elements,
            }
            if size == (self.settings.display_width, self.settings.display_height):
                desktop = Desktop(pool=self.pool, **options)
            else:
                desktop = Desktop(size=size, **options)
            desktop.start()  # on failure it stopped what it started
            self._desktop = desktop
            self._sandbox = self._new_sandbox(desktop)
            self._context = ToolContext(
                display=desktop.display_name,
                sandbox=self._sandbox,
                require_sandbox=True,
                values={
                    TARGET_VALUE: task.target,
                    DISPLAY_VALUE: desktop.display,
                    ELEMENTS_VALUE: elements,
                },
            )
            self._state = DesktopState(episode_id=task.episode_id or uuid.uuid4().hex)
            width, height = desktop.size
            scaling = Scaling.choose(width, height, task.target)
            self._scaling = scaling if task.target is not None else None
            if task.record_to is not None:
                self._recording = EpisodeRecording(task.record_to, desktop, scored)
            metadata = {
                "episode_id": self._state.episode_id,
                "display": desktop.display_name,
                "screen_size": list(desktop.size),
                "model_size": list(scaling.model_size),
                "target": task.target,
                "apps": apps,
                "elements": elements,
                "session": task.record_to,
            }
            if episode is None:
                return {"observation": {"metadata": metadata}, "reward": None, "done": False}
            reward, about = episode.started(desktop.display_name, desktop)
        return {"observation": {"metadata": {**metadata, **about}}, "reward": reward, "done": False}

    def step(self, action: ListToolsAction | CallToolAction) -> BaseModel:
        """List the tools, or call one (OpenEnv's MCP actions)."""
        if isinstance(action, ListToolsAction):
            return ListToolsObservation(tools=tool_specs(self._tools()))
        return self.call_tool(action.tool_name, action.arguments)

    def call_tool(self, name: str, arguments: Any) -> CallToolObservation:
        """Call tool ``name`` in this session; a failure is OpenEnv's tool error (the
        next call works). Starts the server's task first when no reset came yet."""
        tools = self._tools()
        tool = tools.get(name)
        if tool is None:
            message = str(UnknownToolError(name, tools))
            return CallToolObservation(
                tool_name=name,
                error=ToolCallError(error_type=ToolErrorType.TOOL_NOT_FOUND, message=message),
            )
        with self._lock:
            self._check_open()
            if self._context is None:
                self.reset()
            assert self._context is not None
            try:
                tool.parse(arguments)
            except ToolInputError as exc:
                result, kind = ToolResult.error(str(exc)), ToolErrorType.INVALID_ARGS
            else:
                if self._recording is not None:
                    self._recording.before(name, arguments, self._scaling)
                self._calling = True
                try:
                    result = tool.call(arguments, self._context)
                finally:
                    self._calling = False
                wrong_input = result.error_kind == "input"  # found by the tool itself
                kind = ToolErrorType.INVALID_ARGS if wrong_input else ToolErrorType.EXECUTION_ERROR
            self._state.step_count += 1
            # the checker runs here, in the server (or the session's actor), not in the sandbox
            scored = self._episode.score() if self._episode is not None else {}
            if self._recording is not None and scored:
                self._recording.scored(name, scored)
        error = ToolCallError(error_type=kind, message=result.text) if result.is_error else None
        # within the default client's limits, as every result handed to a model is
        fitted = fit_result(result)
        return CallToolObservation(tool_name=name, result=mcp_result(fitted), error=error, **scored)

    def cancel(self, reason: str = "cancelled by the client") -> bool:
        """Stop the code a tool is running in the sandbox; True when a call was running."""
        if not self._calling:
            return False
        sandbox = self._sandbox
        if sandbox is not None:
            sandbox.cancel()
        return True

    def close(self) -> None:
        """End the episode: its apps stopped, its display given back or stopped."""
        self._closed = True
        self.cancel("the session closed")
        with self._lock:
            self._end_episode()

    def __enter__(self) -> DesktopEnvironment:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ServerError(f"desktop session {self.session_id} is closed")

    def _new_sandbox(self, desktop: Desktop) -> Any:
        """The sandbox the session's code-running tools use: a code env worker on the
        desktop's display, with the server's code env settings (isolation, network,
        limits), started on first use."""
        from viewfinder.codeenv import CodeEnvSandbox

        config = self.settings.codeenv
        width, height = desktop.size
        # room for a browser's threads, as every tool sandbox has
        processes = max(config.max_processes, TOOL_SANDBOX_CONFIG.max_processes)
        config = config.with_changes(width=width, height=height, max_processes=processes)
        return CodeEnvSandbox(desktop.display, config=config)

    def _end_episode(self) -> None:
        context, self._context = self._context, None
        sandbox, self._sandbox = self._sandbox, None
        desktop, self._desktop = self._desktop, None
        episode, self._episode = self._episode, None
        recording, self._recording = self._recording, None
        # each step goes on past a failure of the one before: nothing may be left running
        for what, close in (
            ("recording", getattr(recording, "close", None)),
            ("tool resources", getattr(context, "close", None)),
            ("sandbox", getattr(sandbox, "close", None)),
            ("desktop", getattr(desktop, "close", None)),
            ("task's folder", getattr(episode, "close", None)),
        ):
            if close is None:
                continue
            try:
                close()
            except Exception:
                log.exception("session %s: closing its %s failed", self.session_id, what)
