"""browser_execute as a model tool: definitions, running tool calls, reply messages."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from viewfinder.browser import (
    TOOL_NAME,
    BrowserInputError,
    BrowserSession,
    ExecuteResult,
    anthropic_tool,
    anthropic_tool_result,
    arun_tool_call,
    input_schema,
    openai_function_call_output,
    openai_responses_tool,
    openai_tool,
    openai_tool_messages,
    run_tool_call,
    tool_result_message,
)
from viewfinder.core import Screenshot


def test_the_input_schema() -> None:
    schema = input_schema()
    assert schema == {
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "minLength": 1,
                "description": schema["properties"]["code"]["description"],
            },
            "timeout": {
                "type": "number",
                "minimum": 1.0,
                "maximum": 600.0,
                "default": 60.0,
                "description": schema["properties"]["timeout"]["description"],
            },
            "description": {
                "type": "string",
                "description": schema["properties"]["description"]["description"],
            },
        },
        "required": ["code"],
        "additionalProperties": False,
    }
    json.dumps(schema)  # plain JSON data
    schema["properties"].clear()
    assert input_schema()["properties"], "callers get a copy"


def test_tool_definitions_for_each_api() -> None:
    anthropic = anthropic_tool()
    assert set(anthropic) == {"name", "description", "input_schema"}
    assert anthropic["name"] == TOOL_NAME == "browser_execute"
    assert "page.screenshot" in anthropic["description"]
    assert openai_tool() == {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": anthropic["description"],
            "parameters": input_schema(),
        },
    }
    assert openai_responses_tool() == {
        "type": "function",
        "name": TOOL_NAME,
        "description": anthropic["description"],
        "parameters": input_schema(),
    }


@pytest.fixture
def two_shots(session: BrowserSession) -> ExecuteResult:
    """A real tool call that prints, returns and takes a png and a jpeg."""
    result = run_tool_call(
        session,
        {
            "code": "print('hi')\nawait page.screenshot()\n"
            "await page.screenshot(format='jpeg')\nreturn 1",
            "description": "look",
        },
    )
    assert result.ok, result.output
    return result


def test_anthropic_tool_result_carries_text_and_image_blocks(two_shots: ExecuteResult) -> None:
    message = anthropic_tool_result(two_shots, "toolu_01")
    assert message["role"] == "user"
    (block,) = message["content"]
    assert block["type"] == "tool_result"
    assert block["tool_use_id"] == "toolu_01"
    assert "is_error" not in block
    text, png, jpeg = block["content"]
    assert text == {"type": "text", "text": two_shots.output}
    assert text["text"] == "hi\nReturned: 1\n[2 screenshots attached]"
    assert png == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": two_shots.screenshots[0].b64(),
        },
    }
    assert jpeg["source"]["media_type"] == "image/jpeg"
    assert jpeg["source"]["data"] == two_shots.screenshots[1].b64()
    assert tool_result_message(two_shots, "toolu_01") == [message]


def test_openai_replies_carry_the_images(two_shots: ExecuteResult) -> None:
    item = openai_function_call_output(two_shots, "call_9")
    assert item["type"] == "function_call_output" and item["call_id"] == "call_9"
    text, png, jpeg = item["output"]
    assert text == {"type": "input_text", "text": two_shots.output}
    assert png == {
        "type": "input_image",
        "image_url": "data:image/png;base64," + two_shots.screenshots[0].b64(),
        "detail": "auto",
    }
    assert jpeg["image_url"].startswith("data:image/jpeg;base64,/9j/")
    assert tool_result_message(two_shots, "call_9", "openai-responses") == [item]

    tool, user = openai_tool_messages(two_shots, "call_9")
    assert tool == {"role": "tool", "tool_call_id": "call_9", "content": two_shots.output}
    assert user["role"] == "user"
    assert [part["type"] for part in user["content"]] == ["text", "image_url", "image_url"]
    assert user["content"][1]["image_url"]["url"] == two_shots.screenshots[0].data_url()
    assert tool_result_message(two_shots, "call_9", "openai") == [tool, user]


def test_without_screenshots_openai_chat_gets_only_the_tool_message(
    session: BrowserSession,
) -> None:
    result = run_tool_call(session, json.dumps({"code": "return 2"}))  # OpenAI sends JSON text
    assert result.result == 2
    assert openai_tool_messages(result, "c") == [
        {"role": "tool", "tool_call_id": "c", "content": "Returned: 2\n[no screenshots attached]"}
    ]


def test_an_error_result_is_marked_as_one(session: BrowserSession) -> None:
    result = run_tool_call(session, {"code": "1/0"})
    block = anthropic_tool_result(result, "t")["content"][0]
    assert block["is_error"] is True
    assert "ZeroDivisionError" in block["content"][0]["text"]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"code": "return 1", "timeout": 0}, "timeout: Input should be greater than or equal to 1"),
        (
            {"code": "return 1", "timeout": 601},
            "timeout: Input should be less than or equal to 600",
        ),
        ({"code": ""}, "code: String should have at least 1 character"),
        ({"timeout": 5}, "code: Field required"),
        ({"code": "x", "url": "http://a"}, "url: Extra inputs are not permitted"),
        ("{not json", "invalid browser_execute arguments"),
    ],
)
def test_bad_tool_arguments_come_back_as_an_error_result(
    session: BrowserSession, arguments: Any, problem: str
) -> None:
    result = run_tool_call(session, arguments)
    assert result.error is not None
    assert result.error.kind == "input"
    assert problem in result.error.message
    assert result.output.endswith("[no screenshots attached]")
    assert anthropic_tool_result(result, "t")["content"][0]["is_error"] is True


async def test_an_unreachable_browser_comes_back_as_an_error_result(free_port: int) -> None:
    async with BrowserSession(cdp_url=f"127.0.0.1:{free_port}") as session:
        result = await arun_tool_call(session, {"code": "return 1"})
    assert result.error is not None
    assert result.error.kind == "browser"
    assert result.error.type == "CDPConnectError"
    assert f"127.0.0.1:{free_port}" in result.output


def test_an_unknown_reply_format_is_refused(two_shots: ExecuteResult) -> None:
    with pytest.raises(BrowserInputError, match="unknown reply format 'gemini'"):
        tool_result_message(two_shots, "x", "gemini")  # type: ignore[arg-type]


def test_a_result_round_trips_through_json(two_shots: ExecuteResult) -> None:
    again = ExecuteResult.model_validate_json(two_shots.model_dump_json())
    assert again == two_shots
    summary = two_shots.summary()
    assert summary["screenshots"][0]["format"] == "png"
    assert "data" not in summary["screenshots"][0]
    json.dumps(summary)


def test_a_screenshot_larger_than_models_take_is_scaled_with_its_scale_in_the_reply(
    session: BrowserSession, layout: Any
) -> None:
    # a tall page: its full-page capture is 320 x 6000, past Anthropic's 1568 px long edge
    result = session.execute("""
