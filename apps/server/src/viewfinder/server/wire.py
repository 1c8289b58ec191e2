"""The OpenEnv wire protocol: request bodies, WebSocket messages and error payloads.

HTTP: ``POST /reset`` takes ``{"seed"?, "episode_id"?, "task"?}``; ``POST /step`` takes
``{"action": {...}, "timeout_s"?, "request_id"?}``; both answer
``{"observation": {...}, "reward": ..., "done": ...}``. WebSocket ``/ws``: the client
sends ``{"type": "reset", "data": {...}}``, ``{"type": "step", "data": ACTION}``,
``{"type": "state"}`` or ``{"type": "close"}``, and ``{"type": "cancel"}`` (ours: it
stops the running step, whose observation then comes back with exit code 130 and
``metadata["cancelled"]``; the cancel itself gets no answer); the server answers
``{"type": "observation", "data": {...}}``, ``{"type": "state", "data": {...}}`` or
``{"type": "error", "data": {"message": ..., "code": ..., "errors"?: [...]}}``.

Observations carry ``screenshot`` (the last capture) as OpenEnv's clients read it. A
client may ask, when it connects, for the last capture to be sent once
(``/ws?screenshot=deduplicated``, :data:`SCREENSHOT_FORMS`): ``screenshot`` is then left
out when it is the last of ``screenshots``, which viewfinder's ``CodingEnv`` does and
puts back on reading.

A desktop server (``--env desktop``) takes the same messages, with OpenEnv's tool-calling
actions as step ``data`` and its task as reset ``data`` (:mod:`viewfinder.server.mcp_wire`,
:mod:`viewfinder.server.desktop_task`), and ``{"type": "mcp", "data": JSON-RPC}``,
answered ``{"type": "mcp", "data": JSON-RPC response}``.

Unlike OpenEnv's generic server, unknown fields are refused here (422 over HTTP, a
``VALIDATION_ERROR`` over the WebSocket) so a misspelt field is never silently ignored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from viewfinder.codeenv import CodeAction
from viewfinder.codeenv.models import MAX_TIMEOUT_S
from viewfinder.server.desktop_task import DesktopTask
from viewfinder.server.mcp_wire import ToolAction
from viewfinder.server.tasks.model import Task

#: OpenEnv's WebSocket error codes (``openenv.core.env_server.types.WSErrorCode``).
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
#: The session's node or process died: it cannot go on (the message names the node).
SESSION_LOST = "SESSION_LOST"
SESSION_ERROR = "SESSION_ERROR"


#: ``/ws?screenshot=FORM``: ``full`` (the default, as OpenEnv's clients expect) or
#: ``deduplicated`` (the last capture only in ``screenshots``; code env servers).
SCREENSHOT_FORMS = ("full", "deduplicated")


def screenshot_form(value: str | None) -> str:
    """The ``screenshot`` form a client asked for, or ValueError saying what it may ask."""
    if value is None:
        return "full"
    if value not in SCREENSHOT_FORMS:
        raise ValueError(
            f"screenshot={value!r} is not a form; ask for one of: {', '.join(SCREENSHOT_FORMS)}"
        )
    return value


class ResetRequest(BaseModel):
    """Body of ``POST /reset`` and ``data`` of a WebSocket ``reset``."""

    model_config = ConfigDict(extra="forbid")

    seed: int | None = Field(default=None, ge=0)
    episode_id: str | None = Field(default=None, max_length=255)
    #: A code task that scores itself (docs/tasks.md): its files are placed in the run's
    #: home, and every step's observation carries its checker's reward and done.
    task: Task | None = None


class StepRequest(BaseModel):
    """Body of ``POST /step``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    action: CodeAction
    timeout_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    request_id: str | None = Field(default=None, max_length=255)


class ResetMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["reset"]
    data: ResetRequest = Field(default_factory=ResetRequest)


class StepMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["step"]
    data: CodeAction


class StateMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["state"]


class CloseMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["close"]


class CancelMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["cancel"]


class DesktopResetMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["reset"]
    data: DesktopTask = Field(default_factory=DesktopTask)


class DesktopStepMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["step"]
    data: ToolAction


class McpMessage(BaseModel):
    """A JSON-RPC request to the session's ``/mcp`` (OpenEnv's ``WSMCPMessage``)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["mcp"]
    data: dict[str, Any]


#: The messages of a code env session.
MESSAGES: dict[str, type[BaseModel]] = {
    "reset": ResetMessage,
    "step": StepMessage,
    "state": StateMessage,
    "close": CloseMessage,
    "cancel": CancelMessage,
}
#: The messages of a desktop session.
DESKTOP_MESSAGES: dict[str, type[BaseModel]] = {
    **MESSAGES,
    "reset": DesktopResetMessage,
    "step": DesktopStepMessage,
    "mcp": McpMessage,
}


def error_message(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """An ``error`` message for the WebSocket."""
    return {"type": "error", "data": {"message": message, "code": code, **extra}}


def validation_errors(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors as plain JSON (their context may hold exception objects)."""
    errors: list[dict[str, Any]] = json_safe(json.loads(exc.json(include_url=False)))
    return errors


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float (inf, nan) written as its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def describe(errors: list[dict[str, Any]]) -> str:
    """One line naming each bad field and what is wrong with it."""
    parts = []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ())) or "message"
        parts.append(f"{where}: {error.get('msg')}")
    return "; ".join(parts)


def parse_message(
    raw: str, messages: Mapping[str, type[BaseModel]] = MESSAGES
) -> BaseModel | dict[str, Any]:
    """A WebSocket message as its model (one of ``messages``), or the ``error`` message
    to answer with."""
    try:
        message = json.loads(raw)
    except ValueError as exc:
        return error_message(INVALID_JSON, f"the message is not valid JSON: {exc}")
    except RecursionError:
        return error_message(INVALID_JSON, "the message nests JSON too deeply to be read")
    if not isinstance(message, dict):
        return error_message(
            VALIDATION_ERROR,
            f"a message must be a JSON object with a 'type', got {type(message).__name__}",
        )
    kind = message.get("type")
    model = messages.get(kind) if isinstance(kind, str) else None
    if model is None:
        return error_message(
            UNKNOWN_TYPE,
            f"unknown message type {kind!r}; send one of: {', '.join(messages)}",
        )
    try:
        return model.model_validate(message)
    except ValidationError as exc:
        errors = validation_errors(exc)
        return error_message(
            VALIDATION_ERROR, f"invalid {kind} message: {describe(errors)}", errors=errors
        )
