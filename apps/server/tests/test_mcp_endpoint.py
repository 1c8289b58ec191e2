"""The tool-calling wire of a desktop server, spoken raw: ``POST /mcp`` (JSON-RPC), the
WebSocket's ``mcp`` messages and its tool steps. Every reply is read with openenv-core's
own models (which refuse unknown fields), so the shapes are OpenEnv's."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from openenv.core.env_server import mcp_types as openenv
from pydantic import BaseModel, ConfigDict, Field
from websockets.sync.client import ClientConnection, connect

from viewfinder.core import Tool, ToolContext, ToolError, ToolResult, hookimpl, tool_registry
from viewfinder.core.testing import wait_until
from viewfinder.server import LocalServer
from viewfinder.server import mcp_wire as ours


class EchoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="What to say back.")
    fail: bool = Field(default=False, description="Fail instead.")


def echo(arguments: EchoInput, context: ToolContext) -> ToolResult:
    if arguments.fail:
        raise ToolError("echo: asked to fail")
    return ToolResult.of(
        f"echo {arguments.text}",
        structured={
            "text": arguments.text,
            "display": context.display,
            "sandboxed": context.require_sandbox and context.sandbox is not None,
        },
    )


class EchoPlugin:
    """A third party's tools, registered in-process for a test."""

    @hookimpl
    def viewfinder_register_tools(self, register: Callable[[Tool], None]) -> None:
        register(Tool("echo", "Say the text back.", EchoInput, echo))
        register(Tool("reset", "A tool under a name OpenEnv reserves.", EchoInput, echo))


@pytest.fixture
def desktop(
    serve: Callable[..., LocalServer], viewfinder_plugin: Callable[..., str]
) -> LocalServer:
    """A desktop server whose registry has the echo plugin's tools too."""
    viewfinder_plugin(EchoPlugin(), name="viewfinder-test-echo-tools")
    return serve(env="desktop")


def rpc(server: LocalServer, method: str, request_id: int = 1, **params: Any) -> dict[str, Any]:
    """POST one JSON-RPC request to /mcp; the response, checked as OpenEnv's."""
    body = {"jsonrpc": "2.0", "method": method, "params": params, "id": request_id}
    return post(server, json.dumps(body).encode())


def post(server: LocalServer, body: bytes) -> dict[str, Any]:
    response = httpx.post(
        f"{server.base_url}/mcp",
        content=body,
        headers={"content-type": "application/json"},
        timeout=120,
    )
    assert response.status_code == 200
    reply: dict[str, Any] = response.json()
    openenv.JsonRpcResponse.model_validate(reply)
    assert ("result" in reply) != ("error" in reply)
    return reply


def health(server: LocalServer) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.get(f"{server.base_url}/health").json()
    return answer


def ask(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(message))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=120))
    return reply


def test_the_wire_models_are_openenvs() -> None:
    assert {kind.value for kind in ours.ToolErrorType} == {
        kind.value for kind in openenv.ToolErrorType
    }
    assert {code.name: int(code) for code in ours.RpcCode} == {
        code.name: code.value for code in openenv.JsonRpcErrorCode
    }
    assert ours.RESERVED_TOOL_NAMES == openenv.RESERVED_TOOL_NAMES
    assert ours.ListToolsAction().model_dump() == openenv.ListToolsAction().model_dump()
    call = {"tool_name": "computer", "arguments": {"action": "screenshot"}}
    assert ours.CallToolAction(**call).model_dump() == openenv.CallToolAction(**call).model_dump()
    error = ours.ToolCallError(error_type=ours.ToolErrorType.INVALID_ARGS, message="x")
    openenv.ToolError.model_validate(error.model_dump(mode="json"))
    observation = ours.CallToolObservation(tool_name="t", result={"content": []}, error=error)
    openenv.CallToolObservation.model_validate(observation.model_dump(mode="json"))


def test_tools_list_is_the_registry_without_a_session(desktop: LocalServer) -> None:
    reply = rpc(desktop, "tools/list")
    tools = reply["result"]["tools"]
    registry = tool_registry()
    assert [tool["name"] for tool in tools] == [name for name in registry if name != "reset"]
    echo_tool = next(tool for tool in tools if tool["name"] == "echo")
    assert echo_tool == registry["echo"].definition()
    assert echo_tool["inputSchema"]["properties"]["text"]["description"] == "What to say back."
    assert health(desktop)["active_sessions"] == 0


