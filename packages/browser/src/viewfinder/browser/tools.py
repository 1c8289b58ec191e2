"""``browser_execute`` as a model tool: its definition, running a call, the reply.

The definition is built from :class:`BrowserExecuteInput`, so the schema a model sees
and the validation of what it sends are one thing. A reply carries the text output
and every screenshot as an image block, in the shape each API expects:

- Anthropic Messages: a user message holding a ``tool_result`` block whose content is
  a text block followed by ``image`` blocks;
- OpenAI Responses: a ``function_call_output`` item whose output lists ``input_text``
  and ``input_image`` parts;
- OpenAI Chat Completions: a ``tool`` message takes only text, so the text goes there
  and the images follow in a user message of ``image_url`` parts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from viewfinder.browser.errors import BrowserInputError
from viewfinder.browser.result import ExecuteError, ExecuteResult, count_line
from viewfinder.browser.session import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT, BrowserSession
from viewfinder.core import ViewfinderError

TOOL_NAME = "browser_execute"
TOOL_DESCRIPTION = (
    "Run an async Python snippet against a live browser page and get back what it "
    "printed, its return value and every screenshot it took, as images you can see. "
    "In scope: `page` (await page.goto(url), page.evaluate(js), page.click(selector or "
    "x=, y=), page.type(text, selector), page.press(key), page.wait_for(js), "
    "page.title(), page.screenshot(format='png'|'jpeg'|'webp', full_page=False), "
    "page.on_dialog(False|True|'answer'|fn): dialogs are accepted unless you choose), "
    "`session` (the raw CDP session: await session.call(method, params)), `state` (a "
    "dict kept between calls) and asyncio. Use await at top level; `return` a value or "
    "end with an expression. The page persists between calls. Print what you need to "
    "read; take screenshots to see."
)
ReplyFormat = Literal["anthropic", "openai", "openai-responses"]


class BrowserExecuteInput(BaseModel):
    """The arguments of a ``browser_execute`` tool call."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(
        min_length=1,
        description="Async Python to run; `page`, `session`, `state` and asyncio are in scope.",
    )
    timeout: float = Field(
        default=DEFAULT_TIMEOUT,
        ge=MIN_TIMEOUT,
        le=MAX_TIMEOUT,
        description="Seconds the snippet may run (1 to 600, default 60).",
    )
    description: str | None = Field(
        default=None, description="A few words on what the snippet does, for the log."
    )


@cache
def _input_schema() -> dict[str, Any]:
    schema = BrowserExecuteInput.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
    description = schema["properties"]["description"]
    description.pop("anyOf", None)
    description.pop("default", None)
    description["type"] = "string"
    return schema


def input_schema() -> dict[str, Any]:
    """The JSON schema of the tool's input (``code``, ``timeout``, ``description``)."""
    return copy.deepcopy(_input_schema())


def anthropic_tool() -> dict[str, Any]:
    """The tool definition for the Anthropic Messages API (``tools=[...]``)."""
    return {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": input_schema()}


def openai_tool() -> dict[str, Any]:
    """The tool definition for OpenAI Chat Completions (``tools=[...]``)."""
    return {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": TOOL_DESCRIPTION,
            "parameters": input_schema(),
        },
    }


def openai_responses_tool() -> dict[str, Any]:
    """The tool definition for the OpenAI Responses API (``tools=[...]``)."""
    return {
        "type": "function",
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "parameters": input_schema(),
    }


# -- running a tool call ---------------------------------------------------------------


def _parse(arguments: Mapping[str, Any] | str) -> BrowserExecuteInput:
    if isinstance(arguments, str):  # OpenAI sends the arguments as JSON text
        return BrowserExecuteInput.model_validate_json(arguments)
    return BrowserExecuteInput.model_validate(arguments)


def run_tool_call(session: BrowserSession, arguments: Mapping[str, Any] | str) -> ExecuteResult:
    """Run one ``browser_execute`` tool call on ``session``.

    Whatever goes wrong comes back as an error result for the model to read, never as
    an exception: arguments that do not match the schema, and a browser that cannot be
    reached, included.
    """
    try:
        request = _parse(arguments)
    except ValidationError as exc:
        return failed_result(session.session_id, "input", exc)
    try:
        return session.execute(request.code, request.timeout, request.description)
    except ViewfinderError as exc:
        return failed_result(session.session_id, "browser", exc)


async def arun_tool_call(
    session: BrowserSession, arguments: Mapping[str, Any] | str
) -> ExecuteResult:
    """Async :func:`run_tool_call`."""
    try:
        request = _parse(arguments)
    except ValidationError as exc:
        return failed_result(session.session_id, "input", exc)
    try:
        return await session.aexecute(request.code, request.timeout, request.description)
    except ViewfinderError as exc:
        return failed_result(session.session_id, "browser", exc)


def failed_result(
    session_id: str, kind: Literal["input", "browser"], error: Exception
) -> ExecuteResult:
    """An error result for a call that could not run at all."""
    if isinstance(error, ValidationError):
        message = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or 'input'}: {problem['msg']}"
            for problem in error.errors()
        )
        message = f"invalid browser_execute arguments: {message}"
    else:
        message = str(error)
    return ExecuteResult(
        call_id="",
        session_id=session_id,
        output=f"{type(error).__name__}: {message}\n{count_line(0)}",
        error=ExecuteError(kind=kind, type=type(error).__name__, message=message),
        started_at=datetime.now(UTC),
        elapsed_ms=0.0,
    )


# -- replying ---------------------------------------------------------------------------


def anthropic_tool_result(result: ExecuteResult, tool_use_id: str) -> dict[str, Any]:
    """The user message answering ``tool_use_id``: a ``tool_result`` with the output as
    text and every screenshot as an ``image`` block."""
    images = result.attachments
    content = [{"type": "text", "text": result.text_for(images)}]
    content.extend(image.anthropic for image in images)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if not result.ok:
        block["is_error"] = True
    return {"role": "user", "content": [block]}


def openai_function_call_output(result: ExecuteResult, call_id: str) -> dict[str, Any]:
    """The Responses API input item answering ``call_id``, images included."""
    images = result.attachments_for("openai")
    output = [{"type": "input_text", "text": result.text_for(images)}]
    output.extend(image.openai_responses for image in images)
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def openai_tool_messages(result: ExecuteResult, tool_call_id: str) -> list[dict[str, Any]]:
    """Chat Completions messages answering ``tool_call_id``: the ``tool`` message with the
    output, then (when there are screenshots) a user message with them as images."""
    images = result.attachments_for("openai")
    messages: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": tool_call_id, "content": result.text_for(images)}
    ]
    if images:
        parts: list[dict[str, Any]] = [
            {"type": "text", "text": f"Screenshots taken by tool call {tool_call_id}:"}
        ]
        parts.extend(image.openai for image in images)
        messages.append({"role": "user", "content": parts})
    return messages


def tool_result_message(
    result: ExecuteResult, tool_call_id: str, format: ReplyFormat = "anthropic"
) -> list[dict[str, Any]]:
    """The message(s) answering a tool call in ``format``, as a list to append."""
    if format == "anthropic":
        return [anthropic_tool_result(result, tool_call_id)]
    if format == "openai-responses":
        return [openai_function_call_output(result, tool_call_id)]
    if format == "openai":
        return openai_tool_messages(result, tool_call_id)
    raise BrowserInputError(
        f"unknown reply format {format!r}; use anthropic, openai or openai-responses"
    )
