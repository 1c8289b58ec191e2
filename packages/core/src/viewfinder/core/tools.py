"""Tools an agent may call: one registry, filled by plugins, adapted by every transport.

Each package registers its tools through the ``viewfinder_register_tools`` hook::

    from pydantic import BaseModel, Field
    from viewfinder.core import Tool, ToolResult, hookimpl

    class EchoInput(BaseModel):
        text: str = Field(description="What to say back.")

    def echo(arguments: EchoInput, context: ToolContext) -> ToolResult:
        return ToolResult.of(arguments.text)

    @hookimpl
    def viewfinder_register_tools(register):
        register(Tool("echo", "Say the text back.", EchoInput, echo))

The MCP server, the server's desktop environment (OpenEnv tool calls) and the CLI list
:func:`tool_registry` and call :meth:`Tool.call`; none of them knows a tool by name.
A call never raises for what a model can get wrong: bad arguments, a
:class:`ToolError` raised by the tool, or any other failure come back as a result with
``is_error=True`` whose text says what was wrong, so the agent's loop goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from viewfinder.core.errors import PluginError, ViewfinderError
from viewfinder.core.screenshot import Screenshot

if TYPE_CHECKING:
    from pathlib import Path

log = logging.getLogger(__name__)

HOOK = "viewfinder_register_tools"


class ToolError(ViewfinderError):
    """A tool could not do what was asked; the message is written for the model to read."""


class ToolInputError(ToolError, ValueError):
    """A tool's arguments do not fit its parameters: which field, and what is allowed."""


class UnknownToolError(ToolError, LookupError):
    """No registered tool has this name."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        self.available = sorted(available)
        super().__init__(
            f"unknown tool {name!r}; the tools are: {', '.join(self.available) or 'none'}"
        )


class TextContent(BaseModel):
    """Text in a tool's result."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["text"] = "text"
    text: str


