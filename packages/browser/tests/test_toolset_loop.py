"""The loop docs/browser.md shows for ``browser_toolset_20260801``, run as written
against a scripted model: the SDK's own client types parse each response, and every
request the loop sends (its ``tools`` entry, each user message of ``tool_result``
blocks) is checked with the SDK's types, offline, on a real Chromium."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from viewfinder.cdp.testing import serve_pages

sys.path.insert(0, str(Path(__file__).parent))
from toolset_pages import deep, validate_result

DOC = Path(__file__).resolve().parents[3] / "docs" / "browser.md"
FORM = """<!doctype html><title>Sign up</title><form action="/done">
<label>Email <input name="email"></label>
<label>Avatar <input type="file" name="avatar"></label>
<button>Create account</button></form>"""
DONE = """<!doctype html><title>Done</title><p id="got"></p><script>
document.getElementById('got').textContent = decodeURIComponent(location.search);</script>"""


def documented_loop() -> str:
    text = DOC.read_text()
    start = text.index("<!-- toolset-loop -->")
    block = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert block, "the loop's code block"
    return block.group(1)


class ScriptedModel:
    """``client.beta.messages.create`` answering as a model would, from what it read."""

    def __init__(self, base: str, upload: str) -> None:
        self.base, self.upload = base, upload
        self.requests: list[dict[str, Any]] = []
        self.beta = self
        self.messages = self

    def create(self, **request: Any) -> Any:
        from anthropic.types.beta import BetaMessage, BetaToolUnionParam

        self.requests.append(request)
        for tool in request["tools"]:
            deep(TypeAdapter(BetaToolUnionParam).validate_python(tool))
        last = request["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list):
            for result in last["content"]:
                validate_result(result)
        seen = "\n".join(
            part["text"]
            for message in request["messages"]
            if message["role"] == "user" and isinstance(message["content"], list)
            for result in message["content"]
            for part in result["content"]
            if part["type"] == "text"
        )
        turn = len(self.requests)
        calls: list[tuple[str, dict[str, Any]]] = []
        if turn == 1:
            calls = [("navigate", {"url": self.base + "/"}), ("find", {"query": "email"})]
        elif turn == 2:
            refs = dict(re.findall(r'^\s*\w+ "([^"]*)" \[(ref_\d+)\]', seen, re.M))
            calls = [("read_page", {"filter": "interactive"})]
            calls.append(
                ("form_input", {"target": {"type": "ref", "ref": refs["Email"]}, "value": "ada"})
            )
        elif turn == 3:
            refs = dict(re.findall(r'^\s*\w+ "([^"]*)" \[(ref_\d+)\]', seen, re.M))
            avatar, create = refs["Avatar"], refs["Create account"]
            calls = [
                ("file_upload", {"target": {"type": "ref", "ref": avatar}, "paths": [self.upload]}),
                ("left_click", {"target": {"type": "ref", "ref": create}}),
                ("get_page_text", {}),
            ]
        content: list[dict[str, Any]] = [
            {
                "type": "tool_use",
                "id": f"toolu_{turn}_{n}",
                "name": name,
                "toolset_name": "browser",
                "input": arguments,
            }
            for n, (name, arguments) in enumerate(calls)
        ] or [{"type": "text", "text": "Signed up."}]
        return BetaMessage.model_validate(
            {
                "id": f"msg_{turn}",
                "type": "message",
                "role": "assistant",
                "model": request["model"],
                "content": content,
                "stop_reason": "tool_use" if calls else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        )


@pytest.fixture
def site() -> Iterator[str]:
    with serve_pages({"/": FORM, "/done": DONE}) as base:
        yield base


def test_the_documented_loop_runs_a_sign_up(
    site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anthropic

    upload = tmp_path / "ada.png"
    upload.write_bytes(b"\x89PNG")
    model = ScriptedModel(site, str(upload))
    monkeypatch.setattr(anthropic, "Anthropic", lambda: model)
    scope: dict[str, Any] = {}
    exec(compile(documented_loop(), str(DOC), "exec"), scope)  # the doc's code, as written
    assert len(model.requests) == 4
    assert model.requests[0]["tools"] == [
        {"type": "browser_toolset_20260801", "configs": {"file_upload": {"enabled": True}}}
    ]
    final = scope["messages"][-2]["content"]  # the last tool results, before "Signed up."
    page_text = final[-1]["content"][0]["text"]
    assert "?email=ada&avatar=ada.png" in page_text
    assert scope["messages"][-1]["content"][0].text == "Signed up."
