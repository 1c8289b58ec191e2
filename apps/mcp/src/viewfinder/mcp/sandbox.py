"""The sandbox of an MCP session: the code env's isolated worker, told what the server
was told about browsers.

The worker's environment is built from scratch (nothing of the server's reaches the
code), so two settings that code in the sandbox needs are handed to it explicitly: the
DevTools URL of ``--browser ws://...`` (``$VIEWFINDER_CDP_URL``, where the browser
tool's snippets connect instead of starting a Chromium) and ``$VIEWFINDER_CHROMIUM``
when the server was started with one (which Chromium to start). They are set in each
new worker by a short step of their own, before the first code runs in it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from viewfinder.core import SandboxRun, ToolError

if TYPE_CHECKING:
    from viewfinder.codeenv import CodeEnvSandbox

log = logging.getLogger(__name__)

#: Variables of the server's environment that code in the sandbox gets as they are.
FORWARDED = ("VIEWFINDER_CHROMIUM",)
CDP_URL_ENV = "VIEWFINDER_CDP_URL"
#: Seconds the step that sets the variables may take (the worker may be starting).
SETUP_TIMEOUT = 60.0


def sandbox_environment(
    browser_url: str | None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables a session's sandbox gets: the forwarded ones, and the browser's URL."""
    base = os.environ if base is None else base
    values = {name: base[name] for name in FORWARDED if base.get(name)}
    if browser_url is not None:
        values[CDP_URL_ENV] = browser_url
    return values


class SessionSandbox:
    """A :class:`~viewfinder.codeenv.CodeEnvSandbox` whose workers get ``environment``.

    A :class:`viewfinder.core.CodeSandbox` (``run``), plus ``cancel`` and ``close``.
    Thread-safe as the sandbox it wraps: runs are serialised by the session anyway.
    """

    def __init__(self, inner: CodeEnvSandbox, environment: Mapping[str, str]) -> None:
        self.inner = inner
        self.environment = dict(environment)
        self._prepared: Any = None  # the worker the variables were set in

    def run(self, code: str, timeout: float | None = None) -> SandboxRun:
        """Run ``code`` in the worker, setting the variables first in a new worker."""
        note = self._prepare() if self.environment else ""
        run = self.inner.run(code, timeout)
        if note:
            # the setup step took the code env's note that the worker was restarted
            run = run.model_copy(update={"stderr": note + run.stderr})
        return run

    def _prepare(self) -> str:
        worker = self._worker()
        if worker is not None and worker is self._prepared and worker.alive:
            return ""
        setup = (
            "import os as _vf_os\n"
            f"_vf_os.environ.update({json.dumps(self.environment)})\n"
            "del _vf_os\n"
        )
        run = self.inner.run(setup, SETUP_TIMEOUT)
        if run.exit_code != 0:
            raise ToolError(
                "the session's sandbox did not start: "
                + ((run.stderr or run.stdout).strip()[-1000:] or f"exit code {run.exit_code}")
            )
        self._prepared = self._worker()
        return run.stderr

    def _worker(self) -> Any:
        environment = self.inner.environment
        return environment.worker if environment is not None else None

    def cancel(self) -> bool:
        """Stop the code running now (it returns with the cancelled exit code)."""
        return self.inner.cancel()

    def close(self) -> None:
        """Stop the worker and everything it started."""
        self.inner.close()
