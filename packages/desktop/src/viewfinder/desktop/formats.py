"""A ComputerResult as each API wants it back, and each API's computer tool definition.

Anthropic (Messages API, beta computer use)::

    tools=[anthropic_tool_definition(tool, "computer_20251124")]
    betas=[ANTHROPIC_BETAS["computer_20251124"]]
    ... {"role": "user", "content": [to_anthropic_tool_result(result, block.id)]}

OpenAI (Responses API, ``computer-use-preview``)::

    tools=[openai_tool_definition(tool)]
    ... input=to_openai_input_items(result, item.call_id)

The display size in a definition is the MODEL size (what the screenshots show and the
coordinates the model sends), not the screen's, when the tool scales.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from viewfinder.core.errors import ViewfinderError

if TYPE_CHECKING:
    from viewfinder.core.screenshot import Screenshot
    from viewfinder.desktop.computer import ComputerResult, ComputerTool
    from viewfinder.desktop.scaling import Scaling

AnthropicVersion = Literal["computer_20250124", "computer_20251124"]
#: The ``anthropic-beta`` header each tool version needs.
ANTHROPIC_BETAS: dict[str, str] = {
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
}
#: The name Anthropic's computer tool must have.
ANTHROPIC_TOOL_NAME = "computer"
OPENAI_TOOL_TYPE = "computer_use_preview"
OpenAIEnvironment = Literal["linux", "ubuntu", "browser", "windows", "mac"]
OPENAI_ENVIRONMENTS: tuple[str, ...] = ("linux", "ubuntu", "browser", "windows", "mac")


class ResultFormatError(ViewfinderError, ValueError):
    """A result or definition that cannot be put in the asked format."""


def anthropic_tool_definition(
    size: ComputerTool | Scaling | tuple[int, int],
    version: AnthropicVersion = "computer_20250124",
    *,
    enable_zoom: bool | None = None,
    display_number: int | None = None,
) -> dict[str, Any]:
    """Anthropic's computer tool definition for a tool (or a model size ``(w, h)``).

    ``enable_zoom`` defaults to True for ``computer_20251124`` (the version with the
    ``zoom`` action) and is refused for ``computer_20250124``.
    """
    if version not in ANTHROPIC_BETAS:
        raise ResultFormatError(
            f"unknown Anthropic computer tool version {version!r}; use "
            + " or ".join(ANTHROPIC_BETAS)
        )
    width, height = _model_size(size)
    definition: dict[str, Any] = {
        "type": version,
        "name": ANTHROPIC_TOOL_NAME,
        "display_width_px": width,
        "display_height_px": height,
    }
    if display_number is not None:
        definition["display_number"] = display_number
    if version == "computer_20251124":
        definition["enable_zoom"] = True if enable_zoom is None else enable_zoom
    elif enable_zoom:
        raise ResultFormatError("zoom needs the computer_20251124 tool version")
    return definition


def openai_tool_definition(
    size: ComputerTool | Scaling | tuple[int, int], environment: OpenAIEnvironment = "linux"
) -> dict[str, Any]:
    """OpenAI's ``computer_use_preview`` tool definition for a tool (or a size ``(w, h)``)."""
    if environment not in OPENAI_ENVIRONMENTS:
        raise ResultFormatError(
            f"unknown environment {environment!r}; use one of: {', '.join(OPENAI_ENVIRONMENTS)}"
        )
    width, height = _model_size(size)
    return {
        "type": OPENAI_TOOL_TYPE,
        "display_width": width,
        "display_height": height,
        "environment": environment,
    }


def to_anthropic_tool_result(result: ComputerResult, tool_use_id: str) -> dict[str, Any]:
    """A ``tool_result`` content block: the text (if any) and the screenshot as a base64
    image; an error is its message alone, with ``is_error`` set. When the screen had
    changed after the last screenshot, the screen just before the action comes first
    (``result.before``), as the text says. The elements' snapshot and the Set-of-Mark
    image follow the screenshot, when the result has them."""
    content: list[dict[str, Any]] = []
    if result.text:
        content.append({"type": "text", "text": result.text})
    shots = [] if result.is_error else [result.before, result.screenshot]
    for shot in shots:
        if shot is None:
            continue
        content.append(_anthropic_image(shot))
    if not result.is_error:
        if result.elements_text:
            content.append({"type": "text", "text": result.elements_text})
        if result.marked is not None:
            content.append(_anthropic_image(result.marked))
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": content,
        "is_error": result.is_error,
    }


def _anthropic_image(shot: Screenshot) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": shot.mime_type, "data": shot.b64()},
    }


def to_openai_computer_call_output(
    result: ComputerResult,
    call_id: str,
    *,
    acknowledged_safety_checks: Sequence[dict[str, Any]] | None = None,
    output_type: Literal["input_image", "computer_screenshot"] = "input_image",
) -> dict[str, Any]:
    """A ``computer_call_output`` input item carrying the screenshot as a data URL.

    ``output_type``: ``input_image`` (as OpenAI's computer-use guide and sample app send
    it) or ``computer_screenshot`` (the type the API reference names). The item has no
    room for text: an error's message goes in a message of its own
    (:func:`to_openai_input_items`). A result without a screenshot (the display was
    gone) raises :class:`ResultFormatError`.
    """
    if result.screenshot is None:
        raise ResultFormatError(
            f"the {result.action or 'failed'} result has no screenshot, which a "
            f"computer_call_output must carry ({result.error or result.text})"
        )
    output: dict[str, Any] = {"type": output_type, "image_url": result.screenshot.data_url()}
    item: dict[str, Any] = {"type": "computer_call_output", "call_id": call_id, "output": output}
    if acknowledged_safety_checks:
        item["acknowledged_safety_checks"] = [dict(check) for check in acknowledged_safety_checks]
    return item


def to_openai_input_items(
    result: ComputerResult,
    call_id: str,
    *,
    acknowledged_safety_checks: Sequence[dict[str, Any]] | None = None,
    output_type: Literal["input_image", "computer_screenshot"] = "input_image",
) -> list[dict[str, Any]]:
    """The input items that answer one ``computer_call``: its ``computer_call_output``,
    then, for an error, a user message with the error for the model to read, else, when
    the result has them, a user message with the elements' snapshot and the
    Set-of-Mark image (the output item holds one image and no text)."""
    items = [
        to_openai_computer_call_output(
            result,
            call_id,
            acknowledged_safety_checks=acknowledged_safety_checks,
            output_type=output_type,
        )
    ]
    if result.is_error:
        items.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": f"The computer action failed: {result.error}",
                    }
                ],
            }
        )
    elif result.elements_text or result.marked is not None:
        content: list[dict[str, Any]] = []
        if result.elements_text:
            content.append({"type": "input_text", "text": result.elements_text})
        if result.marked is not None:
            content.append({"type": "input_image", "image_url": result.marked.data_url()})
        items.append({"role": "user", "content": content})
    return items


def _model_size(size: Any) -> tuple[int, int]:
    model_size = getattr(size, "model_size", size)
    if (
        isinstance(model_size, tuple | list)
        and len(model_size) == 2
        and all(isinstance(value, int) and value > 0 for value in model_size)
    ):
        return (int(model_size[0]), int(model_size[1]))
    raise ResultFormatError(
        f"expected a ComputerTool, a Scaling or a (width, height) size, got {size!r}"
    )
