"""One tab of the browser toolset: its CDP session, its input, what it logged, its refs.

A tab listens to its own page from the moment it is attached: console calls, uncaught
exceptions and the browser's log (``Runtime`` and ``Log``), requests and their answers
(``Network``), each kept in a bounded buffer that ``read_console`` and ``read_network``
empty. Dialogs are accepted as they open (a page never blocks a call on an alert) and
logged to the console buffer.

Elements come from the ``cdp`` element source, read on this tab's session: refs are
bound to the node's frame and backend node id, boxes are in CSS pixels of the
viewport at any zoom or device scale, iframes included. The source's ``e12`` is this
toolset's ``ref_12``; a tab keeps which node each ref names, for the members that act
on the node itself (``form_input``, ``file_upload``, ``scroll_to``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

from viewfinder.cdp import CdpBackend, CDPSession, PageInput
from viewfinder.cdp.elements import CdpElementSource
from viewfinder.core.element import Element, ElementTree
from viewfinder.core.element_sources import ElementNode

#: Entries kept per tab; the oldest go first.
MAX_CONSOLE_ENTRIES = 1000
MAX_NETWORK_ENTRIES = 500
#: Refs remembered from earlier pages (to say "no longer on the page") before only the
#: current page's are kept.
MAX_REMEMBERED_REFS = 50_000
#: Longest console line kept (characters).
MAX_LINE_CHARS = 2000


class _OnSession(CdpBackend):
    """The backend the element source reads through: an attached tab's session."""

    def __init__(self, session: CDPSession, timeout: float) -> None:
        super().__init__(timeout=timeout)
        self._tab_session = session

    async def _ensure_started(self) -> CDPSession:
        return self._tab_session


class TabElements(CdpElementSource):
    """The ``cdp`` element source on one tab's session, boxes in viewport CSS pixels."""

    def __init__(self, session: CDPSession, timeout: float) -> None:
        super().__init__(screen=False, timeout=timeout)
        self.backend = _OnSession(session, timeout)

    async def aread(self) -> tuple[ElementTree, dict[str, str]]:
        """The tree (refs as the source gives them) and the node key of each ref."""
        found = await self._aread()
        roots = self._refs.build(found.roots)
        keys: dict[str, str] = {}

        def pair(nodes: list[ElementNode], elements: tuple[Element, ...]) -> None:
            # build() keeps the shape of what it was given, node for node
            for node, element in zip(nodes, elements, strict=True):
                if node.key is not None:
                    keys[element.ref] = node.key
                pair(node.children, element.children)

        pair(found.roots, roots)
        tree = ElementTree(
            source=self.name, roots=roots, reason=found.reason, coordinates=found.coordinates
        )
        return tree, keys


def toolset_ref(ref: str) -> str:
    """The source's ``e12`` as the toolset's ``ref_12``."""
    return "ref_" + ref[1:] if ref.startswith("e") else ref


def source_ref(ref: str) -> str:
    """The toolset's ``ref_12`` (or a bare ``12``, ``[ref_12]``) as the source's ``e12``."""
    ref = ref.strip().strip("[]")
    if ref.startswith("ref_"):
        return "e" + ref[4:]
    return "e" + ref if ref.isdigit() else ref


@dataclass
class _Request:
    method: str
    url: str
    started: float
    #: the document that sent it (``loaderId``) and its frame
    loader: str = ""
    frame: str = ""
    status: int | None = None
    mime: str = ""
    ms: float | None = None
    failed: str | None = None

    def line(self) -> str:
        if self.failed is not None:
            outcome = f"failed ({self.failed})"
        elif self.status is None:
            outcome = "pending"
        else:
            outcome = f"{self.status} {self.mime or '-'}"
        timing = f" {self.ms:.0f} ms" if self.ms is not None else ""
        return f"{self.method} {self.url} {outcome}{timing}"


