"""The browser toolset's members on a real headless Chromium, each ``tool_use`` block
parsed and each ``tool_result`` checked with the anthropic SDK's own types.

The test page logs every click, change and key it sees (``window.log``), so what was
clicked is read from the page, and that nothing else was.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from viewfinder.browser.toolset import ALL_MEMBERS, MEMBER_INPUTS, BrowserToolset
from viewfinder.cdp.testing import serve_pages

sys.path.insert(0, str(Path(__file__).parent))
from toolset_pages import PAGES, ref_of, state_of, text_of, tool_use, validate_result

_ids = itertools.count(1)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_pages(PAGES) as base:
        yield base


@pytest.fixture(scope="module")
def shared(site: str) -> Iterator[BrowserToolset]:
    with BrowserToolset(site + "/", width=800, height=600, configs=ALL_MEMBERS) as browser:
        yield browser


@pytest.fixture
def browser(shared: BrowserToolset, site: str) -> BrowserToolset:
    """The shared toolset with one tab on a fresh form, its logs read."""
    state = state_of(call(shared, "list_tabs"))
    for tab in state["tabs"][1:]:
        call(shared, "close_tab", tab_id=tab["tab_id"])
    call(shared, "switch_tab", tab_id=state["tabs"][0]["tab_id"])
    call(shared, "navigate", url=site + "/")
    call(shared, "read_console")
    call(shared, "read_network")
    return shared


def call(browser: BrowserToolset, name: str, **arguments: Any) -> dict[str, Any]:
    """Run member ``name`` as a loop would: an SDK block in, a checked result out."""
    block = tool_use(name, arguments, next(_ids))
    result = browser.run(block)
    validate_result(result)
    assert result["tool_use_id"] == block.id and result["toolset_name"] == "browser"
    return result


def ok(browser: BrowserToolset, name: str, **arguments: Any) -> str:
    result = call(browser, name, **arguments)
    assert not result.get("is_error"), text_of(result)
    return text_of(result)


def page_log(browser: BrowserToolset) -> list[str]:
    return list(json.loads(ok(browser, "javascript_exec", text="JSON.stringify(window.log)")))


def clicks(browser: BrowserToolset) -> list[str]:
    return [entry for entry in page_log(browser) if not entry.startswith(("key ", "change "))]


def test_form_fields_select_and_checkbox_are_set_by_ref(browser: BrowserToolset) -> None:
    tree = ok(browser, "read_page", filter="interactive")
    ok(
        browser,
        "form_input",
        target={"type": "ref", "ref": ref_of(tree, 'textbox "Email"')},
        value="ada@example.org",
    )
    ok(
        browser,
        "form_input",
        target={"type": "ref", "ref": ref_of(tree, 'combobox "Plan"')},
        value="Pro",
    )
    said = ok(
        browser, "form_input", target={"type": "ref", "ref": ref_of(tree, "checkbox")}, value=True
    )
    assert "checked" in said
    values = ok(
        browser,
        "javascript_exec",
        text="[document.forms.length, "
        "document.querySelector('[name=email]').value, "
        "document.querySelector('[name=plan]').value, "
        "document.querySelector('[name=agree]').checked].join('|')",
    )
    assert values == "0|ada@example.org|pro|true"
    assert page_log(browser) == ["change email", "change plan", "click agree", "change agree"]
    # the tree now says what the fields hold
    assert 'value="ada@example.org"' in ok(browser, "read_page", filter="interactive")
    wrong = call(
        browser, "form_input", target={"type": "ref", "ref": ref_of(tree, "combobox")}, value="Gold"
    )
    assert wrong["is_error"] and text_of(wrong).startswith("form_input: value: ")
    assert '"Free", "Pro"' in text_of(wrong)


def test_a_click_by_ref_lands_on_the_named_element_and_nothing_else(
    browser: BrowserToolset,
) -> None:
    found = ok(browser, "find", query="cancel button")
    assert found.splitlines()[0].startswith('button "Cancel"')
    said = ok(
        browser, "left_click", target={"type": "ref", "ref": ref_of(found, 'button "Cancel"')}
    )
    assert 'button "Cancel"' in said
    assert clicks(browser) == ["click cancel"]
    # far below the viewport: scrolled into view, then clicked
    far = ref_of(ok(browser, "read_page", filter="all"), 'button "Far away"')
    ok(browser, "left_click", target={"type": "ref", "ref": far})
    assert clicks(browser) == ["click cancel", "click far"]


def test_a_covered_element_is_not_clicked_and_the_result_says_what_covers_it(
    browser: BrowserToolset,
) -> None:
    covered = ref_of(ok(browser, "read_page"), 'button "Covered"')
    result = call(browser, "left_click", target={"type": "ref", "ref": covered})
    assert result["is_error"]
    assert text_of(result).startswith("left_click: target.ref: ")
    assert "covered" in text_of(result) and 'data-name="cover"' in text_of(result)
    assert clicks(browser) == []


def test_clicks_keys_and_the_pointer_at_coordinates(browser: BrowserToolset) -> None:
    # the Save button's box: left 20, top 300, 160 x 40
    at = {"type": "coordinate", "x": 100, "y": 320}
    ok(browser, "left_click", target=at)
    ok(browser, "double_click", target=at)
    ok(browser, "triple_click", target=at)
    ok(browser, "right_click", target=at)
    ok(browser, "middle_click", target=at)
    assert clicks(browser) == [
        "click save",
        *["click save"] * 2,
        "dblclick save",
        "click save",
        "click save",
        "dblclick save",
        "click save",
        "contextmenu save",
        "auxclick 2 save",
        "auxclick 1 save",
    ]
    email = ref_of(ok(browser, "find", query="email"), 'textbox "Email"')
    ok(browser, "left_click", target={"type": "ref", "ref": email})
    ok(browser, "type", text="ada")
    ok(browser, "key", text="BackSpace", repeat=2)
    ok(browser, "type", text="lan")
    ok(browser, "hold_key", text="shift", duration=0.1)
    assert ok(browser, "javascript_exec", text="document.activeElement.value") == "alan"
    ok(browser, "key", text="ctrl+a Delete")
    assert ok(browser, "javascript_exec", text="document.activeElement.value") == ""
    log = page_log(browser)
    assert log.count("key Backspace") == 2 and "key Shift" in log and "key Delete" in log


def test_hover_drag_mouse_buttons_scroll_and_wait(browser: BrowserToolset) -> None:
    ok(
        browser,
        "javascript_exec",
        text="""
      window.moves = [];
      for (const kind of ['mouseover', 'mousedown', 'mouseup'])
        document.addEventListener(kind, e => window.moves.push(
          kind + ' ' + (e.target.dataset.name || e.target.tagName) + ' ' + e.clientX + ',' +
          e.clientY));
      1""",
    )
    ok(browser, "hover", target={"type": "coordinate", "x": 490, "y": 80})
    ok(browser, "mouse_move", target={"type": "coordinate", "x": 100, "y": 320})
    ok(browser, "left_mouse_down", target={"type": "coordinate", "x": 450, "y": 50})
    ok(browser, "left_mouse_up", target={"type": "coordinate", "x": 530, "y": 110})
    ok(
        browser,
        "left_click_drag",
        **{
            "from": {"type": "coordinate", "x": 445, "y": 45},
            "target": {"type": "coordinate", "x": 535, "y": 115},
        },
    )
    moves = ok(browser, "javascript_exec", text="window.moves.join(';')").split(";")
    assert moves[0] == "mouseover block 490,80" and "mouseover save 100,320" in moves
    downs = [move for move in moves if move.startswith(("mousedown", "mouseup"))]
    assert downs == [
        "mousedown block 450,50",
        "mouseup block 530,110",
        "mousedown block 445,45",
        "mouseup block 535,115",
    ]
    ok(
        browser,
        "scroll",
        target={"type": "coordinate", "x": 300, "y": 300},
        scroll_direction="down",
        scroll_amount=5,
    )
    ok(browser, "wait", duration=0.3)
    assert int(ok(browser, "javascript_exec", text="scrollY")) > 0
    far = ref_of(ok(browser, "read_page", filter="all"), 'button "Far away"')
    assert "is in view" in ok(browser, "scroll_to", target={"type": "ref", "ref": far})
    assert int(ok(browser, "javascript_exec", text="scrollY")) > 1500
    # a press and release on the block is a click on it, twice; nothing else was clicked
    assert clicks(browser) == ["click block", "click block"]


def test_tabs_opened_switched_and_closed(browser: BrowserToolset, site: str) -> None:
    opened = call(browser, "new_tab")
    state = state_of(opened)
    new_id = state["state_changes"][0]["tab_id"]
    assert state["state_changes"] == [{"type": "tab_opened", "tab_id": new_id}]
    assert [tab["active"] for tab in state["tabs"]] == [False, True]
    ok(browser, "navigate", url=site + "/two")
    listed = ok(browser, "list_tabs")
    assert f"{new_id} (active): 'Two'" in listed and "'Sign up'" in listed
    first = state["tabs"][0]["tab_id"]
    ok(browser, "switch_tab", tab_id=first)
    # a tab the page opens is reported by the call that opened it
    popup = ref_of(ok(browser, "find", query="open in a new tab link"), 'link "Open in a new tab"')
    clicked = call(browser, "left_click", target={"type": "ref", "ref": popup})
    changes = state_of(clicked).get("state_changes", [])
    assert len(changes) == 1 and changes[0]["type"] == "tab_opened"
    assert len(state_of(clicked)["tabs"]) == 3
    ok(browser, "close_tab", tab_id=new_id)
    ok(browser, "close_tab", tab_id=changes[0]["tab_id"])
    tabs = state_of(call(browser, "list_tabs"))["tabs"]
    assert [(tab["tab_id"], tab["active"]) for tab in tabs] == [(first, True)]
    missing = call(browser, "switch_tab", tab_id=new_id)
    assert missing["is_error"] and text_of(missing).startswith("switch_tab: tab_id: no tab")
    assert "browser_state" not in [part["type"] for part in missing["content"]]


def test_back_forward_and_reload(browser: BrowserToolset, site: str) -> None:
    ok(browser, "new_tab")  # a history of its own: about:blank, the form, the second page
    ok(browser, "navigate", url=site + "/")
    link = ref_of(ok(browser, "find", query="next page"), 'link "Next page"')
    ok(browser, "left_click", target={"type": "ref", "ref": link})  # waits for the load
    assert ok(browser, "get_page_text").startswith("Two\n" + site + "/two")
    assert ok(browser, "navigate", url="back").endswith("(Sign up)")
    assert ok(browser, "navigate", url="forward").endswith("(Two)")
    ok(browser, "javascript_exec", text="window.mark = 1")
    ok(browser, "navigate", url="reload")
    assert ok(browser, "javascript_exec", text="typeof window.mark") == "undefined"
    ok(browser, "navigate", url="back")
    assert ok(browser, "navigate", url="back").startswith("tab tab_")
    first = call(browser, "navigate", url="back")
    assert first.get("is_error") and text_of(first) == (
        "navigate: url: there is no page to go back to"
    )


def test_a_file_upload_sets_the_file_input(browser: BrowserToolset, tmp_path: Path) -> None:
    upload = tmp_path / "avatar.txt"
    upload.write_text("hello")
    tree = ok(browser, "read_page", filter="interactive")
    avatar = ref_of(tree, 'button "Avatar"')
    ok(browser, "file_upload", target={"type": "ref", "ref": avatar}, paths=[str(upload)])
    assert "file avatar.txt" in page_log(browser)
    staged = call(
        browser, "file_upload", target={"type": "ref", "ref": avatar}, document_ids=["doc_1"]
    )
    assert staged["is_error"] and text_of(staged).startswith("file_upload: document_ids: ")
    email = ref_of(tree, 'textbox "Email"')
    wrong = call(browser, "file_upload", target={"type": "ref", "ref": email}, paths=[str(upload)])
    assert text_of(wrong).startswith("file_upload: target.ref: ") and "not a file input" in text_of(
        wrong
    )


def test_screenshot_and_zoom_show_the_pages_pixels(browser: BrowserToolset) -> None:
    result = call(browser, "screenshot")
    images = [part for part in result["content"] if part["type"] == "image"]
    assert len(images) == 1
    shot = Image.open(io.BytesIO(base64.b64decode(images[0]["source"]["data"]))).convert("RGB")
    assert shot.size == (800, 600)
    assert shot.getpixel((490, 80)) == (0, 128, 255) and shot.getpixel((600, 80)) != (0, 128, 255)
    zoomed = call(browser, "zoom", region=[440, 40, 540, 120])
    image = next(part for part in zoomed["content"] if part["type"] == "image")
    big = Image.open(io.BytesIO(base64.b64decode(image["source"]["data"]))).convert("RGB")
    assert big.size == (400, 320)  # four times the region
    assert big.getpixel((200, 160)) == (0, 128, 255)
    bad = call(browser, "zoom", region=[10, 10, 5, 5])
    assert bad["is_error"] and text_of(bad).startswith("zoom: region: ")


def test_read_page_depth_filter_subtree_and_page_text(browser: BrowserToolset) -> None:
    whole = ok(browser, "read_page")
    assert whole.splitlines()[0].startswith('root web area "Sign up" [ref_')
    assert 'button "Far away"' not in whole  # off the viewport
    assert 'button "Far away"' in ok(browser, "read_page", filter="all")
    shallow = ok(browser, "read_page", depth=1)
    assert len(shallow.splitlines()) == 1
    main = ref_of(whole, "main")
    part = ok(browser, "read_page", ref=main)
    assert part.splitlines()[0].startswith("main [") and 'heading "Sign up"' in part
    text = ok(browser, "get_page_text")
    assert text.startswith("Sign up\n") and "main content" in text
    ok(
        browser,
        "javascript_exec",
        text="for (let i = 0; i < 3000; i++) {"
        " const b = document.createElement('button'); b.textContent = 'button number ' + i;"
        " document.body.append(b); } 1",
    )
    capped = ok(browser, "read_page", filter="all")
    assert len(capped) <= 50_000 and capped.endswith("or a smaller depth]")


def test_errors_name_the_member_and_the_field(browser: BrowserToolset) -> None:
    result = browser.run(
        {
            "type": "tool_use",
            "id": "t1",
            "name": "left_click",
            "toolset_name": "browser",
            "input": {"target": {"type": "ref"}},
        }
    )
    validate_result(result)
    assert (
        result["is_error"]
        and text_of(result) == "left_click: invalid input: target.ref.ref: is required"
    )
    stale = call(browser, "left_click", target={"type": "ref", "ref": "ref_99999"})
    assert text_of(stale).startswith("left_click: target.ref: 'ref_99999' is not a reference")
    thrown = call(browser, "javascript_exec", text="null.x")
    assert text_of(thrown).startswith("javascript_exec: text: the script threw: TypeError")
    unknown = browser.run({"type": "tool_use", "id": "t2", "name": "teleport", "input": {}})
    assert unknown["is_error"] and text_of(unknown).startswith("teleport: no such member")
    assert ok(browser, "javascript_exec", text="await Promise.resolve(6 * 7)") == "42"


def test_every_member_is_run_by_a_test_here() -> None:
    # each member of the family meets a real page in one of the tests above
    source = Path(__file__).read_text()
    used = set(re.findall(r'(?:ok|call)\(\s*(?:shared|browser),\s*"(\w+)"', source))
    assert set(MEMBER_INPUTS) - used == set()