def test_a_session_on_http_mcp(desktop: LocalServer) -> None:
    created = rpc(desktop, "openenv/session/create")
    session_id = created["result"]["session_id"]
    assert health(desktop)["active_sessions"] == 1
    called = rpc(
        desktop, "tools/call", 2, session_id=session_id, name="echo", arguments={"text": "hi"}
    )
    assert called["id"] == 2
    result = called["result"]
    assert result["content"] == [{"type": "text", "text": "echo hi"}]
    assert result["isError"] is False
    assert result["structuredContent"] == result["data"]
    assert result["data"]["text"] == "hi"
    assert result["data"]["display"].startswith(":")
    assert result["data"]["sandboxed"] is True  # code-running tools would use the sandbox
    shot = rpc(desktop, "tools/call", 3, session_id=session_id, name="screenshot")["result"]
    assert [part["type"] for part in shot["content"]] == ["text", "image"]
    assert shot["content"][1]["mimeType"] == "image/png"
    closed = rpc(desktop, "openenv/session/close", 4, session_id=session_id)
    assert closed["result"] == {"session_id": session_id, "closed": True}
    assert health(desktop)["active_sessions"] == 0
    again = rpc(desktop, "openenv/session/close", 5, session_id=session_id)
    assert again["error"]["code"] == -32602
    assert again["error"]["message"] == f"Unknown session_id: {session_id}"
    gone = rpc(
        desktop, "tools/call", 6, session_id=session_id, name="echo", arguments={"text": "x"}
    )
    assert gone["error"]["code"] == -32602


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        (b"{bad", -32700, "Parse error"),
        (b"[1, 2]", -32600, "Invalid request"),
        (b'{"jsonrpc": "1.0", "method": "tools/list"}', -32600, "jsonrpc"),
        (b'{"jsonrpc": "2.0", "id": 7}', -32600, "method: Field required"),
        (b'{"jsonrpc": "2.0", "method": "tools/list", "params": [1]}', -32600, "params"),
        (b'{"jsonrpc": "2.0", "method": "tools/list", "extra": 1}', -32600, "extra"),
        (b'{"jsonrpc": "2.0", "method": "resources/list", "id": 7}', -32601, "tools/call"),
        (b'{"jsonrpc": "2.0", "method": "tools/call", "id": 7}', -32602, "Missing 'name'"),
        (
            b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo", '
            b'"arguments": [1]}}',
            -32602,
            "'arguments' must be an object",
        ),
        (
            b'{"jsonrpc": "2.0", "method": "tools/list", "params": {"session_id": "nope"}}',
            -32602,
            "Unknown session_id: nope",
        ),
        (b'{"jsonrpc": "2.0", "method": "openenv/session/close"}', -32602, "'session_id'"),
    ],
)
def test_bad_requests_get_json_rpc_errors(
    desktop: LocalServer, body: bytes, code: int, words: str
) -> None:
    reply = post(desktop, body)
    assert reply["error"]["code"] == code
    assert words in reply["error"]["message"]
    if b'"id": 7' in body:
        assert reply["id"] == 7
    assert health(desktop)["status"] == "healthy"


def test_a_failed_call_is_a_json_rpc_error_and_the_next_works(desktop: LocalServer) -> None:
    # without a session_id each call gets a session of its own, for that call
    unknown = rpc(desktop, "tools/call", name="dance")["error"]
    assert unknown["code"] == -32602
    assert unknown["message"].startswith("unknown tool 'dance'; the tools are: ")
    assert unknown["data"]["error_type"] == "tool_not_found"
    reserved = rpc(desktop, "tools/call", name="reset", arguments={"text": "x"})["error"]
    assert reserved["data"]["error_type"] == "tool_not_found"
    invalid = rpc(desktop, "tools/call", name="echo", arguments={"txet": "x"})["error"]
    assert invalid["code"] == -32602
    assert invalid["data"]["error_type"] == "invalid_args"
    assert "txet: is not a parameter of this tool" in invalid["message"]
    assert invalid["data"]["result"]["isError"] is True
    failed = rpc(desktop, "tools/call", name="echo", arguments={"text": "x", "fail": True})
    assert failed["error"]["code"] == -32603
    assert failed["error"]["message"] == "echo: asked to fail"
    assert failed["error"]["data"]["error_type"] == "execution_error"
    good = rpc(desktop, "tools/call", name="echo", arguments={"text": "after"})
    assert good["result"]["data"]["text"] == "after"
    wait_until(lambda: health(desktop)["active_sessions"] == 0, "the one-shot sessions to close")
    assert health(desktop)["displays"]["in_use"] == 0


