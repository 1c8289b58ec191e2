"""The tool registry: viewfinder_register_tools, Tool.call's error results, ToolContext."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pydantic import BaseModel, Field

from viewfinder.core import (
    PluginError,
    Screenshot,
    Tool,
    ToolContext,
    ToolError,
    ToolInputError,
    ToolResult,
    call_tool,
    hookimpl,
    tool_registry,
)
from viewfinder.core.tools import require_sandbox


class Repeat(BaseModel):
    text: str = Field(description="What to say back.")
    times: int = Field(default=1, ge=1, le=5, description="How often, 1 to 5.")


def repeat(arguments: Repeat, context: ToolContext) -> ToolResult:
    if arguments.text == "refuse":
        raise ToolError("repeat: I will not say 'refuse'; say something else")
    if arguments.text == "crash":
        raise RuntimeError("boom")
    image = Screenshot.from_image(Image.new("RGB", (4, 3), (0, 0, 255)), source="test")
    return ToolResult.of(arguments.text * arguments.times, image, structured={"n": 1})


class ToolPlugin:
    def __init__(self, *tools: Tool) -> None:
        self.tools = tools

    @hookimpl
    def viewfinder_register_tools(self, register: Callable[[Tool], None]) -> None:
        for tool in self.tools:
            register(tool)


def make_tool(name: str = "repeat") -> Tool:
    return Tool(name, "Say the text back.", Repeat, repeat)


def test_a_plugin_registers_a_tool_the_registry_lists_and_calls(
    viewfinder_plugin: Callable[..., str],
) -> None:
    viewfinder_plugin(ToolPlugin(make_tool()), name="test-tools")
    tools = tool_registry()
    tool = tools["repeat"]
    assert tool.plugin == "test-tools"
    schema = tool.definition()["inputSchema"]
    assert schema["required"] == ["text"]
    assert schema["properties"]["times"]["maximum"] == 5

    result = call_tool("repeat", {"text": "ab", "times": 2}, ToolContext())
    assert not result.is_error
    assert result.text == "abab"
    assert result.structured == {"n": 1}
    (image,) = result.images
    assert image.to_pil().getpixel((1, 1)) == (0, 0, 255)
    wire = result.to_mcp()
    assert wire["content"][0] == {"type": "text", "text": "abab"}
    assert wire["content"][1]["mimeType"] == "image/png"
    decoded = Screenshot.from_bytes(base64.b64decode(wire["content"][1]["data"]), source="x")
    assert decoded.size == (4, 3)
    assert wire["isError"] is False


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "text: is required"),
        ({"text": "a", "times": 9}, "times: Input should be less than or equal to 5"),
        ({"text": "a", "colour": "red"}, "colour: is not a parameter of this tool"),
        ({"text": ["a"]}, "text: Input should be a valid string"),
        ({"text": "refuse"}, "I will not say 'refuse'"),
        ({"text": "crash"}, "repeat failed: RuntimeError: boom"),
    ],
)
def test_what_a_model_gets_wrong_comes_back_as_an_error_result(
    arguments: dict[str, Any], expected: str
) -> None:
    tool = make_tool()
    result = tool.call(arguments, ToolContext())
    assert result.is_error
    assert expected in result.text
    wrong_arguments = expected.split(":")[0] in {"text", "times", "colour"}
    assert result.error_kind == ("input" if wrong_arguments else "execution")
    # and the next call works
    assert tool.call({"text": "ok"}, ToolContext()).text == "ok"


def test_arguments_that_are_not_an_object_are_an_error_result() -> None:
    not_an_object: object = ["text"]
    result = make_tool().call(not_an_object, ToolContext())  # type: ignore[arg-type]
    assert result.is_error
    assert "arguments must be an object" in result.text


def test_an_unknown_tool_is_an_error_result_listing_the_tools(
    viewfinder_plugin: Callable[..., str],
) -> None:
    viewfinder_plugin(ToolPlugin(make_tool()), name="test-tools")
    result = call_tool("repaet", {}, ToolContext())
    assert result.is_error
    assert "unknown tool 'repaet'" in result.text
    assert "repeat" in result.text


def test_two_plugins_claiming_one_name_is_a_plugin_error_naming_both(
    viewfinder_plugin: Callable[..., str],
) -> None:
    viewfinder_plugin(ToolPlugin(make_tool()), name="first-tools")
    viewfinder_plugin(ToolPlugin(make_tool()), name="second-tools")
    with pytest.raises(PluginError, match="first-tools") as info:
        tool_registry()
    assert "second-tools" in str(info.value)


def test_registering_something_else_is_a_plugin_error(
    viewfinder_plugin: Callable[..., str],
) -> None:
    class Wrong:
        @hookimpl
        def viewfinder_register_tools(self, register: Callable[[Any], None]) -> None:
            register({"name": "dict"})

    viewfinder_plugin(Wrong(), name="wrong-tools")
    with pytest.raises(PluginError, match=r"wrong-tools.*docs/hooks\.md"):
        tool_registry()


def test_a_function_returning_something_else_is_an_error_result() -> None:
    tool = Tool("bad", "Returns a string.", Repeat, lambda arguments, context: "text")
    result = tool.call({"text": "a"}, ToolContext())
    assert result.is_error
    assert "not a ToolResult" in result.text


def test_context_resources_are_made_once_and_closed_newest_first() -> None:
    closed: list[str] = []

    class Thing:
        def __init__(self, name: str) -> None:
            self.name = name

        def close(self) -> None:
            closed.append(self.name)
            if self.name == "b":
                raise RuntimeError("closing b fails, a is still closed")

    with ToolContext(display=":5") as context:
        first = context.resource("a", lambda: Thing("a"))
        assert context.resource("a", lambda: Thing("other")) is first
        context.resource("b", lambda: Thing("b"))
    assert closed == ["b", "a"]
    assert context.get_resource("a") is None


def test_a_host_that_requires_a_sandbox_refuses_code_without_one() -> None:
    assert require_sandbox("run_code", ToolContext()) is None
    with pytest.raises(ToolError, match="only in a session's sandbox"):
        require_sandbox("run_code", ToolContext(require_sandbox=True))


def test_paths_stay_inside_the_workdir_and_a_strict_host_without_one_gives_none(
    tmp_path: Path,
) -> None:
    context = ToolContext(workdir=tmp_path)
    assert context.path("a/b.json") == tmp_path.resolve() / "a" / "b.json"
    for escape in ("../x.json", "/etc/passwd", "a/../../x"):
        with pytest.raises(ToolInputError, match="outside this session's folder"):
            context.path(escape)
    (tmp_path / "link").symlink_to("/etc")
    with pytest.raises(ToolInputError, match="outside"):
        context.path("link/passwd")
    assert ToolContext().path("x.json") == Path("x.json")
    with pytest.raises(ToolInputError, match="no files"):
        ToolContext(require_sandbox=True).path("x.json")