class Tab:
    """A page the toolset drives, under the ``tab_id`` it gave it."""

    def __init__(self, tab_id: str, session: CDPSession, timeout: float) -> None:
        self.tab_id = tab_id
        self.session = session
        self.input = PageInput(session)
        self.elements = TabElements(session, timeout)
        self.tree: ElementTree | None = None
        self.keys: dict[str, str] = {}
        #: screenshot pixels per CSS pixel, as the last screenshot was sent
        self.scale = 1.0
        self.main_frame = ""
        self.console: deque[str] = deque(maxlen=MAX_CONSOLE_ENTRIES)
        self.network: OrderedDict[str, _Request] = OrderedDict()
        self._timeout = timeout

    @property
    def timeout(self) -> float:
        """The longest one call to the page may take, in seconds."""
        return self._timeout

    @property
    def target_id(self) -> str:
        return self.session.target_id

    async def watch(self) -> None:
        """Start listening to the page's console, network and dialogs."""
        on = self.session.on
        on("Runtime.consoleAPICalled", self._console_call)
        on("Runtime.exceptionThrown", self._exception)
        on("Log.entryAdded", self._log_entry)
        on("Network.requestWillBeSent", self._request)
        on("Network.responseReceived", self._response)
        on("Network.loadingFinished", self._finished)
        on("Network.loadingFailed", self._failed)
        on("Page.javascriptDialogOpening", self._dialog)
        on("Page.frameNavigated", self._navigated)
        for domain in ("Runtime", "Log", "Network"):
            await self.session.call(f"{domain}.enable", timeout=self._timeout)
        frames = await self.session.call("Page.getFrameTree", timeout=self._timeout)
        self.main_frame = frames["frameTree"]["frame"]["id"]

    # -- what the page logs --------------------------------------------------------

    def _add(self, line: str) -> None:
        self.console.append(line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…")

    def _console_call(self, params: dict[str, Any]) -> None:
        words = [_remote_text(arg) for arg in params.get("args", [])]
        self._add(f"[{params.get('type', 'log')}] {' '.join(words)}")

    def _exception(self, params: dict[str, Any]) -> None:
        details = params.get("exceptionDetails", {})
        exception = details.get("exception") or {}
        text = exception.get("description") or details.get("text") or "exception"
        self._add(f"[exception] {text}")

    def _log_entry(self, params: dict[str, Any]) -> None:
        entry = params.get("entry", {})
        url = f" ({entry['url']})" if entry.get("url") else ""
        self._add(f"[{entry.get('level', 'info')}] {entry.get('text', '')}{url}")

    async def _dialog(self, params: dict[str, Any]) -> None:
        kind, message = params.get("type", "alert"), params.get("message", "")
        self._add(f"[dialog] {kind} {message!r} accepted")
        answer: dict[str, Any] = {"accept": True}
        if kind == "prompt":
            answer["promptText"] = params.get("defaultPrompt", "")
        with contextlib.suppress(Exception):  # the page may have gone meanwhile
            await self.session.call("Page.handleJavaScriptDialog", answer, timeout=self._timeout)

    def _request(self, params: dict[str, Any]) -> None:
        request = params.get("request", {})
        self.network[params["requestId"]] = _Request(
            request.get("method", "GET"),
            request.get("url", ""),
            time.monotonic(),
            loader=params.get("loaderId", ""),
            frame=params.get("frameId", ""),
        )
        while len(self.network) > MAX_NETWORK_ENTRIES:
            self.network.popitem(last=False)

    def _response(self, params: dict[str, Any]) -> None:
        entry = self.network.get(params.get("requestId", ""))
        if entry is not None:
            response = params.get("response", {})
            entry.status = response.get("status")
            entry.mime = response.get("mimeType", "")

    def _finished(self, params: dict[str, Any]) -> None:
        entry = self.network.get(params.get("requestId", ""))
        if entry is not None:
            entry.ms = (time.monotonic() - entry.started) * 1000

    def _failed(self, params: dict[str, Any]) -> None:
        entry = self.network.get(params.get("requestId", ""))
        if entry is not None:
            entry.failed = "canceled" if params.get("canceled") else params.get("errorText", "")
            entry.ms = (time.monotonic() - entry.started) * 1000

    def _navigated(self, params: dict[str, Any]) -> None:
        # A new document in the main frame: what the one before it still waited for
        # ends with it, though Chromium does not always say so (no loadingFailed).
        frame = params.get("frame", {})
        if frame.get("parentId") or frame.get("id") != self.main_frame:
            return
        for entry in self.network.values():
            left = entry.frame == self.main_frame and entry.loader != frame.get("loaderId")
            if left and entry.status is None and entry.failed is None:
                entry.failed = "its page was left"

    def take_console(self) -> list[str]:
        """The console lines since the last take, and forget them."""
        lines = list(self.console)
        self.console.clear()
        return lines

    def take_network(self) -> list[str]:
        """The requests since the last take, and forget the answered ones (one still
        waiting for its answer is said again, with the answer, once it has one)."""
        lines = [entry.line() for entry in self.network.values()]
        for request_id, entry in list(self.network.items()):
            if entry.status is not None or entry.failed is not None:
                del self.network[request_id]
        return lines

    # -- elements ------------------------------------------------------------------

    async def read(self) -> ElementTree:
        """Read the page's tree; refs stay bound to their nodes across reads."""
        from viewfinder.core.element_sources import collector_paused

        with collector_paused():  # as ElementSource.read: a read makes no cycles
            self.tree, keys = await self.elements.aread()
        self.keys.update(keys)
        if len(self.keys) > MAX_REMEMBERED_REFS:  # a long session: keep the page's own
            self.keys = keys
        return self.tree

    # -- navigation ----------------------------------------------------------------

    def watch_load(self) -> tuple[asyncio.Future[dict[str, Any]], asyncio.Future[dict[str, Any]]]:
        """Futures for the main frame's next load starting and stopping, from now on."""

        def main(params: dict[str, Any]) -> bool:
            return params.get("frameId") == self.main_frame

        return (
            self.session.expect_event("Page.frameStartedLoading", main),
            self.session.expect_event("Page.frameStoppedLoading", main),
        )

    async def settled(
        self,
        load: tuple[asyncio.Future[dict[str, Any]], asyncio.Future[dict[str, Any]]],
        grace: float,
        timeout: float,
    ) -> None:
        """When the main frame started loading within ``grace`` seconds of an action,
        wait (up to ``timeout`` seconds) until it stopped."""
        started, stopped = load
        try:
            if grace > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(started), grace)
            if started.done():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(stopped), timeout)
        finally:
            started.cancel()
            stopped.cancel()


def _remote_text(remote: dict[str, Any]) -> str:
    if "value" in remote:
        value = remote["value"]
        return value if isinstance(value, str) else repr(value)
    return str(remote.get("description") or remote.get("unserializableValue") or remote.get("type"))