def test_capacity_on_http_mcp(serve: Callable[..., LocalServer]) -> None:
    server = serve(env="desktop", max_sessions=1)
    first = rpc(server, "openenv/session/create")["result"]["session_id"]
    refused = rpc(server, "openenv/session/create", 2)["error"]
    assert refused["code"] == -32000
    assert refused["data"] == {"code": "CAPACITY_REACHED", "active_sessions": 1, "max_sessions": 1}
    assert "maximum (1)" in refused["message"]
    one_shot = rpc(server, "tools/call", 3, name="screenshot")["error"]
    assert one_shot["data"]["code"] == "CAPACITY_REACHED"
    rpc(server, "openenv/session/close", 4, session_id=first)
    second = rpc(server, "openenv/session/create", 5)["result"]["session_id"]
    rpc(server, "openenv/session/close", 6, session_id=second)


def test_tool_steps_and_mcp_messages_on_the_websocket(desktop: LocalServer) -> None:
    url = desktop.base_url.replace("http://", "ws://") + "/ws"
    with connect(url, max_size=None) as ws:
        # tools are listed before any reset
        listed = ask(ws, {"type": "step", "data": {"type": "list_tools"}})
        assert listed["type"] == "observation"
        tools = openenv.ListToolsObservation.model_validate(listed["data"]["observation"])
        assert "echo" in {tool.name for tool in tools.tools}
        assert "reset" not in {tool.name for tool in tools.tools}
        reset = ask(ws, {"type": "reset", "data": {"episode_id": "mine"}})
        display = reset["data"]["observation"]["metadata"]["display"]
        step = {"type": "call_tool", "tool_name": "echo", "arguments": {"text": "hi"}}
        called = ask(ws, {"type": "step", "data": step})["data"]
        assert (called["reward"], called["done"]) == (None, False)
        observation = openenv.CallToolObservation.model_validate(called["observation"])
        assert observation.error is None
        assert observation.result["data"]["display"] == display
        bad_step = {"type": "call_tool", "tool_name": "echo", "arguments": {}}
        bad = ask(ws, {"type": "step", "data": bad_step})["data"]["observation"]
        failed = openenv.CallToolObservation.model_validate(bad)
        assert failed.error is not None
        assert failed.error.error_type == openenv.ToolErrorType.INVALID_ARGS
        assert failed.error.message == "echo: invalid arguments: text: is required"

        # JSON-RPC on the socket runs in the socket's session
        request = {"jsonrpc": "2.0", "method": "tools/call", "id": 9}
        request["params"] = {"name": "echo", "arguments": {"text": "rpc"}}
        reply = ask(ws, {"type": "mcp", "data": request})
        openenv.WSMCPResponse.model_validate(reply)
        assert reply["data"]["result"]["data"]["display"] == display
        created = ask(
            ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "method": "openenv/session/create"}}
        )
        session_id = created["data"]["result"]["session_id"]
        close_own = {"jsonrpc": "2.0", "method": "openenv/session/close"}
        close_own["params"] = {"session_id": session_id}
        own = ask(ws, {"type": "mcp", "data": close_own})["data"]["error"]
        assert own["code"] == -32600
        # a WebSocket's session is not an /mcp session
        elsewhere = rpc(
            desktop, "tools/call", session_id=session_id, name="echo", arguments={"text": "x"}
        )
        assert elsewhere["error"]["message"] == f"Unknown session_id: {session_id}"
        state = ask(ws, {"type": "state"})
        assert state == {"type": "state", "data": {"episode_id": "mine", "step_count": 3}}
        bad_message = ask(ws, {"type": "step", "data": {"type": "call_tool"}})
        assert bad_message["data"]["code"] == "VALIDATION_ERROR"
        assert "tool_name" in bad_message["data"]["message"]
        unknown_type = ask(ws, {"type": "step", "data": {"type": "dance"}})
        assert unknown_type["data"]["code"] == "VALIDATION_ERROR"
    wait_until(lambda: health(desktop)["active_sessions"] == 0, "the session to close")
