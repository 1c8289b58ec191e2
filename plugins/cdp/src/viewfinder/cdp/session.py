"""A session with one page target, over a flattened CDP session on a browser connection.

Flattened sessions (``Target.attachToTarget`` with ``flatten: true``) put the page's
traffic on the browser websocket, tagged with a ``sessionId``; no second socket is
needed and the connection's reader serves both.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import Any

from viewfinder.cdp.connection import (
    DEFAULT_CALL_TIMEOUT,
    CDPConnection,
    EventPredicate,
    wait_for_future,
)
from viewfinder.cdp.errors import (
    CDPError,
    CDPNavigationError,
    CDPTimeoutError,
    JavaScriptError,
)
from viewfinder.cdp.listeners import Listener, Subscription


class CDPSession:
    """One page (tab) of a browser: ``call``/``on``/``on_call_result`` scoped to it.

    Get one from :meth:`CDPConnection.new_page` (a tab this session owns and closes) or
    :meth:`attach` (an existing tab, left open on :meth:`close`). Use it on the event loop
    of its connection.
    """

    def __init__(
        self,
        connection: CDPConnection,
        session_id: str,
        target_id: str,
        *,
        viewport: tuple[int, int] | None = None,
        owns_target: bool = False,
    ) -> None:
        self.connection = connection
        self.session_id = session_id
        self.target_id = target_id
        #: ``(width, height)`` in CSS pixels when this session set the viewport.
        self.viewport = viewport
        self.owns_target = owns_target
        self._closed = False

    # -- opening ----------------------------------------------------------------------

    @classmethod
    async def create(
        cls,
        connection: CDPConnection,
        url: str | None = None,
        *,
        width: int = 1280,
        height: int = 800,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> CDPSession:
        """Open a new tab, set its viewport to ``width`` x ``height`` and load ``url``."""
        # The tab starts blank so that the load of ``url`` happens after we listen for it.
        created = await connection.call(
            "Target.createTarget",
            # A window of its own: capturing a background tab of a shared window can
            # hang until that tab is brought to the front.
            {"url": "about:blank", "newWindow": True},
            timeout=timeout,
        )
        target_id = created["targetId"]
        try:
            session = await cls._attach(connection, target_id, owns_target=True, timeout=timeout)
        except BaseException:
            with contextlib.suppress(CDPError):
                await connection.call("Target.closeTarget", {"targetId": target_id}, timeout=5)
            raise
        try:
            await session.set_viewport(width, height, timeout=timeout)
            if url:
                await session.navigate(url, timeout=timeout)
        except BaseException:
            with contextlib.suppress(CDPError):
                await asyncio.shield(session.close())
            raise
        return session

    @classmethod
    async def attach(
        cls, connection: CDPConnection, target_id: str, *, timeout: float = DEFAULT_CALL_TIMEOUT
    ) -> CDPSession:
        """Attach to an existing page target (see ``Target.getTargets``); it stays open."""
        return await cls._attach(connection, target_id, owns_target=False, timeout=timeout)

    @classmethod
    async def _attach(
        cls, connection: CDPConnection, target_id: str, *, owns_target: bool, timeout: float
    ) -> CDPSession:
        attached = await connection.call(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True}, timeout=timeout
        )
        session = cls(connection, attached["sessionId"], target_id, owns_target=owns_target)
        await session.call("Page.enable", timeout=timeout)
        # Lifecycle events carry the loaderId, which ties a "load" to our navigation.
        await session.call("Page.setLifecycleEventsEnabled", {"enabled": True}, timeout=timeout)
        return session

    # -- the connection API, scoped ----------------------------------------------------

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> dict[str, Any]:
        """Call ``method`` on this page; see :meth:`CDPConnection.call`."""
        return await self.connection.call(
            method, params, session_id=self.session_id, timeout=timeout
        )

    def on(self, event: str, fn: Listener) -> Subscription:
        """Call ``fn(params)`` for every ``event`` of this page; returns the unsubscribe handle."""
        return self.connection.on(event, fn, session_id=self.session_id)

    def on_call_result(self, fn: Listener) -> Subscription:
        """Call ``fn(method, params, result)`` after every successful call on this page."""
        return self.connection.on_call_result(fn, session_id=self.session_id)

    def expect_event(
        self, event: str, predicate: EventPredicate | None = None
    ) -> asyncio.Future[dict[str, Any]]:
        """A future for the next matching ``event`` of this page, listening from now on."""
        return self.connection.expect_event(event, predicate, session_id=self.session_id)

    async def wait_for_event(
        self,
        event: str,
        predicate: EventPredicate | None = None,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> dict[str, Any]:
        """Wait for the next matching ``event`` of this page and return its params."""
        return await self.connection.wait_for_event(
            event, predicate, timeout, session_id=self.session_id
        )

    # -- page operations ----------------------------------------------------------------

    async def set_viewport(
        self, width: int, height: int, *, timeout: float = DEFAULT_CALL_TIMEOUT
    ) -> None:
        """Make the viewport ``width`` x ``height`` CSS pixels, one device pixel each."""
        # deviceScaleFactor 1 keeps screenshot pixels equal to CSS pixels, so regions and
        # input coordinates mean the same thing.
        await self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            timeout=timeout,
        )
        self.viewport = (width, height)

    async def navigate(self, url: str, timeout: float = DEFAULT_CALL_TIMEOUT) -> dict[str, Any]:
        """Load ``url`` and wait for its ``load`` event; return ``Page.navigate``'s result.

        Raises :class:`CDPNavigationError` when the browser cannot load it (bad host,
        refused connection) and :class:`CDPTimeoutError` when it does not finish loading
        within ``timeout`` seconds.
        """
        loaded: set[str] = set()
        wanted: dict[str, str] = {}

        def is_our_load(params: dict[str, Any]) -> bool:
            return params.get("name") == "load" and params.get("loaderId") == wanted.get("id")

        def remember(params: dict[str, Any]) -> None:
            if params.get("name") == "load" and isinstance(params.get("loaderId"), str):
                loaded.add(params["loaderId"])

        # Both listen before navigating: the load may be reported before the answer to
        # Page.navigate (which tells us the loaderId) has been read.
        remembering = self.on("Page.lifecycleEvent", remember)
        our_load = self.expect_event("Page.lifecycleEvent", is_our_load)
        try:
            async with asyncio.timeout(timeout):
                result = await self.call("Page.navigate", {"url": url}, timeout=timeout)
                if result.get("errorText"):
                    raise CDPNavigationError(
                        f"could not load {url}: {result['errorText']}", method="Page.navigate"
                    )
                loader_id = result.get("loaderId")
                if loader_id is None or loader_id in loaded:
                    return result  # same-document navigation, or already loaded
                wanted["id"] = loader_id
                await our_load
                return result
        except TimeoutError as exc:
            if isinstance(exc, CDPTimeoutError):
                raise
            raise CDPTimeoutError(f"loading {url}", timeout, method="Page.navigate") from None
        finally:
            remembering.remove()
            our_load.cancel()

    async def evaluate(
        self,
        expression: str,
        *,
        await_promise: bool = False,
        context_id: int | None = None,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> Any:
        """Run JavaScript ``expression`` in the page and return its value as JSON data.

        With ``await_promise`` a returned promise is awaited; ``context_id`` runs it in
        that execution context (an isolated world's) instead of the page's own. A thrown
        exception raises :class:`JavaScriptError` with the exception's text.
        """
        params: dict[str, Any] = {
            "expression": expression,
            "returnByValue": True,
            "awaitPromise": await_promise,
        }
        if context_id is not None:
            params["contextId"] = context_id
        result = await self.call("Runtime.evaluate", params, timeout=timeout)
        details = result.get("exceptionDetails")
        if details is not None:
            raise JavaScriptError(_exception_text(details), details)
        return _remote_value(result.get("result", {}))

    async def layout_size(self, *, timeout: float = DEFAULT_CALL_TIMEOUT) -> tuple[int, int]:
        """Width and height of the whole document in CSS pixels."""
        metrics = await self.call("Page.getLayoutMetrics", timeout=timeout)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        return (math.ceil(size["width"]), math.ceil(size["height"]))

    async def scroll_offset(self, *, timeout: float = DEFAULT_CALL_TIMEOUT) -> tuple[float, float]:
        """Where the viewport's top-left corner is in the document, in CSS pixels."""
        metrics = await self.call("Page.getLayoutMetrics", timeout=timeout)
        viewport = metrics.get("cssVisualViewport") or metrics["visualViewport"]
        return (float(viewport["pageX"]), float(viewport["pageY"]))

    # -- closing ------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self, *, timeout: float = 10.0) -> None:
        """Close the tab (when this session opened it) or detach from it. Idempotent.

        Nothing to do when the browser is already gone.
        """
        if self._closed:
            return
        self._closed = True
        if self.connection.closed:
            return
        # Both calls answer before the session is gone; its detach event says it is.
        detached = self.connection.expect_event(
            "Target.detachedFromTarget", lambda params: params.get("sessionId") == self.session_id
        )
        try:
            if self.owns_target:
                await self.connection.call(
                    "Target.closeTarget", {"targetId": self.target_id}, timeout=timeout
                )
            else:
                await self.connection.call(
                    "Target.detachFromTarget", {"sessionId": self.session_id}, timeout=timeout
                )
            await wait_for_future(detached, "the tab to close", timeout)
        finally:
            detached.cancel()

    async def __aenter__(self) -> CDPSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"CDPSession(target_id={self.target_id!r}, session_id={self.session_id!r})"


def _exception_text(details: dict[str, Any]) -> str:
    exception = details.get("exception") or {}
    for text in (exception.get("description"), exception.get("value"), details.get("text")):
        if text not in (None, ""):
            return str(text)
    return "unknown JavaScript exception"


_UNSERIALIZABLE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0": -0.0}


def _remote_value(remote: dict[str, Any]) -> Any:
    # returnByValue gives JSON values; NaN, infinities, -0 and BigInts come back as text.
    if "unserializableValue" in remote:
        text = remote["unserializableValue"]
        if text in _UNSERIALIZABLE:
            return _UNSERIALIZABLE[text]
        if isinstance(text, str) and text.endswith("n"):
            return int(text[:-1])
        return text
    return remote.get("value")
