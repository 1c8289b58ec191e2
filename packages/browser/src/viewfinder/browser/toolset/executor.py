"""``BrowserToolset``: Anthropic's ``browser_toolset_20260801`` executed on a Chromium.

>>> with BrowserToolset() as browser:                                  # doctest: +SKIP
...     for block in response.content:
...         if block.type == "tool_use" and block.toolset_name == "browser":
...             results.append(browser.run(block))

The browser is a headless Chromium it launches (``width`` x ``height`` viewport), one
shown on a viewfinder display (``display=``), or a running one it attaches to
(``cdp_url=``), whose open pages become its tabs. Every member runs over CDP on the
tab it names (``tab_id``) or the active tab; whatever goes wrong comes back as an
``is_error`` result naming the member and the field, never as an exception.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from viewfinder.browser.toolset import members, moves
from viewfinder.browser.toolset.errors import MemberError
from viewfinder.browser.toolset.family import (
    block_parts,
    enabled_members,
    invalid_input,
    toolset_definition,
)
from viewfinder.browser.toolset.inputs import MEMBER_INPUTS, TOOLSET_TYPE
from viewfinder.browser.toolset.page_text import MAX_READ_CHARS
from viewfinder.browser.toolset.result import MemberResult, TabEntry
from viewfinder.browser.toolset.tab import Tab
from viewfinder.cdp import CDPConnection, CDPSession, LoopThread, connect, launch_chromium
from viewfinder.cdp.backend import shown_page
from viewfinder.cdp.endpoint import resolve_cdp_url
from viewfinder.cdp.launcher import ChromiumProcess
from viewfinder.core import ViewfinderError
from viewfinder.core.result_budget import ResultBudget, budget_for, fit_text

Handler = Callable[[Any, Tab, Any], Awaitable[Any]]

#: Members that act without a tab of their own choosing.
_TAB_MEMBERS = {"list_tabs", "new_tab", "switch_tab", "close_tab"}
#: Members after which a load they started is waited for.
_SETTLING = {"left_click", "double_click", "triple_click", "middle_click", "key", "type"}


def _handlers() -> dict[str, Handler]:
    table: dict[str, Handler] = {
        "navigate": moves.navigate,
        "read_page": members.read_page,
        "get_page_text": members.get_page_text,
        "read_console": members.read_console,
        "read_network": members.read_network,
        "find": members.find,
        "form_input": members.form_input,
        "file_upload": members.file_upload,
        "scroll_to": members.scroll_to,
        "screenshot": moves.screenshot,
        "zoom": moves.zoom,
        "hover": moves.hover,
        "left_click_drag": moves.drag,
        "left_mouse_down": moves.mouse_down,
        "left_mouse_up": moves.mouse_up,
        "mouse_move": moves.mouse_move,
        "scroll": moves.scroll,
        "type": moves.type_text,
        "key": moves.key,
        "hold_key": moves.hold_key,
        "wait": moves.wait,
        "javascript_exec": members.javascript_exec,
    }
    for name in moves.BUTTONS:
        table[name] = _clicker(name)
    return table


def _clicker(member: str) -> Handler:
    async def click(ts: Any, tab: Tab, inp: Any) -> str:
        return await moves.click(ts, tab, member, inp)

    return click


class BrowserToolset:
    """Runs the members of ``browser_toolset_20260801`` on a real Chromium.

    ``url``: a page to open in the first tab. ``cdp_url``: attach to that browser
    (default ``$VIEWFINDER_CDP_URL``) instead of launching one; ``display``: launch a
    Chromium shown on that viewfinder display (anything with ``env()``). ``budget``: the
    client's result budget (a name in ``CLIENT_BUDGETS`` or a ``ResultBudget``).
    ``configs``: the toolset's ``configs``, as in the ``tools[]`` entry (:meth:`definition`);
    a member not enabled there (``file_upload``, ``read_console``, ``read_network`` and
    ``javascript_exec`` are off unless enabled) is refused. ``paths``: how
    ``file_upload`` turns a given path into a file on this machine (a host's
    ``ToolContext.path``; default: as given). ``settle``: seconds after a click or key
    during which a page load it starts is waited for.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        cdp_url: str | None = None,
        display: Any = None,
        width: int = 1280,
        height: int = 800,
        budget: str | ResultBudget | None = None,
        configs: Mapping[str, Mapping[str, Any] | None] | None = None,
        paths: Callable[[str], Path] | None = None,
        timeout: float = 30.0,
        settle: float = 0.05,
    ) -> None:
        self.url = url
        self.cdp_url = None if display is not None else resolve_cdp_url(cdp_url)
        self.display = display
        self.width, self.height = width, height
        self.budget = budget_for(budget)
        self.configs = {name: dict(config or {}) for name, config in (configs or {}).items()}
        self.enabled = enabled_members(self.configs)
        self._paths = paths
        self.timeout = timeout
        self.settle = settle
        self.browser: ChromiumProcess | None = None
        self._connection: CDPConnection | None = None
        self._loop: LoopThread | None = None
        self._tabs: dict[str, Tab] = {}
        self._active: str | None = None
        self._count = 0
        self._handlers = _handlers()

    def definition(self) -> dict[str, Any]:
        """The ``tools[]`` entry for this executor: the family, with its ``configs``."""
        return toolset_definition(self.configs)

    # -- running a call ---------------------------------------------------------------

    def run(self, block: Any) -> dict[str, Any]:
        """Run a member's ``tool_use`` block (an SDK object or a dict); its ``tool_result``."""
        tool_use_id, name, arguments = block_parts(block)
        return self.execute(name, arguments).tool_result(tool_use_id)

    async def arun(self, block: Any) -> dict[str, Any]:
        """Async :meth:`run`."""
        tool_use_id, name, arguments = block_parts(block)
        return (await self.aexecute(name, arguments)).tool_result(tool_use_id)

    def execute(self, member: str, arguments: Mapping[str, Any] | None) -> MemberResult:
        """Run ``member`` with ``arguments`` (its ``input``); errors are results."""
        return self._thread().run(self._execute(member, arguments))

    async def aexecute(self, member: str, arguments: Mapping[str, Any] | None) -> MemberResult:
        """Async :meth:`execute`."""
        return await self._thread().arun(self._execute(member, arguments))

    def start(self) -> None:
        """Launch or attach now (otherwise the first call does)."""
        self._thread().run(self._started())

    def _thread(self) -> LoopThread:
        if self._loop is None or not self._loop.running:
            self._loop = LoopThread(name=f"viewfinder-browser-toolset-{id(self):x}")
        return self._loop

    async def _execute(self, member: str, arguments: Mapping[str, Any] | None) -> MemberResult:
        model = MEMBER_INPUTS.get(member)
        if model is None:
            return MemberResult.error(
                member, f"no such member of {TOOLSET_TYPE}; its members: {', '.join(MEMBER_INPUTS)}"
            )
        if member not in self.enabled:
            return MemberResult.error(
                member,
                "this member is not enabled: enable it in the configs of both the tools "
                f'entry and this executor ({{"{member}": {{"enabled": true}}}})',
            )
        try:
            inp = model.model_validate(dict(arguments or {}))
        except ValidationError as exc:
            return MemberResult.error(member, invalid_input(exc))
        try:
            await self._started()
            known = set(self._tabs)
            async with asyncio.timeout(self.timeout + float(getattr(inp, "duration", 0) or 0)):
                text, images = await self._dispatch(member, inp)
            infos = await self._reconcile()
        except MemberError as exc:
            return MemberResult.error(member, str(exc))
        except TimeoutError:
            return MemberResult.error(member, f"the page did not answer within {self.timeout:g} s")
        except (ViewfinderError, OSError) as exc:
            return MemberResult.error(member, str(exc))
        opened = [tab_id for tab_id in self._tabs if tab_id not in known]
        tabs = await self._entries(infos)
        return MemberResult(member, text, images, tabs=tabs, opened=opened)

    async def _dispatch(self, member: str, inp: BaseModel) -> tuple[str, list[Any]]:
        if member in _TAB_MEMBERS:
            return await self._tab_member(member, inp), []
        tab = self._tab(getattr(inp, "tab_id", None))
        load = tab.watch_load() if member in _SETTLING else None
        try:
            outcome = await self._handlers[member](self, tab, inp)
        finally:
            if load is not None:
                await tab.settled(load, self.settle, self.timeout)
        if isinstance(outcome, tuple):
            return outcome[0], list(outcome[1])
        return str(outcome), []

    # -- helpers the members use ------------------------------------------------------

    def fit(self, text: str) -> str:
        """``text`` within the client's text budget and the toolset's 50,000 characters."""
        return fit_text(text, self.budget.text_tokens, max_chars=MAX_READ_CHARS)[0]

    def resolve_path(self, given: str) -> Path:
        """A ``file_upload`` path as a file on this machine."""
        if self._paths is not None:
            return self._paths(given)
        return Path(given).expanduser()

    # -- tabs -------------------------------------------------------------------------

    def _tab(self, tab_id: str | None) -> Tab:
        wanted = tab_id or self._active
        if wanted is None or wanted not in self._tabs:
            open_tabs = ", ".join(self._tabs) or "none (open one with new_tab)"
            field = "tab_id" if tab_id else "tab"
            raise MemberError(field, f"no tab {wanted!r}; the open tabs: {open_tabs}")
        return self._tabs[wanted]

    async def _tab_member(self, member: str, inp: Any) -> str:
        assert self._connection is not None
        if member == "new_tab":
            created = await self._connection.call(
                "Target.createTarget", {"url": "about:blank", "newWindow": self.cdp_url is None}
            )
            tab = await self._adopt(created["targetId"])
            self._active = tab.tab_id
            return f"opened {tab.tab_id}; it is the active tab"
        if member == "switch_tab":
            tab = self._tab(inp.tab_id)
            await self._connection.call("Target.activateTarget", {"targetId": tab.target_id})
            self._active = tab.tab_id
            return f"{tab.tab_id} is the active tab"
        if member == "close_tab":
            tab = self._tab(inp.tab_id)
            await self._connection.call("Target.closeTarget", {"targetId": tab.target_id})
            del self._tabs[tab.tab_id]
            if self._active == tab.tab_id:
                self._active = next(reversed(self._tabs), None)
            return f"closed {tab.tab_id}"
        entries = await self._entries()
        return (
            "\n".join(
                f"{entry.tab_id}{' (active)' if entry.active else ''}: {entry.title!r} {entry.url}"
                for entry in entries
            )
            or "no tabs are open"
        )

    async def _entries(self, infos: list[dict[str, Any]] | None = None) -> list[TabEntry]:
        assert self._connection is not None
        if infos is None:
            infos = (await self._connection.call("Target.getTargets"))["targetInfos"]
        by_target = {info["targetId"]: info for info in infos}
        entries = []
        for tab_id, tab in self._tabs.items():
            info = by_target.get(tab.target_id, {})
            entries.append(
                TabEntry(tab_id, info.get("title", ""), info.get("url", ""), tab_id == self._active)
            )
        return entries

    async def _adopt(self, target_id: str) -> Tab:
        assert self._connection is not None
        session = await CDPSession.attach(self._connection, target_id, timeout=self.timeout)
        self._count += 1
        tab = Tab(f"tab_{self._count}", session, self.timeout)
        await tab.watch()
        if self.cdp_url is None and self.display is None:  # our headless browser
            await session.set_viewport(self.width, self.height, timeout=self.timeout)
        self._tabs[tab.tab_id] = tab
        return tab

    async def _reconcile(self) -> list[dict[str, Any]]:
        """Adopt the pages opened since the last call (by the page, or by a person), and
        forget the ones closed; the targets as the browser listed them."""
        assert self._connection is not None
        infos: list[dict[str, Any]] = (await self._connection.call("Target.getTargets"))[
            "targetInfos"
        ]
        pages = [info["targetId"] for info in infos if _is_page(info)]
        for tab_id, tab in list(self._tabs.items()):
            if tab.target_id not in pages:
                del self._tabs[tab_id]
        if self._active not in self._tabs:
            self._active = next(reversed(self._tabs), None)
        known = {tab.target_id for tab in self._tabs.values()}
        for target_id in pages:
            if target_id not in known:
                with contextlib.suppress(ViewfinderError):  # closed while we looked
                    await self._adopt(target_id)
        return infos

    # -- the browser ------------------------------------------------------------------

    async def _started(self) -> None:
        if self._connection is not None and not self._connection.closed:
            return
        self._tabs.clear()
        self._active = None
        if self.cdp_url is None:
            env = self.display.env() if self.display is not None else None
            extra = ["--window-position=0,0"] if self.display is not None else []
            self.browser = await asyncio.to_thread(
                launch_chromium,
                headless=self.display is None,
                width=self.width,
                height=self.height,
                extra_args=extra,
                env=env,
                timeout=self.timeout,
            )
        target = self.cdp_url or (self.browser.ws_url if self.browser else "")
        self._connection = await connect(target, timeout=self.timeout)
        await self._reconcile()
        if self._tabs:
            shown = await shown_page(self._connection, timeout=self.timeout)
            self._active = next(
                (t.tab_id for t in self._tabs.values() if t.target_id == shown), self._active
            )
        if self.url is not None:
            if not self._tabs:
                await self._tab_member("new_tab", None)
            await self._tab(None).session.navigate(self.url, timeout=self.timeout)

    def close(self) -> None:
        """Detach from the tabs, and stop the browser when this toolset launched it."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        try:
            if loop.running:
                loop.run(self._shutdown())
        finally:
            loop.stop()
            if self.browser is not None:
                self.browser.stop()
                self.browser = None

    async def _shutdown(self) -> None:
        connection, self._connection = self._connection, None
        self._tabs.clear()
        if connection is not None:
            with contextlib.suppress(Exception):  # leaving anyway
                await connection.close()
        if self.browser is not None:
            await asyncio.to_thread(self.browser.stop)
            self.browser = None

    def __enter__(self) -> BrowserToolset:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _is_page(info: Mapping[str, Any]) -> bool:
    url = str(info.get("url", ""))
    return info.get("type") == "page" and not url.startswith(("devtools://", "chrome-extension:"))
