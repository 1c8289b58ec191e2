"""OpenEnv's tool-calling wire (openenv-core 0.3's ``mcp_types``), written out here.

openenv-core is not a runtime dependency (it pulls in gradio and more), so these models
restate its shapes; a test checks each one against openenv-core's own types.

Steps over the WebSocket (``{"type": "step", "data": ACTION}``) take one of two actions:

- ``{"type": "list_tools"}`` -> observation ``{"tools": [{"name", "description",
  "input_schema"}]}``;
- ``{"type": "call_tool", "tool_name": NAME, "arguments": {...}}`` -> observation
  ``{"tool_name", "result", "error"}``. ``result`` is the tool's result as MCP carries it
  (``content``: ``{"type": "text", "text"}`` and ``{"type": "image", "data": BASE64,
  "mimeType"}`` parts, ``structuredContent``, ``isError``) plus ``data``, the structured
  part again, which is what OpenEnv's ``MCPToolClient.call_tool`` hands back (FastMCP's
  client result carries it so). ``error`` is OpenEnv's tool error, ``{"error_type",
  "message"}``, when the call failed: ``tool_not_found``, ``invalid_args`` or
  ``execution_error``.

The ``/mcp`` endpoint (HTTP POST, and ``{"type": "mcp", "data": REQUEST}`` on the
WebSocket) speaks JSON-RPC 2.0: ``tools/list``, ``tools/call`` (``{"name", "arguments",
"session_id"?}``), ``openenv/session/create`` and ``openenv/session/close``. A failed
tool call is a JSON-RPC error there, as OpenEnv's server answers it, whose ``data``
names the ``error_type`` and carries the tool's result.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core import ToolResult

#: Names a tool may not have: they are the environment's own calls (OpenEnv's rule).
RESERVED_TOOL_NAMES = frozenset({"reset", "step", "state", "close"})


class ToolErrorType(StrEnum):
    """What kind of failure a tool call met (OpenEnv's ``ToolErrorType``)."""

    EXECUTION_ERROR = "execution_error"
    INVALID_ARGS = "invalid_args"
    TRANSPORT_ERROR = "transport_error"
    TOOL_NOT_FOUND = "tool_not_found"
    TIMEOUT = "timeout"


class ToolCallError(BaseModel):
    """A failed tool call, as OpenEnv reports it (its ``ToolError``)."""

    model_config = ConfigDict(extra="forbid")

    error_type: ToolErrorType
    message: str


class ToolSpec(BaseModel):
    """A tool as a ``list_tools`` step lists it (OpenEnv's ``Tool``)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    input_schema: dict[str, Any]


# -- actions (the ``data`` of a WebSocket step, the ``action`` of POST /step) ---------------


class ListToolsAction(BaseModel):
    """List the tools (needs no reset first)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["list_tools"] = "list_tools"
    metadata: dict[str, Any] = Field(default_factory=dict)


class CallToolAction(BaseModel):
    """Call one tool with its arguments."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["call_tool"] = "call_tool"
    tool_name: str = Field(min_length=1, max_length=255)
    arguments: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)


#: A step's action: the ``type`` says which.
ToolAction = Annotated[ListToolsAction | CallToolAction, Field(discriminator="type")]


# -- observations -----------------------------------------------------------------------------


class ListToolsObservation(BaseModel):
    """The answer to ``list_tools``."""

    tools: list[ToolSpec]


class CallToolObservation(BaseModel):
    """The answer to ``call_tool``: the tool's result, and OpenEnv's error when it failed."""

    tool_name: str
    result: dict[str, Any] | None = None
    error: ToolCallError | None = None
    #: A task's score after the call (None without a task), and whether its episode ended.
    reward: float | None = None
    done: bool = False
    #: Why (a task's ``reason``, ``truncated`` at its step limit, ...); left out when empty.
    metadata: dict[str, Any] = Field(default_factory=dict)


def step_payload(observation: BaseModel) -> dict[str, Any]:
    """An observation in OpenEnv's step layout: ``{"observation", "reward", "done"}``."""
    leave_out = {"reward", "done"}
    if not getattr(observation, "metadata", None):
        leave_out.add("metadata")
    return {
        "observation": observation.model_dump(mode="json", exclude=leave_out),
        "reward": getattr(observation, "reward", None),
        "done": bool(getattr(observation, "done", False)),
    }


def mcp_result(result: ToolResult) -> dict[str, Any]:
    """A tool's result as MCP's ``CallToolResult``, plus ``data`` (its structured part)."""
    return {**result.to_mcp(), "data": result.structured}


# -- JSON-RPC 2.0 -------------------------------------------------------------------------------


class RpcCode(IntEnum):
    """JSON-RPC 2.0 error codes (OpenEnv's ``JsonRpcErrorCode``)."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SERVER_ERROR = -32000


class RpcRequest(BaseModel):
    """A JSON-RPC 2.0 request (OpenEnv's ``JsonRpcRequest``)."""

    model_config = ConfigDict(extra="forbid")

    jsonrpc: Literal["2.0"]
    method: str = Field(max_length=255)
    params: dict[str, Any] = Field(default_factory=dict)
    id: str | int | None = None


TOOLS_LIST = "tools/list"
TOOLS_CALL = "tools/call"
SESSION_CREATE = "openenv/session/create"
SESSION_CLOSE = "openenv/session/close"
METHODS = (TOOLS_LIST, TOOLS_CALL, SESSION_CREATE, SESSION_CLOSE)


def rpc_result(request_id: str | int | None, result: Any) -> dict[str, Any]:
    """A JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def rpc_error(
    request_id: str | int | None, code: RpcCode, message: str, data: Any = None
) -> dict[str, Any]:
    """A JSON-RPC error response (``data`` is always present, null when unused, as OpenEnv's)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": int(code), "message": message, "data": data},
    }
