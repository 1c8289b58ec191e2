"""One browser session's line to its page: an event loop thread, a connection, a tab.

The CDP client is asyncio and its objects belong to the loop that made them, so each
browser session runs its calls on a private :class:`~viewfinder.cdp.LoopThread`, with
its own websocket and its own tab. Sessions never share a loop: a snippet that blocks
its thread (``time.sleep``, a busy loop) stalls only its own session, and that
session then gives up on the whole :class:`Tab` and starts a new one.

On the loop, an ``asyncio.Lock`` runs the calls of one session one at a time: the page
is one shared thing, and two snippets navigating it at once would trip each other.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from viewfinder.browser.browser import Browser
from viewfinder.browser.errors import PageNotFoundError
from viewfinder.browser.pages import pick_page, remember_page, remembered_page
from viewfinder.cdp import CDPConnection, CDPError, CDPSession, LoopThread, connect

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Seconds to open a connection and a page.
OPEN_TIMEOUT = 30.0
#: Seconds a page (or the browser) has to answer a trivial command after a timed-out
#: snippet: an idle one answers in milliseconds, and the whole recovery must fit in
#: the second a call may take past its timeout.
PROBE_TIMEOUT = 0.4
#: The most a recovery takes, in seconds: page and browser are probed at once, then the
#: page's script is terminated and the page probed again within what is left.
RECOVERY_BUDGET = 0.85
#: Console and page-error lines a call reports at most (the newest), and their length.
MAX_PAGE_LINES = 50
MAX_PAGE_LINE_CHARS = 500
#: Seconds an async ``on_dialog`` handler has before the dialog is answered by default.
DIALOG_CHOICE_TIMEOUT = 5.0


@dataclass(frozen=True)
class Dialog:
    """A JavaScript dialog the page opened: ``type`` is ``alert``, ``confirm``,
    ``prompt`` or ``beforeunload``."""

    type: str
    message: str
    default_prompt: str
    url: str


#: How a snippet answers dialogs: a function of the :class:`Dialog` (sync or async)
#: returning True (accept), False (dismiss), a string (accept, with that as the prompt's
#: answer) or None (the default); or one of those values for every dialog.
DialogChoice = Callable[[Dialog], Any] | bool | str | None


class TabAbandonedError(Exception):
    """Internal: the tab was given up on before this call started; use the new one."""


class Tab:
    """A loop thread with a CDP connection and a page, opened lazily, reopened when the
    browser went away. Everything but :meth:`submit` and :meth:`abandon` runs on the
    tab's own loop."""

    def __init__(
        self,
        browser: Browser,
        *,
        url: str | None,
        width: int,
        height: int,
        name: str,
        stale_targets: list[str] | None = None,
        keep_page: bool = False,
    ) -> None:
        self.browser = browser
        #: Where a new page opens (None: about:blank, and an existing page stays put).
        self.url = url
        #: Work on the page the last call on this browser left (and leave it open)
        #: instead of opening a window of our own: see :mod:`viewfinder.browser.pages`.
        self.keep_page = keep_page
        self.width = width
        self.height = height
        self.loop = LoopThread(name=f"viewfinder-browser-{name}")
        self.connection: CDPConnection | None = None
        #: What :attr:`connection` was opened to.
        self.endpoint: str | None = None
        self.page: CDPSession | None = None
        #: Pages the page opened (popups, new tabs), oldest first, since we connected.
        self.opened: list[str] = []
        #: Pages we opened or switched to and must close on shutdown (not in keep mode).
        self._owned_targets: list[str] = []
        self.abandoned = False
        # Pages of an abandoned predecessor, closed once this tab is connected.
        self._stale_targets = list(stale_targets or [])
        self._lock: asyncio.Lock | None = None
        #: Dialogs the page opened and the tab answered, console messages and uncaught
        #: errors of the page: lines not yet reported by a call (the newest kept).
        self.dialogs: list[str] = []
        self.page_lines: deque[str] = deque(maxlen=MAX_PAGE_LINES)
        self.page_lines_dropped = 0
        #: How the running call wants dialogs answered (None: accept them).
        self.dialog_choice: DialogChoice = None

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the tab's loop, from another thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop.loop)

    @property
    def lock(self) -> asyncio.Lock:
        """The lock that runs this tab's calls one at a time (created on the loop)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    @property
    def browser_gone(self) -> bool:
        """True when the connection to the browser has closed."""
        return self.connection is not None and self.connection.closed

    async def ensure_connected(self, timeout: float = OPEN_TIMEOUT) -> CDPConnection:
        """The connection, connecting (and launching Chromium) when needed."""
        if self.connection is None or self.connection.closed:
            self.page = None
            lost = None
            if self.connection is not None:
                lost = self.endpoint
                await self.connection.close()
                self.connection = None
            endpoint = await asyncio.to_thread(self.browser.endpoint, lost)
            self.endpoint = endpoint
            self.connection = await connect(endpoint, timeout=timeout)
            self.connection.on("Target.targetCreated", self._on_target_created)
            await self.connection.call(
                "Target.setDiscoverTargets", {"discover": True}, timeout=timeout
            )
            await self._close_stale_targets()
        return self.connection

    async def ensure_page(self, timeout: float = OPEN_TIMEOUT) -> CDPSession:
        """The page, opened (or found, with ``keep_page``) within ``timeout`` when needed."""
        connection = await self.ensure_connected(timeout)
        if self.page is None:
            self.page = await self._open_page(connection, timeout)
        return self.page

    def _on_target_created(self, event: dict[str, Any]) -> None:
        info = event.get("targetInfo") or {}
        if info.get("type") == "page" and info.get("openerId"):
            self.opened.append(str(info["targetId"]))

    async def _open_page(self, connection: CDPConnection, timeout: float) -> CDPSession:
        if self.keep_page:
            targets = (await connection.call("Target.getTargets", timeout=timeout))["targetInfos"]
            kept = pick_page(targets, remembered_page(connection.url))
            if kept is not None:
                return await self._adopt(connection, kept, timeout, navigate=self.url is not None)
        # A window of its own, not a tab beside other sessions' tabs: Chromium stops
        # drawing a background tab, and a capture of it can hang for good.
        created = await connection.call(
            "Target.createTarget", {"url": "about:blank", "newWindow": True}, timeout=timeout
        )
        return await self._adopt(connection, created["targetId"], timeout, navigate=True)

    async def _adopt(
        self, connection: CDPConnection, target_id: str, timeout: float, *, navigate: bool
    ) -> CDPSession:
        """Attach to page ``target_id`` and make it ours: dialogs answered, console and
        errors collected, the viewport set, ``url`` loaded when ``navigate``."""
        owned = not self.keep_page
        try:
            page = await CDPSession.attach(connection, target_id, timeout=timeout)
            page.owns_target = owned  # closing the session closes the window
            # alert(), confirm(), prompt() and beforeunload block the page until they are
            # answered: each is answered at once, and reported by the call it opened in
            page.on("Page.javascriptDialogOpening", lambda event: self._answer_dialog(page, event))
            page.on("Runtime.consoleAPICalled", self._on_console)
            page.on("Runtime.exceptionThrown", self._on_page_error)
            await page.call("Runtime.enable", timeout=timeout)
            await page.set_viewport(self.width, self.height, timeout=timeout)
            if navigate:
                await page.navigate(self.url or "about:blank", timeout=timeout)
        except BaseException:
            if owned:
                with contextlib.suppress(CDPError):
                    await connection.call("Target.closeTarget", {"targetId": target_id}, timeout=5)
            raise
        if owned:
            self._owned_targets.append(target_id)
        else:
            remember_page(connection.url, target_id)
        return page

    async def page_targets(self) -> list[dict[str, Any]]:
        """The browser's pages: ``id``, ``url``, ``title``, ``opener`` (the id of the page
        that opened it) and ``current`` (the one snippets work on)."""
        assert self.connection is not None
        targets = (await self.connection.call("Target.getTargets"))["targetInfos"]
        return [
            {
                "id": target["targetId"],
                "url": target.get("url", ""),
                "title": target.get("title", ""),
                "opener": target.get("openerId"),
                "current": target["targetId"] == self.target_id,
            }
            for target in targets
            if target.get("type") == "page"
        ]

    async def switch_to(self, which: str | None, timeout: float) -> CDPSession:
        """Make another page the current one and return it: ``which`` is a target id, or
        text found in a page's URL or title; None is the newest page the current page
        opened (a popup, a new tab). Raises :class:`PageNotFoundError`."""
        assert self.connection is not None
        pages = await self.page_targets()
        others = [page for page in pages if not page["current"]]
        if which is None:
            opener = self.target_id
            popups = [page["id"] for page in others if page["opener"] == opener]
            order = {target: index for index, target in enumerate(self.opened)}
            popups.sort(key=lambda target: order.get(target, -1))
            chosen = popups[-1] if popups else None
        else:
            chosen = next((page["id"] for page in pages if page["id"] == which), None) or next(
                (page["id"] for page in others if which in page["url"] or which in page["title"]),
                None,
            )
        if chosen is None:
            listed = "; ".join(f"{page['id']} {page['url']!r}" for page in pages) or "none"
            wanted = "a page opened by the current one" if which is None else repr(which)
            raise PageNotFoundError(f"no page matches {wanted}; the browser's pages: {listed}")
        if chosen == self.target_id and self.page is not None:
            return self.page
        page = await self._adopt(self.connection, chosen, timeout, navigate=False)
        previous, self.page = self.page, page
        if previous is not None and not previous.owns_target:
            with contextlib.suppress(CDPError):
                await previous.close(timeout=5)  # detach: the page stays open
        return page

    def _answer_dialog(self, page: CDPSession, event: dict[str, Any]) -> None:
        dialog = Dialog(
            type=str(event.get("type", "dialog")),
            message=str(event.get("message", "")),
            default_prompt=str(event.get("defaultPrompt", "")),
            url=str(event.get("url", "")),
        )
        task = asyncio.ensure_future(self._answer(page, dialog, self.dialog_choice))
        task.add_done_callback(_ignore_outcome)

    async def _answer(self, page: CDPSession, dialog: Dialog, choice: DialogChoice) -> None:
        note = ""
        if callable(choice):
            try:
                choice = choice(dialog)
                if inspect.isawaitable(choice):
                    choice = await asyncio.wait_for(choice, DIALOG_CHOICE_TIMEOUT)
            except Exception as exc:  # the page must not stay blocked: answer by default
                note = f"; the on_dialog handler failed ({type(exc).__name__}: {exc})"
                choice = None
        accept = choice is not False
        answer: dict[str, Any] = {"accept": accept}
        if dialog.type == "prompt" and accept:
            answer["promptText"] = choice if isinstance(choice, str) else dialog.default_prompt
        verdict = "accepted" if accept else "dismissed"
        if "promptText" in answer and answer["promptText"] != dialog.default_prompt:
            verdict += f" with {answer['promptText']!r}"
        self.dialogs.append(f"[{dialog.type} dialog {dialog.message!r} {verdict}{note}]")
        await page.call("Page.handleJavaScriptDialog", answer, timeout=5)

    def _keep_line(self, line: str) -> None:
        if len(self.page_lines) == self.page_lines.maxlen:
            self.page_lines_dropped += 1
        self.page_lines.append(line[:MAX_PAGE_LINE_CHARS])

    def _on_console(self, event: dict[str, Any]) -> None:
        words = [_remote_text(arg) for arg in event.get("args", [])]
        self._keep_line(f"[console.{event.get('type', 'log')}] {' '.join(words)}")

    def _on_page_error(self, event: dict[str, Any]) -> None:
        details = event.get("exceptionDetails") or {}
        exception = details.get("exception") or {}
        text = exception.get("description") or details.get("text") or "an error"
        self._keep_line(f"[page error] {str(text).splitlines()[0]}")

    def take_page_lines(self) -> list[str]:
        """The dialog, console and page-error lines since the last call, and empties them."""
        lines = [*self.dialogs, *self.page_lines]
        if self.page_lines_dropped:
            lines.insert(
                len(self.dialogs), f"[{self.page_lines_dropped} earlier page lines left out]"
            )
        self.dialogs.clear()
        self.page_lines.clear()
        self.page_lines_dropped = 0
        return lines

    async def _close_stale_targets(self) -> None:
        assert self.connection is not None
        stale, self._stale_targets = self._stale_targets, []
        for target_id in stale:
            with contextlib.suppress(CDPError):
                await self.connection.call("Target.closeTarget", {"targetId": target_id}, timeout=5)

    async def recover_after_timeout(self) -> str:
        """Make the next call possible after a snippet was cancelled; say what was done.

        Fits in :data:`RECOVERY_BUDGET`. A page that answers is kept (with its state). One
        that does not (a script stuck in a loop) has its script terminated; if it still
        does not answer (a hung renderer), it is closed and the next call opens a new
        one. When the browser itself does not answer either, a browser we launched is
        killed (the next call launches a new one) and an attached one is let go of (the
        next call connects again).
        """
        page = self.page
        if page is None or self.browser_gone:
            return "The browser connection is gone; the next call reconnects."
        loop = asyncio.get_running_loop()
        budget_end = loop.time() + RECOVERY_BUDGET
        # a nudge may have left a screencast running; stopping it need not be waited for
        stop = asyncio.ensure_future(page.call("Page.stopScreencast", timeout=5))
        stop.add_done_callback(_ignore_outcome)
        page_answers, browser_answers = await asyncio.gather(
            self._answers(page), self._browser_answers()
        )
        if page_answers:
            return "The page was kept as it is."
        if not browser_answers:
            return self.give_up_on_browser()
        terminated = True
        try:
            await page.call(
                "Runtime.terminateExecution", timeout=max(budget_end - loop.time(), 0.05)
            )
        except CDPError:
            terminated = False  # a hung renderer does not even take that
        if terminated and await self._answers(page, max(budget_end - loop.time(), 0.05)):
            return "The page's running script was terminated; the page was kept."
        self._close_in_background(page)
        return "The page did not respond and was closed; the next call starts on a new page."

    async def recover_unopened(self) -> str:
        """After a page could not be opened in a call's time: say why, and make the next
        call start afresh (see :meth:`recover_after_timeout`)."""
        if self.browser_gone:
            return "The browser connection is gone; the next call reconnects."
        if not await self._browser_answers():
            return self.give_up_on_browser()
        if self.page is not None:
            self._close_in_background(self.page)
        return "The browser answers, but its new page did not; the next call tries again."

    def give_up_on_browser(self) -> str:
        """Drop the connection to a browser that does not answer; kill it if we launched
        it. Neither is waited for."""
        connection, self.connection, self.page = self.connection, None, None
        if connection is not None:
            closing = asyncio.ensure_future(connection.close())
            closing.add_done_callback(_ignore_outcome)
        if self.browser.attached:
            return "The browser did not respond either; the next call connects to it again."
        threading.Thread(
            target=self.browser.kill_unresponsive, name="viewfinder-browser-kill", daemon=True
        ).start()
        return (
            "The browser did not respond either and was killed; the next call launches a new one."
        )

    def _close_in_background(self, page: CDPSession) -> None:
        """Close ``page`` (even a kept one: the next call would only find it stuck) and
        let the next call open another; not waited for."""
        if self.page is page:
            self.page = None
        if self.browser_gone or self.connection is None:
            return
        closing = asyncio.ensure_future(
            self.connection.call("Target.closeTarget", {"targetId": page.target_id}, timeout=5)
        )
        closing.add_done_callback(_ignore_outcome)

    async def _answers(self, page: CDPSession, timeout: float = PROBE_TIMEOUT) -> bool:
        try:
            await page.call(
                "Runtime.evaluate",
                {"expression": "1", "returnByValue": True},
                timeout=timeout,
            )
        except CDPError:
            return False
        return True

    async def _browser_answers(self) -> bool:
        if self.connection is None or self.connection.closed:
            return False
        try:
            await self.connection.call("Browser.getVersion", timeout=PROBE_TIMEOUT)
        except CDPError:
            return False
        return True

    async def drop_page(self) -> None:
        """Close the page (and every other page we opened or switched to), or detach
        from a kept one; the next call opens or finds one again."""
        page, self.page = self.page, None
        owned, self._owned_targets = self._owned_targets, []
        if self.browser_gone or self.connection is None:
            return
        if page is not None:
            with contextlib.suppress(CDPError):
                await page.close(timeout=5)
        for target_id in owned:
            if page is None or target_id != page.target_id:
                with contextlib.suppress(CDPError):
                    await self.connection.call(
                        "Target.closeTarget", {"targetId": target_id}, timeout=5
                    )

    async def shutdown(self) -> None:
        """Close the page and the connection (the browser itself is not ours to stop)."""
        try:
            await self.drop_page()
        finally:
            connection, self.connection = self.connection, None
            if connection is not None:
                await connection.close()

    def close(self, timeout: float = 10.0) -> None:
        """Shut down and stop the loop thread; from any thread but the tab's own."""
        if self.loop.running:
            future = self.submit(self.shutdown())
            try:
                future.result(timeout)
            except Exception as exc:  # closing anyway; say why it was not clean
                log.warning("closing the browser tab was not clean: %r", exc)
        self.loop.stop(timeout)

    def abandon(self) -> None:
        """Give up on this tab (its loop is blocked): close it in the background, when
        and if the loop comes back."""
        self.abandoned = True
        threading.Thread(
            target=self.close,
            kwargs={"timeout": 3600.0},
            name="viewfinder-tab-retire",
            daemon=True,
        ).start()

    @property
    def target_id(self) -> str | None:
        return self.page.target_id if self.page is not None else None

    @property
    def owned_target_ids(self) -> list[str]:
        """The pages to close when this tab is given up on (none for a kept page)."""
        return list(self._owned_targets)


def _remote_text(value: dict[str, Any]) -> str:
    """A console argument (a CDP RemoteObject) as the console would print it."""
    if "value" in value:
        item = value["value"]
        return item if isinstance(item, str) else json.dumps(item)
    return str(value.get("description") or value.get("unserializableValue") or value.get("type"))


def _ignore_outcome(task: asyncio.Future[Any]) -> None:
    # a dialog closed meanwhile (the page navigated) cannot be answered: nothing to do
    if not task.cancelled():
        task.exception()
