"""The MCP server: the tool registry's tools, the session's screen and recording.

Built on the SDK's low-level :class:`mcp.server.Server`: the tools are not Python
functions to decorate but the registry's :class:`viewfinder.core.Tool` objects, whose
names, descriptions and JSON schemas are listed as they are, and whose results
(:class:`~viewfinder.core.ToolResult`) map one to one onto MCP's: text as text content,
images as image content (base64 and a MIME type), ``structured`` as structured content,
``is_error`` as ``isError``. A call never fails the request: an unknown tool, arguments
that do not fit, a desktop that cannot start or a tool that raises all come back as a
result with ``isError`` set and a message saying what was wrong.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from mcp import types
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from viewfinder.core import (
    ImageContent,
    ResourceLinkContent,
    Tool,
    ToolResult,
    UnknownToolError,
    ViewfinderError,
)
from viewfinder.mcp.options import DesktopOptions
from viewfinder.mcp.sessions import SessionRegistry

log = logging.getLogger(__name__)

NAME = "viewfinder"
#: The plugin whose tools ``--browser off`` leaves out.
BROWSER_PLUGIN = "browser"
SCREEN_URI = "viewfinder://session/screen.png"
RECORDING_URI = "viewfinder://session/recording/manifest.jsonl"
#: MCP's error code for a resource that does not exist (the spec's -32002).
RESOURCE_NOT_FOUND = -32002
INSTRUCTIONS = (
    "This server gives you a screen of your own: an X display with the apps it was "
    "started with, which starts with your first tool call and ends when you disconnect. "
    "Its tools see and act on that screen and run code in a sandbox on it: {tools}. "
    "Screenshots may be scaled down from the screen; the tools say how, and map the "
    "coordinates you give back to the screen."
)

#: Finds the session of a request: ``ctx`` -> the session's key (raises MCPError when
#: the request belongs to none).
SessionKey = Callable[[Any], str]


def served_tools(tools: Mapping[str, Tool], options: DesktopOptions) -> dict[str, Tool]:
    """The tools this server offers: all the registry's, less the browser's with
    ``--browser off``."""
    if options.browser != "off":
        return dict(tools)
    return {name: tool for name, tool in tools.items() if tool.plugin != BROWSER_PLUGIN}


def mcp_tool(tool: Tool) -> types.Tool:
    """``tool`` as MCP lists it: name, title, description, input schema, annotations."""
    return types.Tool.model_validate(tool.definition())


def mcp_result(result: ToolResult) -> types.CallToolResult:
    """A :class:`ToolResult` as MCP's ``CallToolResult``."""
    content: list[types.ContentBlock] = []
    for part in result.content:
        if isinstance(part, ImageContent):
            image = part.image
            content.append(types.ImageContent(data=image.b64(), mime_type=image.mime_type))
        elif isinstance(part, ResourceLinkContent):
            content.append(types.ResourceLink.model_validate(part.to_mcp()))
        else:
            content.append(types.TextContent(text=part.text))
    return types.CallToolResult(
        content=content, structured_content=result.structured, is_error=result.is_error
    )


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def build_server(
    tools: Mapping[str, Tool],
    sessions: SessionRegistry,
    session_key: SessionKey,
    *,
    withheld: Mapping[str, str] | None = None,
) -> Server[Any]:
    """The low-level MCP server of ``tools``, whose calls run in the request's session.

    ``withheld`` maps the names of registry tools this server does not offer to why
    (a call names the reason instead of calling the tool unknown).
    """
    withheld = dict(withheld or {})
    listed = [mcp_tool(tool) for tool in tools.values()]

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            reason = withheld.get(params.name)
            if reason is not None:
                return error_result(f"{params.name} is not offered by this server: {reason}")
            return error_result(str(UnknownToolError(params.name, tools)))
        session = sessions.get(session_key(ctx))
        try:
            return await session.call(tool, params.arguments, mcp_result)
        except ViewfinderError as exc:  # the session ended under the call
            return error_result(f"{tool.name}: {exc}")
        except Exception as exc:  # a bug of ours: still the model's to read, not a crash
            log.exception("tool %s failed in session %s", tool.name, session.key)
            return error_result(f"{tool.name} failed: {type(exc).__name__}: {exc}")

    async def list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resources = [
            types.Resource(
                uri=SCREEN_URI,
                name="screen",
                title="The session's screen",
                description="A screenshot of this session's screen as it is now (PNG, full "
                "size); reading it starts the session's desktop if no tool has yet.",
                mime_type="image/png",
            )
        ]
        session = sessions.find(session_key(ctx))
        if session is not None and session.recording_manifest() is not None:
            resources.append(
                types.Resource(
                    uri=RECORDING_URI,
                    name="recording",
                    title="The recording in progress",
                    description="The manifest (one JSON line per recorded action) of the "
                    "recording record_start began in this session.",
                    mime_type="application/jsonl",
                )
            )
        return types.ListResourcesResult(resources=resources)

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        key = session_key(ctx)
        if uri == SCREEN_URI:
            try:
                shot = await sessions.get(key).screen()
            except Exception as exc:
                raise MCPError(
                    types.INTERNAL_ERROR, f"the screen could not be read: {exc}"
                ) from None
            encoded = await asyncio.to_thread(shot.b64)  # a large frame: off the loop
            blob = types.BlobResourceContents(uri=uri, mime_type=shot.mime_type, blob=encoded)
            return types.ReadResourceResult(contents=[blob])
        if uri == RECORDING_URI:
            session = sessions.find(key)
            manifest = session.recording_manifest() if session is not None else None
            if manifest is None:
                raise MCPError(
                    RESOURCE_NOT_FOUND,
                    "nothing is being recorded in this session; call record_start first",
                )
            try:
                text = manifest.read_text(encoding="utf-8") if manifest.exists() else ""
            except OSError as exc:
                raise MCPError(types.INTERNAL_ERROR, f"cannot read {manifest}: {exc}") from None
            contents = types.TextResourceContents(uri=uri, mime_type="application/jsonl", text=text)
            return types.ReadResourceResult(contents=[contents])
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"no resource {uri!r}; the resources are {SCREEN_URI} and {RECORDING_URI}",
        )

    from importlib.metadata import version

    return Server(
        NAME,
        version=version("viewfinder-mcp"),
        title="viewfinder",
        instructions=INSTRUCTIONS.format(tools=", ".join(tools) or "none"),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