class ImageContent(BaseModel):
    """An image in a tool's result (base64 in JSON, as every screenshot is)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["image"] = "image"
    image: Screenshot


class ResourceLinkContent(BaseModel):
    """A link to a file the host keeps (MCP's ``resource_link``): a full-size image the
    result could not carry, read through the host's ``resources/read``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    mime_type: str | None = None
    description: str | None = None
    size: int | None = None

    def to_mcp(self) -> dict[str, Any]:
        """This link as MCP's ``resource_link`` content."""
        out: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.mime_type:
            out["mimeType"] = self.mime_type
        if self.description:
            out["description"] = self.description
        if self.size is not None:
            out["size"] = self.size
        return out


Content = TextContent | ImageContent | ResourceLinkContent
ErrorKind = Literal["input", "execution"]


class ToolResult(BaseModel):
    """What a tool hands back: text and images, optional structured data, an error flag.

    ``structured`` is the machine-readable part (MCP's ``structuredContent``): a code
    run's exit code, a cache check's distance. ``is_error`` marks a result that reports
    a failure the model should read and act on; ``error_kind`` says which: ``"input"``
    (the arguments were wrong, nothing was done) or ``"execution"`` (the tool ran and
    failed), so transports with error types (OpenEnv's) can tell them apart.
    """

    model_config = ConfigDict(extra="forbid")

    content: list[Content] = Field(default_factory=list)
    structured: dict[str, Any] | None = None
    is_error: bool = False
    error_kind: ErrorKind | None = None

    @classmethod
    def of(
        cls,
        *parts: str | Screenshot,
        structured: Mapping[str, Any] | None = None,
        is_error: bool = False,
        error_kind: ErrorKind | None = None,
    ) -> ToolResult:
        """A result from text and screenshots, in the order given (an error result is an
        ``"execution"`` error unless ``error_kind`` says otherwise)."""
        content: list[Content] = [
            TextContent(text=part) if isinstance(part, str) else ImageContent(image=part)
            for part in parts
        ]
        return cls(
            content=content,
            structured=dict(structured) if structured is not None else None,
            is_error=is_error,
            error_kind=(error_kind or "execution") if is_error else None,
        )

    @classmethod
    def error(
        cls,
        message: str,
        *,
        structured: Mapping[str, Any] | None = None,
        kind: ErrorKind = "execution",
    ) -> ToolResult:
        """A result that reports ``message`` as the tool's error."""
        return cls.of(message, structured=structured, is_error=True, error_kind=kind)

    @property
    def text(self) -> str:
        """Every text part, joined by newlines."""
        return "\n".join(part.text for part in self.content if isinstance(part, TextContent))

    @property
    def images(self) -> list[Screenshot]:
        """Every image part, in order."""
        return [part.image for part in self.content if isinstance(part, ImageContent)]

    @property
    def links(self) -> list[ResourceLinkContent]:
        """Every resource link, in order."""
        return [part for part in self.content if isinstance(part, ResourceLinkContent)]

    def to_mcp(self) -> dict[str, Any]:
        """This result as MCP's ``CallToolResult``: content, structuredContent, isError."""
        content: list[dict[str, Any]] = []
        for part in self.content:
            if isinstance(part, TextContent):
                content.append({"type": "text", "text": part.text})
            elif isinstance(part, ResourceLinkContent):
                content.append(part.to_mcp())
            else:
                content.append(
                    {"type": "image", "data": part.image.b64(), "mimeType": part.image.mime_type}
                )
        out: dict[str, Any] = {"content": content, "isError": self.is_error}
        if self.structured is not None:
            out["structuredContent"] = self.structured
        return out


class SandboxRun(BaseModel):
    """What a :class:`CodeSandbox` run produced."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    screenshots: list[Screenshot] = Field(default_factory=list)


class CodeSandbox(Protocol):
    """Runs Python code in a session's sandbox (the code env's isolated worker).

    A host that serves tools to code nobody reviewed (the server, the MCP server) hands
    one to :class:`ToolContext`; tools that run model-written code run it there, never in
    the serving process.
    """

    def run(self, code: str, timeout: float | None = None) -> SandboxRun: ...


@dataclass
class ToolContext:
    """Where a tool call runs: the session's display, its sandbox, per-session resources.

    ``display`` is the session's X display (``":N"``) or None. ``sandbox`` runs code in
    the session's isolated worker; with ``require_sandbox`` (set by servers) a tool that
    runs model-written code must use it and refuses to run when there is none.
    :meth:`resource` keeps objects a tool needs across calls of one session (a
    ``ComputerTool``, a recording) and closes them with the context.
    """

    display: str | None = None
    sandbox: CodeSandbox | None = None
    require_sandbox: bool = False
    workdir: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)
    _resources: dict[str, Any] = field(default_factory=dict, repr=False)

    def path(self, value: str, *, what: str = "file") -> Path:
        """A path a tool was given, as the host allows it.

        With a ``workdir``, relative paths are inside it and a path that leads out of it
        is a :class:`ToolInputError`; a host that ``require_sandbox`` and set no workdir
        gives tools no files at all. Otherwise (a library caller) the path as given.
        """
        from pathlib import Path

        if self.workdir is None:
            if self.require_sandbox:
                raise ToolInputError(
                    f"this host gives tools no {what}s on its machine; {value!r} cannot be used"
                )
            return Path(value).expanduser()
        root = Path(self.workdir).resolve()
        resolved = (root / value).resolve()
        if resolved != root and root not in resolved.parents:
            raise ToolInputError(
                f"{what} {value!r} is outside this session's folder; use a path inside it "
                "(relative paths are)"
            )
        return resolved

    def resource(self, key: str, factory: Callable[[], Any]) -> Any:
        """The session's object under ``key``, made by ``factory()`` on first use."""
        if key not in self._resources:
            self._resources[key] = factory()
        return self._resources[key]

    def get_resource(self, key: str) -> Any | None:
        """The session's object under ``key``, or None when none was made."""
        return self._resources.get(key)

    def drop_resource(self, key: str) -> Any | None:
        """Forget ``key`` without closing it; returns the object (None when absent)."""
        return self._resources.pop(key, None)

    def close(self) -> None:
        """Close every resource that has ``close()``, the newest first; errors are logged."""
        while self._resources:
            key, value = self._resources.popitem()
            closer = getattr(value, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception:
                    log.exception("closing tool resource %r failed", key)

    def __enter__(self) -> ToolContext:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


ToolFunction = Callable[[Any, ToolContext], ToolResult]


@dataclass
class Tool:
    """One tool: a name, a description for the model, typed parameters and a function.

    ``parameters`` is a pydantic model: its JSON schema is the tool's input schema, and
    the arguments of a call are validated against it before ``function(arguments,
    context)`` runs. ``runs_code`` marks a tool that executes model-written code (it must
    honour ``context.require_sandbox``). ``annotations`` are MCP's hints
    (``readOnlyHint``, ``destructiveHint``, ...). ``plugin`` is filled in by the registry.
    """

    name: str
    description: str
    parameters: type[BaseModel]
    function: ToolFunction
    title: str | None = None
    annotations: dict[str, Any] | None = None
    runs_code: bool = False
    plugin: str | None = None

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the parameters (an object schema)."""
        return self.parameters.model_json_schema()

    def definition(self) -> dict[str, Any]:
        """The tool as MCP lists it: name, description, inputSchema, title, annotations."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema(),
        }
        if self.title:
            out["title"] = self.title
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out

    def parse(self, arguments: Mapping[str, Any] | None) -> BaseModel:
        """Validate ``arguments``; :class:`ToolInputError` names each wrong field."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise ToolInputError(
                f"{self.name}: arguments must be an object, got {type(arguments).__name__}"
            )
        if self.parameters.model_config.get("extra") != "allow":
            fields = self.parameters.model_fields
            known = set(fields) | {info.alias for info in fields.values() if info.alias}
            unknown = sorted(str(key) for key in arguments if key not in known)
            if unknown:
                raise ToolInputError(
                    f"{self.name}: invalid arguments: "
                    + "; ".join(f"{key}: is not a parameter of this tool" for key in unknown)
                    + f" (its parameters: {', '.join(self.parameters.model_fields)})"
                )
        try:
            return self.parameters.model_validate(dict(arguments))
        except ValidationError as exc:
            raise ToolInputError(describe_validation_error(self.name, exc)) from None

    def call(self, arguments: Mapping[str, Any] | None, context: ToolContext) -> ToolResult:
        """Validate and run; any failure is an error result (``is_error``), never an exception."""
        try:
            parsed = self.parse(arguments)
            result = self.function(parsed, context)
        except ToolInputError as exc:
            return ToolResult.error(str(exc), kind="input")
        except ViewfinderError as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:
            log.exception("tool %r failed", self.name)
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")
        if not isinstance(result, ToolResult):
            return ToolResult.error(
                f"{self.name} returned {type(result).__name__}, not a ToolResult "
                f"(a bug in plugin {self.plugin or '?'}; see docs/hooks.md)"
            )
        return result


def describe_validation_error(tool: str, exc: ValidationError) -> str:
    """One line per wrong field: where, what was wrong, what is allowed."""
    lines = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        message = error["msg"]
        if error["type"] == "missing":
            message = "is required"
        elif error["type"] == "extra_forbidden":
            message = "is not a parameter of this tool"
        lines.append(f"{where}: {message}")
    return f"{tool}: invalid arguments: " + "; ".join(lines)


RegisterTool = Callable[[Tool], None]


def tool_registry() -> dict[str, Tool]:
    """Every tool the installed plugins register, by name (in registration order).

    A tool registered under a name another plugin took, or something that is not a
    :class:`Tool`, is a :class:`~viewfinder.core.PluginError` naming the plugins.
    """
    from viewfinder.core.plugins import hook_per_plugin

    tools: dict[str, Tool] = {}
    for plugin, hook in hook_per_plugin(HOOK):

        def register(tool: Tool, _plugin: str = plugin) -> None:
            if not isinstance(tool, Tool):
                raise PluginError(
                    f"plugin {_plugin!r} registered {tool!r} as a tool; register a "
                    "viewfinder.core.Tool (see docs/hooks.md, viewfinder_register_tools)"
                )
            if tool.name in tools:
                raise PluginError(
                    f"plugin {_plugin!r} registered tool {tool.name!r}, which plugin "
                    f"{tools[tool.name].plugin!r} registered already; rename one of them"
                )
            tool.plugin = _plugin
            tools[tool.name] = tool

        hook(register=register)
    return tools


def call_tool(
    name: str,
    arguments: Mapping[str, Any] | None,
    context: ToolContext,
    *,
    tools: Mapping[str, Tool] | None = None,
) -> ToolResult:
    """Call the registered tool ``name``; an unknown name is an error result listing the tools."""
    table = tool_registry() if tools is None else tools
    tool = table.get(name)
    if tool is None:
        return ToolResult.error(str(UnknownToolError(name, table)))
    return tool.call(arguments, context)


def require_sandbox(tool: str, context: ToolContext) -> CodeSandbox | None:
    """The sandbox a code-running tool must use; None means run locally (library use).

    Raises :class:`ToolError` when the host requires a sandbox and gave none.
    """
    if context.sandbox is not None:
        return context.sandbox
    if context.require_sandbox:
        raise ToolError(
            f"{tool} runs code, and this host runs code only in a session's sandbox, "
            "which this session does not have"
        )
    return None