await page.evaluate('''(() => {
  document.body.style.height = "6000px";
  const mark = document.createElement("div");
  mark.style.cssText = "position:absolute; left:0; top:5000px; width:320px; height:1000px;"
    + "background:rgb(0,0,255)";
  document.body.appendChild(mark);
})()''')
await page.screenshot(full_page=True)
await page.screenshot()
""")
    assert result.ok, result.output
    tall, viewport = result.screenshots
    assert tall.size == (320, 6000) and viewport.size == layout.viewport

    big, small = result.attachments
    assert (big.width, big.height) == (84, 1568)  # the long edge, aspect kept
    assert big.scale == pytest.approx(1568 / 6000, rel=0.01)
    assert (small.width, small.height, small.scale) == (320, 240, 1.0)
    # pixels moved with the scale: the blue band at page y 5000-6000 is near the bottom
    image = Screenshot.from_bytes(base64.b64decode(big.data), source="test")
    assert image.pixel(40, round(5500 * big.scale)) == (0, 0, 255)
    assert image.pixel(40, round(2000 * big.scale)) == (255, 255, 255)

    (block,) = anthropic_tool_result(result, "toolu_1")["content"]
    text = block["content"][0]["text"]
    assert "Screenshot 1 is scaled to 84x1568" in text
    assert "Screenshot 2 is scaled" not in text
    assert result.output in text  # the output itself is unchanged

    # OpenAI's limits are another row of the same table: short side 768, 2048 square
    output = openai_function_call_output(result, "call_1")["output"]
    sizes = [
        Screenshot.from_bytes(base64.b64decode(part["image_url"].split(",")[1]), source="t").size
        for part in output[1:]
    ]
    assert sizes == [(109, 2048), (320, 240)]
    assert "Screenshot 1 is scaled to 109x2048" in output[0]["text"]
