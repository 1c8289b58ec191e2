"""The code env as an agent's tool: ``run_code``, and the sandbox other tools run code in.

:class:`CodeEnvSandbox` is the :class:`viewfinder.core.CodeSandbox` of a session: a
:class:`~viewfinder.codeenv.CodeEnvironment` whose isolated worker runs on the
session's display, started on first use and kept across runs (globals persist, as in
the code env). ``run_code`` always runs in such a worker, never in the calling process;
``browser_execute`` behind a server runs its snippet there too.
"""

from __future__ import annotations

import base64
import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.codeenv.config import CodeEnvConfig
from viewfinder.core import SandboxRun, Screenshot, Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from viewfinder.codeenv.environment import CodeEnvironment
    from viewfinder.xvfb import Display

#: ``ToolContext.values`` key of the session's :class:`viewfinder.xvfb.Display` object,
#: set by hosts that own the display (a Desktop, the server); the code then runs on it.
DISPLAY_VALUE = "xvfb.display"
#: ``ToolContext`` resource key of the session's :class:`CodeEnvSandbox`.
SANDBOX_RESOURCE = "codeenv.sandbox"

#: The code env's limits, with room for the threads of a browser (Chromium starts some
#: 60 threads, past the code env's default of 64 processes and threads per session).
TOOL_SANDBOX_CONFIG = CodeEnvConfig(max_processes=512)

RUN_CODE_DESCRIPTION = (
    "Run Python code in this session's sandbox, on its screen, and get back what it "
    "printed (stdout, stderr), its exit code and every screenshot it took. Inside, "
    "`capture_screenshot()` captures the screen while the code's windows are alive (call "
    "it after drawing a tkinter, matplotlib or pygame window) and `attach_image(png)` "
    "hands back any other image. Variables persist between calls. The sandbox has no "
    "network besides its own loopback. Files: the code writes in its home folder (its "
    "working directory) and a private /tmp; it can read what every user of this machine "
    "may read (system files, world-readable files), but not other sessions' files nor "
    "those only the server's user may read (where the server runs as root, the code runs "
    "as a user of its own; otherwise it runs as the server's user and reads what that "
    "user can)."
)


class _LentDisplay:
    """A display source that lends one display it does not own (released: kept running)."""

    def __init__(self, display: Display) -> None:
        self.display = display

    def acquire(self, timeout: float | None = None) -> Display:
        return self.display

    def release(self, display: Display) -> None:
        display.admit(None)  # the worker's user no longer connects; the display stays


class CodeEnvSandbox:
    """Runs code in an isolated code env worker (a :class:`viewfinder.core.CodeSandbox`).

    ``display`` is the :class:`viewfinder.xvfb.Display` the code runs on (its windows
    appear there); None gives the sandbox a fresh display of its own. The environment
    starts on the first :meth:`run` and lives until :meth:`close`; thread-safe.
    ``config`` defaults to :data:`TOOL_SANDBOX_CONFIG`.
    """

    def __init__(self, display: Display | None = None, config: CodeEnvConfig | None = None) -> None:
        self._display = display
        self._config = config or TOOL_SANDBOX_CONFIG
        self._env: CodeEnvironment | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _environment(self) -> CodeEnvironment:
        from viewfinder.codeenv.environment import CodeEnvironment

        if self._env is None:
            lent = _LentDisplay(self._display) if self._display is not None else None
            env = CodeEnvironment(self._config, displays=lent)
            env.reset()
            self._env = env
        return self._env

    @property
    def environment(self) -> CodeEnvironment | None:
        """The code environment, once the first run started it."""
        return self._env

    def run(self, code: str, timeout: float | None = None) -> SandboxRun:
        """Run ``code``; ``timeout`` seconds (None: the config's step timeout)."""
        from viewfinder.codeenv.config import EXIT_TIMEOUT
        from viewfinder.codeenv.models import CodeAction

        with self._lock:
            if self._closed:
                raise RuntimeError("this sandbox was closed")
            env = self._environment()
        observation = env.step(CodeAction(code=code, timeout_s=timeout))
        return SandboxRun(
            stdout=observation.stdout,
            stderr=observation.stderr,
            exit_code=observation.exit_code,
            timed_out=observation.exit_code == EXIT_TIMEOUT,
            screenshots=[
                Screenshot.from_bytes(base64.b64decode(data), source="codeenv")
                for data in observation.screenshots
            ],
        )

    def cancel(self) -> bool:
        """Stop a run in progress (it returns with the cancelled exit code)."""
        env = self._env
        return env.cancel() if env is not None else False

    def close(self) -> None:
        """Stop the worker; a lent display keeps running."""
        with self._lock:
            self._closed = True
            env, self._env = self._env, None
        if env is not None:
            env.close()


def sandbox_for(context: ToolContext) -> Any:
    """The session's sandbox: the host's, else a code env worker kept in the context."""
    if context.sandbox is not None:
        return context.sandbox
    return context.resource(
        SANDBOX_RESOURCE, lambda: CodeEnvSandbox(context.values.get(DISPLAY_VALUE))
    )


class RunCodeInput(BaseModel):
    """The arguments of ``run_code``."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(min_length=1, description="Python source to run, as a script.")
    timeout: float = Field(
        default=30.0,
        gt=0,
        le=300,
        description="Seconds the code may run (up to 300); it is stopped after that.",
    )


def run_code(arguments: RunCodeInput, context: ToolContext) -> ToolResult:
    """The ``run_code`` tool: run in the session's sandbox, report output and captures."""
    run = sandbox_for(context).run(arguments.code, arguments.timeout)
    lines = [f"exit code {run.exit_code}" + (" (timed out)" if run.timed_out else "")]
    if run.stdout:
        lines.append(f"stdout:\n{run.stdout}")
    if run.stderr:
        lines.append(f"stderr:\n{run.stderr}")
    count = len(run.screenshots)
    lines.append(f"{count} screenshot{'s' if count != 1 else ''} attached")
    return ToolResult.of(
        "\n".join(lines),
        *run.screenshots,
        structured={
            "stdout": run.stdout,
            "stderr": run.stderr,
            "exit_code": run.exit_code,
            "timed_out": run.timed_out,
            "screenshots": count,
        },
        is_error=run.exit_code != 0,
    )


RUN_CODE = Tool(
    "run_code",
    RUN_CODE_DESCRIPTION,
    RunCodeInput,
    run_code,
    title="Run Python code",
    annotations={"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    runs_code=True,
)
