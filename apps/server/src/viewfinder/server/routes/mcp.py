"""``POST /mcp``: OpenEnv's JSON-RPC endpoint for tool calls (a desktop server's).

``tools/list`` needs no session. ``tools/call`` runs in the session named by
``params.session_id`` (made by ``openenv/session/create``, ended by
``openenv/session/close`` or the idle timeout, like any session), or, without one, in a
session of its own for that call. The same requests sent on a WebSocket as ``{"type":
"mcp", "data": ...}`` run in that socket's session. See :mod:`viewfinder.server.mcp_wire`
for the shapes; OpenEnv's ``MCPToolClient`` in production mode speaks this.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import ValidationError

from viewfinder.server import wire
from viewfinder.server.deps import Registry
from viewfinder.server.desktop_task import DesktopTask
from viewfinder.server.errors import CapacityReachedError, SessionLostError
from viewfinder.server.mcp_wire import (
    METHODS,
    SESSION_CLOSE,
    SESSION_CREATE,
    TOOLS_CALL,
    TOOLS_LIST,
    RpcCode,
    RpcRequest,
    ToolErrorType,
    rpc_error,
    rpc_result,
)
from viewfinder.server.routes.env import while_connected
from viewfinder.server.sessions import Session, SessionRegistry

router = APIRouter(tags=["mcp"])

#: The JSON-RPC error of each kind of failed tool call (OpenEnv's server answers every
#: one with INTERNAL_ERROR; the data's ``error_type`` says which it was).
ERROR_CODES = {
    ToolErrorType.TOOL_NOT_FOUND: RpcCode.INVALID_PARAMS,
    ToolErrorType.INVALID_ARGS: RpcCode.INVALID_PARAMS,
}


@router.post("/mcp")
async def mcp_endpoint(http: Request, registry: Registry) -> Response:
    """One JSON-RPC request, answered with its JSON-RPC response (HTTP 200, as OpenEnv)."""
    body = await http.body()
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError) as exc:
        reply = rpc_error(None, RpcCode.PARSE_ERROR, f"Parse error: {exc}")
    else:
        reply = await answer(registry, payload, http=http)
    # a tool's images make replies large: written off the event loop
    text = await asyncio.to_thread(json.dumps, reply)
    return Response(text, media_type="application/json")


async def answer(
    registry: SessionRegistry,
    payload: Any,
    *,
    session: Session | None = None,
    http: Request | None = None,
) -> dict[str, Any]:
    """The JSON-RPC response to ``payload``. ``session``: the WebSocket's own session the
    request came on; ``http``: the HTTP request, whose leaving cancels a running call."""
    request_id = payload.get("id") if isinstance(payload, dict) else None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    try:
        request = RpcRequest.model_validate(payload)
    except ValidationError as exc:
        message = f"Invalid request: {wire.describe(wire.validation_errors(exc))}"
        return rpc_error(request_id, RpcCode.INVALID_REQUEST, message)
    params = request.params
    if request.method == SESSION_CREATE:
        return await _create(registry, request_id, session)
    if request.method == SESSION_CLOSE:
        return await _close(registry, request_id, params, session)
    if request.method not in (TOOLS_LIST, TOOLS_CALL):
        return rpc_error(
            request_id,
            RpcCode.METHOD_NOT_FOUND,
            f"Method not found: {request.method}; this server answers {', '.join(METHODS)}",
        )
    target = session
    if target is None and params.get("session_id") is not None:
        target = _mcp_session(registry, params["session_id"])
        if target is None:
            return rpc_error(
                request_id, RpcCode.INVALID_PARAMS, f"Unknown session_id: {params['session_id']}"
            )
    if request.method == TOOLS_LIST:
        from viewfinder.server.desktop_env import served_tools

        tools = await registry.call(served_tools)
        return rpc_result(request_id, {"tools": [tool.definition() for tool in tools.values()]})
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or not name:
        return rpc_error(request_id, RpcCode.INVALID_PARAMS, "Missing 'name' in params")
    if arguments is not None and not isinstance(arguments, dict):
        return rpc_error(
            request_id,
            RpcCode.INVALID_PARAMS,
            f"'arguments' must be an object, got {type(arguments).__name__}",
        )
    try:
        if target is not None:
            return await _call(registry, target, request_id, name, arguments, http)
        async with registry.one_shot() as one_shot:
            return await _call(registry, one_shot, request_id, name, arguments, http)
    except CapacityReachedError as exc:
        return _capacity_error(request_id, exc)


async def _call(
    registry: SessionRegistry,
    session: Session,
    request_id: str | int | None,
    name: str,
    arguments: dict[str, Any] | None,
    http: Request | None,
) -> dict[str, Any]:
    work = registry.use(session, lambda: session.env.call_tool(name, arguments or {}))
    try:
        observation = await (work if http is None else while_connected(http, session, work))
    except SessionLostError as exc:  # its node died: this session only
        await registry.lose(session, exc)
        return rpc_error(
            request_id,
            RpcCode.SERVER_ERROR,
            str(exc),
            {"code": wire.SESSION_LOST, "node": exc.node},
        )
    except Exception as exc:  # the session's desktop could not start
        return rpc_error(request_id, RpcCode.SERVER_ERROR, f"{type(exc).__name__}: {exc}")
    if observation is None:  # the client left; nobody reads this
        return rpc_error(request_id, RpcCode.SERVER_ERROR, "the client disconnected")
    error = observation.error
    if error is None:
        return rpc_result(request_id, observation.result)
    return rpc_error(
        request_id,
        ERROR_CODES.get(error.error_type, RpcCode.INTERNAL_ERROR),
        error.message,
        {"error_type": error.error_type.value, "tool_name": name, "result": observation.result},
    )


async def _create(
    registry: SessionRegistry, request_id: str | int | None, session: Session | None
) -> dict[str, Any]:
    if session is not None:  # on a WebSocket: its own session
        return rpc_result(request_id, {"session_id": session.id})
    try:
        created = await registry.open("mcp")
    except CapacityReachedError as exc:
        return _capacity_error(request_id, exc)
    try:  # the server's task starts now, so the first call finds its apps
        await registry.use(created, lambda: created.env.reset(DesktopTask()))
    except Exception as exc:
        await registry.close(created)
        return rpc_error(request_id, RpcCode.SERVER_ERROR, f"{type(exc).__name__}: {exc}")
    return rpc_result(request_id, {"session_id": created.id})


async def _close(
    registry: SessionRegistry,
    request_id: str | int | None,
    params: dict[str, Any],
    session: Session | None,
) -> dict[str, Any]:
    session_id = params.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return rpc_error(
            request_id, RpcCode.INVALID_PARAMS, "Invalid params - 'session_id' is required"
        )
    if session is not None and session_id == session.id:
        return rpc_error(
            request_id,
            RpcCode.INVALID_REQUEST,
            "Cannot close active WebSocket-managed session via MCP method; close the socket",
        )
    target = _mcp_session(registry, session_id)
    if target is None:
        return rpc_error(request_id, RpcCode.INVALID_PARAMS, f"Unknown session_id: {session_id}")
    await registry.close(target)
    return rpc_result(request_id, {"session_id": session_id, "closed": True})


def _mcp_session(registry: SessionRegistry, session_id: Any) -> Session | None:
    """The session ``openenv/session/create`` made under ``session_id``, if it runs."""
    found = registry.get(session_id) if isinstance(session_id, str) else None
    return found if found is not None and found.kind == "mcp" else None


def _capacity_error(request_id: str | int | None, exc: CapacityReachedError) -> dict[str, Any]:
    return rpc_error(
        request_id,
        RpcCode.SERVER_ERROR,
        str(exc),
        {
            "code": exc.code,
            "active_sessions": exc.active_sessions,
            "max_sessions": exc.max_sessions,
        },
    )
