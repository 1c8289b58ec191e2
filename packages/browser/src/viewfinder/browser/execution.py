"""One ``browser_execute`` call: compile, run on the page with a deadline, report.

The call runs on its session's tab loop. It gets its own :class:`SnippetSession`
view; the screenshot collector and the disk dump listen to that view's own call
results, so a screenshot belongs to the call whose view sent the capture, whatever
else runs at the same time. At the end the view is closed, whether the snippet
returned, raised or ran out of time.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from viewfinder.browser.collector import SOURCE, ScreenshotCollector
from viewfinder.browser.dump import ScreenshotDump, dump_directory
from viewfinder.browser.page import Page
from viewfinder.browser.result import ExecuteError, ExecuteResult, count_line
from viewfinder.browser.return_value import bounded, render, to_json
from viewfinder.browser.snippet import (
    CompiledSnippet,
    OutputBuffer,
    compile_snippet,
    describe_syntax_error,
    exception_line,
    snippet_traceback,
    suspended_traceback,
)
from viewfinder.browser.tab import DialogChoice, Tab, TabAbandonedError
from viewfinder.browser.view import SnippetSession
from viewfinder.cdp import CDPConnectionClosedError, CDPSession, CDPTimeoutError
from viewfinder.core import Screenshot

log = logging.getLogger(__name__)

#: How long a cancelled snippet has to unwind before it is left behind (its view is
#: closed either way, so it can send nothing more); a snippet that does not swallow
#: the cancellation unwinds at once.
CANCEL_GRACE = 0.1


class SnippetExitError(RuntimeError):
    """The snippet called ``exit()`` or raised ``KeyboardInterrupt``; that would stop the
    event loop itself, so it is reported as an ordinary exception."""


class Execution:
    """The state of one call, readable from the thread that waits for it."""

    def __init__(
        self,
        *,
        session_id: str,
        code: str,
        timeout: float,
        description: str | None,
        screenshot_dir: str | Path | None,
        state: dict[str, Any],
    ) -> None:
        self.call_id = uuid.uuid4().hex[:12]
        self.session_id = session_id
        self.code = code
        self.timeout = timeout
        self.description = description
        self.screenshot_dir = screenshot_dir
        self.state = state
        self.started_at = datetime.now(UTC)
        self.output = OutputBuffer()
        self.collector = ScreenshotCollector(
            {"backend": SOURCE, "session_id": session_id, "call_id": self.call_id}
        )
        self.dump: ScreenshotDump | None = None
        #: The call's views: of the page it started on, then of pages it switched to.
        self.views: list[SnippetSession] = []
        #: When the snippet must be done (``time.monotonic``); None until it starts.
        self.deadline: float | None = None
        #: Set on the loop when the deadline passed and the loop handled it.
        self.timeout_handled = False
        self.finished = False
        self._clock = time.monotonic()
        #: Where the snippet waited when its time ran out, for the timeout report.
        self._waiting_at: str | None = None

    def overran(self, grace: float) -> bool:
        """True when the snippet is ``grace`` seconds past its deadline and its loop has
        not handled that: the loop is blocked (watched from another thread)."""
        return (
            self.deadline is not None
            and not self.timeout_handled
            and not self.finished
            and time.monotonic() > self.deadline + grace
        )

    # -- running (on the tab's loop) -----------------------------------------------------

    async def run(self, tab: Tab) -> ExecuteResult:
        """Run the call on ``tab``; errors of the snippet come back in the result.

        Raises what keeps the call from starting: no browser at the CDP URL, Chromium
        missing or failing to launch (and :class:`TabAbandonedError`, internally).
        """
        try:
            compiled = compile_snippet(self.code)
        except SyntaxError as error:
            return self._result(
                ExecuteError(
                    kind="syntax",
                    type="SyntaxError",
                    message=f"{error.msg} (line {error.lineno})",
                    traceback=describe_syntax_error(error),
                )
            )
        async with tab.lock:
            if tab.abandoned:
                raise TabAbandonedError
            if not tab.browser.attached:
                await tab.ensure_connected()  # launching Chromium is not the call's time
            # from here on the call returns within its timeout and the recovery budget
            self.deadline = time.monotonic() + self.timeout
            try:
                page = await tab.ensure_page(max(self.deadline - time.monotonic(), 0.1))
            except (CDPTimeoutError, CDPConnectionClosedError) as error:
                return await self._unopened(tab, error)
            return await self._run_on(tab, page, compiled)

    async def _unopened(self, tab: Tab, error: Exception) -> ExecuteResult:
        recovery = await tab.recover_unopened()
        message = (
            f"no page could be opened within the call's {self.timeout:g}s "
            f"({exception_line(error)}). {recovery}"
        )
        return self._result(
            ExecuteError(kind="browser", type=type(error).__name__, message=message)
        )

    async def _run_on(self, tab: Tab, page: CDPSession, compiled: CompiledSnippet) -> ExecuteResult:
        assert self.deadline is not None
        directory = dump_directory(self.screenshot_dir)
        if directory is not None:
            self.dump = ScreenshotDump(directory, self.session_id, self.started_at)
        view = self._open_view(page)
        task = asyncio.ensure_future(self._guarded(compiled, self._namespace(view, tab)))
        # A snippet left running after its timeout may fail later; that is not news.
        task.add_done_callback(_read_outcome)
        recovery: str | None = None
        try:
            done, _ = await asyncio.wait({task}, timeout=max(self.deadline - time.monotonic(), 0))
            if not done:
                self.timeout_handled = True
                self.close_views(f"its call timed out after {self.timeout:g}s")
                self._waiting_at = suspended_traceback(task.get_coro(), compiled.lines, "")
                task.cancel()
                await asyncio.wait({task}, timeout=CANCEL_GRACE)
                if not task.done():
                    log.warning("call %s: the snippet ignored its cancellation", self.call_id)
                recovery = await tab.recover_after_timeout()
        finally:
            self.close_views("its call has ended")
            for each in self.views:
                each.release()
            tab.dialog_choice = None  # the snippet's choice ends with its call
            if not task.done():
                task.cancel()
        if self.dump is not None:
            await self.dump.flush()
        for line in tab.take_page_lines():
            self.output.write(line + "\n")
        return self._outcome(task, tab, recovery, compiled)

    def _open_view(self, page: CDPSession) -> SnippetSession:
        """A view of ``page`` for this call, its screenshots collected (and dumped)."""
        assert self.deadline is not None
        view = SnippetSession(page, call_id=self.call_id, deadline=self.deadline)
        view.on_own_call_result(self.collector.observe)
        if self.dump is not None:
            view.on_own_call_result(self.dump.observe)
        self.views.append(view)
        return view

    def close_views(self, reason: str) -> None:
        """Close every view of this call (safe from any thread)."""
        for view in self.views:
            view.close_view(reason)

    @property
    def view(self) -> SnippetSession | None:
        """The view of the page the call started on."""
        return self.views[0] if self.views else None

    def _namespace(self, view: SnippetSession, tab: Tab) -> dict[str, Any]:
        def choose_dialogs(choice: DialogChoice) -> None:
            tab.dialog_choice = choice

        async def switch(which: str | None, timeout: float) -> SnippetSession:
            view.check_open("switch pages")
            return self._open_view(await tab.switch_to(which, timeout))

        return {
            "__name__": "__snippet__",
            "__builtins__": builtins,
            "session": view,
            "page": Page(
                view,
                self.collector,
                choose_dialogs=choose_dialogs,
                switch=switch,
                list_pages=tab.page_targets,
            ),
            "state": self.state,
            "print": self.output.print_function(),
            "asyncio": asyncio,
            "json": json,
        }

    async def _guarded(self, compiled: CompiledSnippet, namespace: dict[str, Any]) -> Any:
        try:
            return await compiled.coroutine(namespace)
        except (SystemExit, KeyboardInterrupt) as exc:
            raise SnippetExitError(
                f"the snippet raised {type(exc).__name__}; return a value to end it instead"
            ) from exc

    def _outcome(
        self, task: asyncio.Task[Any], tab: Tab, recovery: str | None, compiled: CompiledSnippet
    ) -> ExecuteResult:
        if recovery is not None:
            message = (
                f"the snippet ran past its {self.timeout:g}s timeout and was cancelled; its "
                f"session accepts no more commands. {recovery}"
            )
            where = (self._waiting_at or "").strip()
            return self._result(
                ExecuteError(
                    kind="timeout",
                    type="TimeoutError",
                    message=message,
                    traceback=f"{where}\nTimeoutError: {message}".strip(),
                )
            )
        if task.cancelled():  # the snippet cancelled itself
            return self._result(
                ExecuteError(kind="exception", type="CancelledError", message="cancelled")
            )
        error = task.exception()
        if error is None:
            value = task.result()
            if compiled.implicit_result and isinstance(value, Screenshot):
                value = None  # a snippet ending in `await page.screenshot()`: attached anyway
            return self._result(None, value)
        if tab.browser_gone or isinstance(error, CDPConnectionClosedError):
            message = (
                f"the browser went away during the call ({exception_line(error)}). The next "
                "call reconnects, and launches a new Chromium if it was ours and exited."
            )
            return self._result(
                ExecuteError(
                    kind="browser",
                    type=type(error).__name__,
                    message=message,
                    traceback=snippet_traceback(error, compiled.lines),
                )
            )
        return self._result(
            ExecuteError(
                kind="exception",
                type=type(error).__name__,
                message=str(error),
                traceback=snippet_traceback(error, compiled.lines),
            )
        )

    # -- results --------------------------------------------------------------------------

    def blocked_result(self) -> ExecuteResult:
        """The result of a call whose snippet blocked its loop past the deadline (built
        on the waiting thread; what was printed and captured until then is kept)."""
        message = (
            f"the snippet blocked its event loop past its {self.timeout:g}s timeout (a "
            "time.sleep() or a long computation?), so it could not be cancelled; its "
            "session accepts no more commands and the next call starts on a new page. "
            "Wait with `await asyncio.sleep(...)` instead."
        )
        return self._result(ExecuteError(kind="timeout", type="TimeoutError", message=message))

    def _result(self, error: ExecuteError | None, value: Any = None) -> ExecuteResult:
        self.finished = True
        screenshots = list(self.collector.screenshots)
        data, note = to_json(value, screenshots)
        data, cut = bounded(data)
        note = " ".join(part for part in (note, cut) if part) or None
        warnings = list(self.dump.warnings) if self.dump is not None else []
        files = list(self.dump.files) if self.dump is not None else []
        parts = [self.output.text().rstrip("\n")]
        if error is not None:
            parts.append(error.traceback or f"{error.type}: {error.message}")
        if note is not None:
            parts.append(f"Note: {note}")
        if data is not None:
            parts.append(f"Returned: {render(data)}")
        parts.extend(f"Warning: {warning}" for warning in warnings)
        parts.append(count_line(len(screenshots)))
        return ExecuteResult(
            call_id=self.call_id,
            session_id=self.session_id,
            description=self.description,
            output="\n".join(part for part in parts if part),
            result=data,
            screenshots=screenshots,
            error=error,
            started_at=self.started_at,
            elapsed_ms=(time.monotonic() - self._clock) * 1000,
            files=files,
            warnings=warnings,
        )


def _read_outcome(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()
