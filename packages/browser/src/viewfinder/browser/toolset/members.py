"""The members that read a page or set its fields: page text, tree, find, forms, files.

Each takes the toolset, the tab and the validated input, and returns the result's
text (and images). Pointer, keyboard, tab and navigation members are in
:mod:`viewfinder.browser.toolset.moves`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from viewfinder.browser.toolset import actions
from viewfinder.browser.toolset.errors import MemberError
from viewfinder.browser.toolset.inputs import (
    FileUploadInput,
    FindInput,
    FormInputInput,
    GetPageTextInput,
    JavascriptExecInput,
    ReadConsoleInput,
    ReadNetworkInput,
    ReadPageInput,
    ScrollToInput,
)
from viewfinder.browser.toolset.page_text import (
    MAX_READ_CHARS,
    element_line,
    find_elements,
    read_page_text,
)
from viewfinder.browser.toolset.tab import Tab, source_ref
from viewfinder.cdp import JavaScriptError
from viewfinder.core import ViewfinderError
from viewfinder.core.result_budget import fit_text

if TYPE_CHECKING:
    from viewfinder.browser.toolset.executor import BrowserToolset

_PAGE_TEXT = """(() => {
  const main = document.querySelector('article, main, [role=main]');
  const from = main && main.innerText.trim().length > 200 ? main : document.body;
  return [document.title, location.href, from ? from.innerText : ''];
})()"""

_FORM_INPUT = """function(value) {
  const el = this, tag = (el.tagName || '').toLowerCase();
  const fire = () => {
    el.dispatchEvent(new Event('input', {bubbles: true}));
    el.dispatchEvent(new Event('change', {bubbles: true}));
  };
  if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
    const yes = [true, 'true', 'on', 'checked', 'yes', 1], no = [false, 'false', 'off',
      'unchecked', 'no', 0];
    if (!yes.includes(value) && !no.includes(value))
      return {error: 'a ' + el.type + ' takes true or false, not ' + JSON.stringify(value)};
    const want = yes.includes(value);
    if (el.checked !== want) el.click();  // the page sees the click, input and change
    return {done: el.type + (el.checked ? ' checked' : ' unchecked')};
  }
  if (tag === 'select') {
    const text = String(value), options = Array.from(el.options);
    const option = options.find(o => o.value === text) ||
      options.find(o => o.text.trim() === text) ||
      options.find(o => o.text.trim().toLowerCase() === text.toLowerCase());
    if (!option) return {error: 'no option ' + JSON.stringify(text) + '; the options are ' +
      options.map(o => JSON.stringify(o.text.trim())).join(', ')};
    el.value = option.value;
    fire();
    return {done: 'selected ' + JSON.stringify(option.text.trim())};
  }
  if (tag === 'input' && el.type === 'file') return {error: 'a file input: use file_upload'};
  if (tag === 'input' || tag === 'textarea') {
    const proto = tag === 'input' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
    // the prototype's setter, so that pages tracking the value (React) see the change
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, String(value));
    fire();
    return {done: 'set to ' + JSON.stringify(el.value)};
  }
  if (el.isContentEditable) {
    el.textContent = String(value);
    el.dispatchEvent(new Event('input', {bubbles: true}));
    return {done: 'set to ' + JSON.stringify(el.textContent)};
  }
  return {error: 'not a form field (<' + tag + '>): click it or type into it instead'};
}"""

_IS_FILE_INPUT = "function() { return this.tagName === 'INPUT' && this.type === 'file'; }"


async def read_page(ts: BrowserToolset, tab: Tab, inp: ReadPageInput) -> str:
    tree = await tab.read()
    root = None
    if inp.ref is not None:
        root = tree.find(source_ref(inp.ref))
        if root is None:
            raise MemberError("ref", f"{inp.ref!r} is not on tab {tab.tab_id}'s page now")
    text = read_page_text(tree, depth=inp.depth, filter=inp.filter, root=root)
    if tree.reason:
        text += f"\n[{tree.reason}]"
    return ts.fit(text)


async def find(ts: BrowserToolset, tab: Tab, inp: FindInput) -> str:
    found = find_elements(await tab.read(), inp.query)
    if not found:
        return f"no element matches {inp.query!r}; read_page shows what the page has"
    return "\n".join(element_line(element) for element in found)


async def get_page_text(ts: BrowserToolset, tab: Tab, inp: GetPageTextInput) -> str:
    title, url, text = await tab.session.evaluate(_PAGE_TEXT, timeout=ts.timeout)
    text, _ = fit_text(f"{title}\n{url}\n\n{text}", ts.budget.text_tokens, max_chars=MAX_READ_CHARS)
    return text


async def read_console(ts: BrowserToolset, tab: Tab, inp: ReadConsoleInput) -> str:
    lines = tab.take_console()
    return ts.fit("\n".join(lines)) if lines else "(no console entries since the last read)"


async def read_network(ts: BrowserToolset, tab: Tab, inp: ReadNetworkInput) -> str:
    lines = tab.take_network()
    return ts.fit("\n".join(lines)) if lines else "(no requests since the last read)"


async def javascript_exec(ts: BrowserToolset, tab: Tab, inp: JavascriptExecInput) -> str:
    try:
        answer = await tab.session.call(
            "Runtime.evaluate",
            {
                "expression": inp.text,
                "returnByValue": True,
                "awaitPromise": True,
                "replMode": True,  # top-level await; let and const may be declared again
                "userGesture": True,
            },
            timeout=ts.timeout,
        )
    except JavaScriptError as exc:
        raise MemberError("text", str(exc)) from None
    if "exceptionDetails" in answer:
        details = answer["exceptionDetails"]
        text = (details.get("exception") or {}).get("description") or details.get("text")
        raise MemberError("text", f"the script threw: {text}")
    remote = answer.get("result", {})
    if remote.get("type") == "undefined":
        return "undefined"
    if "value" in remote:
        value: Any = remote["value"]
        return ts.fit(value if isinstance(value, str) else json.dumps(value, default=str))
    return str(remote.get("unserializableValue") or remote.get("description") or remote)


async def form_input(ts: BrowserToolset, tab: Tab, inp: FormInputInput) -> str:
    found, key = await actions.element(tab, inp.target.ref, "target.ref")
    outcome = await actions.call_on(tab, key, _FORM_INPUT, inp.value)
    if not isinstance(outcome, dict) or "error" in outcome:
        error = outcome.get("error") if isinstance(outcome, dict) else outcome
        raise MemberError("value", f"{inp.target.ref} ({element_line(found)}): {error}")
    return f"{inp.target.ref} ({element_line(found)}): {outcome['done']}"


async def file_upload(ts: BrowserToolset, tab: Tab, inp: FileUploadInput) -> str:
    if inp.document_ids:
        raise MemberError(
            "document_ids", "this browser reads files from paths on its machine; pass paths"
        )
    if not inp.paths:
        raise MemberError("paths", "give at least one file path")
    files = []
    for given in inp.paths:
        try:
            path = ts.resolve_path(given)
        except ViewfinderError as exc:  # a host that keeps tools inside a folder
            raise MemberError("paths", str(exc)) from None
        if not path.is_file():
            raise MemberError("paths", f"{given} is not a file")
        files.append(str(path))
    found, key = await actions.element(tab, inp.target.ref, "target.ref")
    if not await actions.call_on(tab, key, _IS_FILE_INPUT):
        raise MemberError(
            "target.ref", f"{inp.target.ref} ({element_line(found)}) is not a file input"
        )
    async with actions.node_object(tab, key) as (session, object_id, _):
        await session.call("DOM.setFileInputFiles", {"files": files, "objectId": object_id})
    names = ", ".join(path.rsplit("/", 1)[-1] for path in files)
    return f"{inp.target.ref} ({element_line(found)}) holds {names}"


async def scroll_to(ts: BrowserToolset, tab: Tab, inp: ScrollToInput) -> str:
    _, key = await actions.element(tab, inp.target.ref, "target.ref")
    await actions.scroll_into_view(tab, key)
    found, _ = await actions.element(tab, inp.target.ref, "target.ref")
    box = found.box
    where = f" at {box.x},{box.y} {box.width}x{box.height}" if box else ""
    return f"{inp.target.ref} ({element_line(found)}) is in view{where}"
