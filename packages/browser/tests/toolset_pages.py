"""Test pages for the browser toolset: a form that logs what happens to it.

Every click, change and key the page sees is pushed to ``window.log`` (and printed to
the console), so a test reads from the page itself what was clicked, and that
nothing else was.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import TypeAdapter

_LOGGER = """<script>
window.log = [];
function note(what) { window.log.push(what); console.log('page: ' + what); }
document.addEventListener('click', e => {
  if (e.target.dataset && e.target.dataset.name) note('click ' + e.target.dataset.name);
}, true);
document.addEventListener('auxclick', e => {
  if (e.target.dataset.name) note('auxclick ' + e.button + ' ' + e.target.dataset.name);
}, true);
document.addEventListener('contextmenu', e => {
  e.preventDefault();
  if (e.target.dataset.name) note('contextmenu ' + e.target.dataset.name);
}, true);
document.addEventListener('dblclick', e => {
  if (e.target.dataset.name) note('dblclick ' + e.target.dataset.name);
}, true);
document.addEventListener('change', e => note('change ' + (e.target.name || '?')), true);
document.addEventListener('keydown', e => note('key ' + e.key), true);
</script>"""

FORM = f"""<!doctype html><title>Sign up</title>
<style>body {{ margin: 0; font: 16px sans-serif; }} button {{ width: 160px; height: 40px; }}</style>
{_LOGGER}
<main><h1>Sign up</h1>
<p>Fill the form and press Create account. This paragraph is the main content of the
page, long enough to be the part a reader of the page text wants first.</p>
<label>Email <input name="email" data-name="email"></label>
<label>Name <input name="name" data-name="name"></label>
<label>Plan <select name="plan" data-name="plan">
  <option value="free">Free</option><option value="pro">Pro</option></select></label>
<label><input type="checkbox" name="agree" data-name="agree"> I agree</label>
<label>Avatar <input type="file" name="avatar" data-name="avatar"></label>
<button data-name="save" style="position:absolute; left:20px; top:300px">Save</button>
<button data-name="cancel" style="position:absolute; left:200px; top:300px">Cancel</button>
<button data-name="hidden-under" style="position:absolute; left:20px; top:360px">Covered</button>
<div data-name="cover" style="position:absolute; left:0; top:350px; width:400px; height:60px;
  background:#f00"></div>
<div id="block" data-name="block" style="position:absolute; left:440px; top:40px; width:100px;
  height:80px; background:rgb(0,128,255)"></div>
<button data-name="far" style="position:absolute; left:20px; top:2400px">Far away</button>
<a href="/two" data-name="next" style="position:absolute; left:20px; top:460px">Next page</a>
<a href="/two" target="_blank" data-name="popup"
  style="position:absolute; left:200px; top:460px">Open in a new tab</a>
</main>
<script>
document.querySelector('[name=avatar]').addEventListener('change', e =>
  note('file ' + Array.from(e.target.files).map(f => f.name).join(',')));
fetch('/data.json').then(r => r.text()).then(t => console.log('data ' + t));
fetch('/missing');
</script>"""

TWO = "<!doctype html><title>Two</title><h1>The second page</h1>"
PAGES = {"/": FORM, "/two": TWO, "/data.json": '{"ok": true}'}


def ref_of(text: str, line: str) -> str:
    """The ref on the line of ``text`` that starts (after its indent) with ``line``."""
    for row in text.splitlines():
        if row.strip().startswith(line):
            found = re.search(r"\[(ref_\d+)\]", row)
            assert found, row
            return found.group(1)
    raise AssertionError(f"no line starting {line!r} in:\n{text}")


def deep(value: Any) -> Any:
    """``value`` with every lazily validated iterable consumed (so it is validated)."""
    if isinstance(value, dict):
        return {key: deep(item) for key, item in value.items()}
    if isinstance(value, list | tuple) or hasattr(value, "__next__"):
        return [deep(item) for item in value]
    return value


@functools.cache
def _adapter(kind: str) -> TypeAdapter[Any]:
    # kept: an adapter's lazily validated iterables need it alive while they are read
    from anthropic.types.beta import BetaMessageParam, BetaToolResultBlockParam
    from anthropic.types.beta.beta_browser_tool_use_block import BetaBrowserToolUseBlock

    kinds: dict[str, Any] = {
        "result": BetaToolResultBlockParam,
        "message": BetaMessageParam,
        "tool_use": BetaBrowserToolUseBlock,
    }
    return TypeAdapter(kinds[kind])


def validate_result(result: dict[str, Any]) -> None:
    """Check a ``tool_result`` block, and the user message carrying it, with the SDK."""
    deep(_adapter("result").validate_python(result))
    deep(_adapter("message").validate_python({"role": "user", "content": [result]}))


def tool_use(name: str, arguments: dict[str, Any], number: int = 1) -> Any:
    """The member's ``tool_use`` block as the SDK parses it from a response."""
    block = {
        "type": "tool_use",
        "id": f"toolu_{number:04d}",
        "name": name,
        "toolset_name": "browser",
        "input": arguments,
    }
    return _adapter("tool_use").validate_python(block)


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(part["text"] for part in result["content"] if part["type"] == "text")


def state_of(result: dict[str, Any]) -> dict[str, Any]:
    states = [part for part in result["content"] if part["type"] == "browser_state"]
    assert len(states) == 1, result
    state: dict[str, Any] = states[0]
    return state
