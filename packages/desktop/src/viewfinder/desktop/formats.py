"""A ComputerResult as each API wants it back, and each API's computer tool definition.

Anthropic (Messages API, beta computer use)::

    tools=[anthropic_tool_definition(tool, "computer_20251124")]
    betas=[ANTHROPIC_BETAS["computer_20251124"]]
    ... {"role": "user", "content": [to_anthropic_tool_result(result, block.id)]}

Anthropic's computer toolset (``computer_toolset_20260801``, one tool per member):
:mod:`viewfinder.desktop.computer_toolset`.

OpenAI (Responses API, the ``computer`` tool; a call may carry an ``actions`` batch)::

    tools=[openai_computer_tool_definition()]
    ... result = tool(item)    # the computer_call item: its action or actions, in order
    ... input=to_openai_input_items(result, item.call_id)

(``openai_tool_definition(tool)`` gives the older ``computer_use_preview`` tool.)

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
#: The GA computer tool's ``type`` (its calls may carry ``actions`` batches).
OPENAI_COMPUTER_TOOL_TYPE = "computer"
#: The side of the blank image a ``computer_call_output`` carries when there is no
#: screenshot (the display has gone): the item must carry an image, the message beside
#: it says why it is blank.
BLANK_SIDE = 8
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
    if version == "computer_toolset_20260801":
        raise ResultFormatError(
            "the computer toolset is a family of member tools with no display size; "
            "use viewfinder.desktop.computer_toolset.computer_toolset_definition()"
        )
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


def openai_computer_tool_definition() -> dict[str, Any]:
    """OpenAI's GA ``computer`` tool definition, ``{"type": "computer"}``: it carries no
    display size, the model's coordinates are those of the screenshots it gets."""
    return {"type": OPENAI_COMPUTER_TOOL_TYPE}


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
    output_type: Literal["computer_screenshot", "input_image"] = "computer_screenshot",
) -> dict[str, Any]:
    """A ``computer_call_output`` input item carrying the screenshot as a data URL.

    ``output_type``: ``computer_screenshot``, the only type the Responses API's types
    take there (``input_image`` is what early computer-use samples sent). The item has
    no room for text: the result's words go in a message of their own
    (:func:`to_openai_input_items`). A result without a screenshot (the display has
    gone) carries a small blank image, so every call is still answered.
    """
    shot = result.screenshot
    url = shot.data_url() if shot is not None else _blank_data_url()
    output: dict[str, Any] = {"type": output_type, "image_url": url}
    item: dict[str, Any] = {"type": "computer_call_output", "call_id": call_id, "output": output}
    if acknowledged_safety_checks:
        item["acknowledged_safety_checks"] = [dict(check) for check in acknowledged_safety_checks]
    return item


def to_openai_input_items(
    result: ComputerResult,
    call_id: str,
    *,
    acknowledged_safety_checks: Sequence[dict[str, Any]] | None = None,
    output_type: Literal["computer_screenshot", "input_image"] = "computer_screenshot",
) -> list[dict[str, Any]]:
    """The input items that answer one ``computer_call``: its ``computer_call_output``,
    then a user message with the result's text (what was done, whether the screen
    changed and settled, a change that came after the last screenshot; for an error,
    why it failed and, for a batch, which actions ran and which were skipped), the
    elements' snapshot and the Set-of-Mark image, when the result has them. Never raises:
    a display that has gone is answered too (a blank image and the error)."""
    items = [
        to_openai_computer_call_output(
            result,
            call_id,
            acknowledged_safety_checks=acknowledged_safety_checks,
            output_type=output_type,
        )
    ]
    content: list[dict[str, Any]] = []
    if result.is_error:
        shown = "" if result.screenshot is not None else " (no screenshot: the image is blank)"
        text = f"The computer action failed{shown}: {result.error or result.text}"
        if result.text and result.text != result.error and result.error:
            text += "\n" + result.text.removeprefix(result.error).strip()
        content.append({"type": "input_text", "text": text.strip()})
    elif result.text:
        content.append({"type": "input_text", "text": result.text})
    if not result.is_error:
        if result.elements_text:
            content.append({"type": "input_text", "text": result.elements_text})
        if result.marked is not None:
            content.append(
                {"type": "input_image", "image_url": result.marked.data_url(), "detail": "original"}
            )
    if content:
        items.append({"type": "message", "role": "user", "content": content})
    return items


def _blank_data_url() -> str:
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (BLANK_SIDE, BLANK_SIDE), (0, 0, 0)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


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
