"""Steps as a recording gives them: a tool_use block and the frame the screen showed before it.

Every source (a model's message history, a core Trajectory, a recorder session) is first
turned into a list of :class:`RecordedStep`; :mod:`viewfinder.cache.recording` then
hashes them. Frames are decoded only when a step needs its hash, and each once.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.cache.errors import SourceError
from viewfinder.cache.models import TokenUsage, ToolUseBlock
from viewfinder.core import imaging
from viewfinder.core.errors import ScreenshotDecodeError
from viewfinder.core.geometry import Point
from viewfinder.core.screenshot import Screenshot


class Frame:
    """A screenshot known as base64 text, a Screenshot or a PIL image; decoded on demand.

    ``origin`` is where the frame's top-left corner is on the screen (a region capture).
    """

    def __init__(
        self,
        *,
        b64: str | None = None,
        screenshot: Screenshot | None = None,
        image: Image.Image | None = None,
        path: Path | None = None,
        origin: Point | None = None,
        label: str = "frame",
    ) -> None:
        self._path = path
        self._b64 = b64
        self._screenshot = screenshot
        self._image = image
        self.origin = origin or Point(x=0, y=0)
        self.label = label

    @cached_property
    def image(self) -> Image.Image:
        """The frame as a PIL image (decoded the first time it is asked for)."""
        if self._image is not None:
            return self._image
        if self._screenshot is not None:
            return self._screenshot.to_pil()
        if self._path is not None:
            try:
                return imaging.decode(self._path.read_bytes())
            except (OSError, ScreenshotDecodeError) as exc:
                raise SourceError(f"{self.label} ({self._path}) cannot be read: {exc}") from exc
        assert self._b64 is not None
        try:
            return imaging.decode(base64.b64decode(self._b64, validate=True))
        except (binascii.Error, ValueError, ScreenshotDecodeError) as exc:
            raise SourceError(f"{self.label} is not a readable base64 image: {exc}") from exc

    def release(self) -> None:
        """Forget the decoded image (it is decoded again if asked for): builds stream."""
        if self._image is None:
            self.__dict__.pop("image", None)


@dataclass
class RecordedStep:
    """One step of a recording and the frame seen just before it (None if none was)."""

    block: ToolUseBlock
    frame: Frame | None


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def _image_frame(block: Mapping[str, Any], label: str) -> Frame | None:
    source = block.get("source")
    if not isinstance(source, Mapping) or source.get("type") != "base64":
        return None  # a URL image: nothing to hash it from
    data = source.get("data")
    if not isinstance(data, str):
        raise SourceError(f"{label}: image source has no base64 'data'")
    return Frame(b64=data, label=label)


def steps_from_messages(
    messages: Iterable[Any],
) -> tuple[list[RecordedStep], TokenUsage | None]:
    """The tool_use steps of an Anthropic messages history, each with its pre-action frame.

    The frame of a step is the most recent image before it in the history: an image
    block in a user message or inside a tool_result. ``usage`` numbers on the
    messages are added up.
    """
    steps: list[RecordedStep] = []
    usage: TokenUsage | None = None
    latest: Frame | None = None
    for number, message in enumerate(messages):
        if not isinstance(message, Mapping) or "content" not in message:
            raise SourceError(
                f"message {number} is not a message object with 'role' and 'content'; "
                "expected the Anthropic messages format"
            )
        if isinstance(message.get("usage"), Mapping):
            usage = usage or TokenUsage()
            usage.add(dict(message["usage"]))
        for position, block in enumerate(_blocks(message["content"])):
            if not isinstance(block, Mapping):
                continue
            label = f"message {number} block {position}"
            kind = block.get("type")
            if kind == "image":
                latest = _image_frame(block, label) or latest
            elif kind == "tool_result":
                for inner in _blocks(block.get("content")):
                    if isinstance(inner, Mapping) and inner.get("type") == "image":
                        latest = _image_frame(inner, label) or latest
            elif kind == "tool_use":
                steps.append(RecordedStep(_tool_use(block, label), latest))
    return steps, usage


def _tool_use(block: Mapping[str, Any], label: str) -> ToolUseBlock:
    fields = {key: block[key] for key in ("id", "name", "input", "cache_control") if key in block}
    if not isinstance(fields.get("id"), str) or not isinstance(fields.get("name"), str):
        raise SourceError(f"{label}: a tool_use block needs string 'id' and 'name'")
    if not isinstance(fields.get("input", {}), dict):
        raise SourceError(f"{label}: tool_use 'input' must be an object")
    return ToolUseBlock.model_validate(fields)


def frame_of(screenshot: Screenshot | None, label: str) -> Frame | None:
    """A :class:`Frame` for a core Screenshot (keeping where a region capture sits)."""
    if screenshot is None:
        return None
    region = screenshot.region
    origin = Point(x=region.x, y=region.y) if region is not None else None
    return Frame(screenshot=screenshot, origin=origin, label=label)
