"""The browser toolset's members as registry tools (what MCP lists and calls): one
``browser_<member>`` tool each, run on a real Chromium in the session's context, files
kept inside the session's folder."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.browser.toolset import MEMBER_INPUTS
from viewfinder.browser.toolset.registered import CDP_URL_VALUE, TOOLSET_RESOURCE
from viewfinder.cdp import launch_chromium
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import ToolContext, tool_registry

PAGE = """<!doctype html><title>Upload</title>
<label>Email <input name="email"></label>
<label>Avatar <input type="file" name="avatar"></label>
<button onclick="window.log.push('send')">Send</button>
<script>window.log = [];
document.querySelector('[name=avatar]').onchange = e => window.log.push(e.target.files[0].name);
</script>"""


@pytest.fixture
def site() -> Iterator[str]:
    with serve_pages({"/": PAGE}) as base:
        yield base


def _ref(text: str, start: str) -> str:
    line = next(row for row in text.splitlines() if row.strip().startswith(start))
    found = re.search(r"\[(ref_\d+)\]", line)
    assert found, line
    return found.group(1)


def test_every_member_is_a_registered_tool_with_its_input_as_parameters() -> None:
    registry = tool_registry()
    for member, model in MEMBER_INPUTS.items():
        tool = registry[f"browser_{member}"]
        assert tool.plugin == "browser" and not tool.runs_code
        fields = {info.alias or name for name, info in model.model_fields.items()}
        schema = tool.input_schema()
        assert set(schema.get("properties", {})) == fields
        # every name a schema points at is in it (a union's discriminator mapping would
        # name $defs that a client inlining the $refs, as MCP's listing does, drops)
        text = json.dumps(schema)
        assert "discriminator" not in text
        for name in re.findall(r'"#/\$defs/(\w+)"', text):
            assert name in schema["$defs"], (member, name)
    assert registry["browser_read_page"].annotations == {
        "readOnlyHint": True,
        "openWorldHint": True,
    }


def test_registered_members_share_one_browser_per_session(
    site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIEWFINDER_CDP_URL", raising=False)
    registry = tool_registry()
    inside = tmp_path / "avatar.png"
    inside.write_bytes(b"\x89PNG")
    outside = tmp_path.parent / "secret.txt"
    # as `viewfinder mcp --browser <DevTools URL>` gives it: a browser to drive
    with (
        launch_chromium() as chromium,
        ToolContext(
            workdir=tmp_path, require_sandbox=True, values={CDP_URL_VALUE: chromium.ws_url}
        ) as context,
    ):
        went = registry["browser_navigate"].call({"url": f"{site}/"}, context)
        assert not went.is_error, went.text
        state = went.structured["browser_state"] if went.structured else {}
        assert state["tabs"][0]["title"] == "Upload" and "* tab_1: Upload" in went.text
        tree = registry["browser_read_page"].call({"filter": "interactive"}, context).text
        avatar = _ref(tree, 'button "Avatar"')
        refused = registry["browser_file_upload"].call(
            {"target": {"type": "ref", "ref": avatar}, "paths": [str(outside)]}, context
        )
        assert refused.is_error and refused.text.startswith("file_upload: paths: ")
        assert "outside this session's folder" in refused.text
        uploaded = registry["browser_file_upload"].call(
            {"target": {"type": "ref", "ref": avatar}, "paths": ["avatar.png"]}, context
        )
        assert not uploaded.is_error, uploaded.text
        send = registry["browser_left_click"].call(
            {"target": {"type": "ref", "ref": _ref(tree, 'button "Send"')}}, context
        )
        assert not send.is_error, send.text
        log = registry["browser_javascript_exec"].call(
            {"text": "JSON.stringify(window.log)"}, context
        )
        assert json.loads(log.text.split("\nTabs:")[0]) == ["avatar.png", "send"]
        shot = registry["browser_screenshot"].call({}, context)
        assert len(shot.images) == 1 and shot.images[0].width == 1280
        wrong = registry["browser_left_click"].call({"target": {"x": 1}}, context)
        assert wrong.is_error and wrong.error_kind == "input"


def test_a_sandboxed_host_without_a_browser_url_starts_no_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIEWFINDER_CDP_URL", raising=False)
    with ToolContext(workdir=tmp_path, require_sandbox=True) as context:
        result = tool_registry()["browser_navigate"].call({"url": "about:blank"}, context)
        assert result.is_error and "start the server with --browser <DevTools URL>" in result.text
        assert context.get_resource(TOOLSET_RESOURCE) is None


def test_a_library_session_launches_its_own_browser(
    site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIEWFINDER_CDP_URL", raising=False)
    with ToolContext() as context:
        went = tool_registry()["browser_navigate"].call({"url": f"{site}/"}, context)
        assert not went.is_error, went.text
        toolset = context.get_resource(TOOLSET_RESOURCE)
        assert toolset is not None
        launched = toolset.browser
        assert launched is not None and launched.running
    assert not launched.running  # closed with the session
