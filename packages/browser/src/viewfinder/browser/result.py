"""What one ``browser_execute`` call returns: output, return value and screenshots.

Screenshots travel as images, never as base64 text inside the output: a model reads
them as vision input through :attr:`ExecuteResult.attachments`, ready-made content
blocks for the Anthropic and OpenAI message formats.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core import Screenshot
from viewfinder.core.model_images import ImageLimits, fit_for_model

#: Why a call failed: bad tool input, a snippet that does not compile, one that raised,
#: one that ran past its timeout, or a browser that could not be reached or went away.
ErrorKind = Literal["input", "syntax", "exception", "timeout", "browser"]


@dataclass(frozen=True)
class ImageAttachment:
    """One screenshot as image content blocks for model APIs.

    ``anthropic`` is a Messages API ``image`` block (it goes inside a ``tool_result``'s
    content or a user message); ``openai`` a Chat Completions ``image_url`` content part;
    ``openai_responses`` a Responses API ``input_image`` (it goes inside a
    ``function_call_output``'s output list).
    """

    media_type: str
    data: str  # standard base64 of the encoded image
    width: int
    height: int
    #: The image's size over the screenshot's: below 1 when it was scaled down to what
    #: the model accepts (divide a point read off the image by it for page pixels).
    scale: float = 1.0

    @classmethod
    def of(
        cls, screenshot: Screenshot, provider: str | ImageLimits | None = None
    ) -> ImageAttachment:
        """``screenshot`` as an attachment, scaled down to ``provider``'s limits
        (see :data:`viewfinder.core.model_images.IMAGE_LIMITS`)."""
        fitted = fit_for_model(screenshot, provider)
        shot = fitted.screenshot
        return cls(
            media_type=shot.mime_type,
            data=shot.b64(),
            width=shot.width,
            height=shot.height,
            scale=fitted.scale,
        )

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.data}"

    @property
    def anthropic(self) -> dict[str, Any]:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": self.media_type, "data": self.data},
        }

    @property
    def openai(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": self.data_url, "detail": "auto"}}

    @property
    def openai_responses(self) -> dict[str, Any]:
        return {"type": "input_image", "image_url": self.data_url, "detail": "auto"}


class ExecuteError(BaseModel):
    """Why a call did not complete: its kind, the exception's type name and message, and
    for snippet exceptions a traceback showing only the snippet's own lines."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ErrorKind
    type: str
    message: str
    traceback: str | None = None


class ExecuteResult(BaseModel):
    """The outcome of one ``browser_execute`` call.

    ``output`` is what the snippet printed, then the error report (if any), then the
    return value (if any), and always ends with a line counting the attached
    screenshots; it is the text a model should read. ``result`` is the snippet's return
    value as JSON data (see docs/browser.md for how values that are not JSON are
    shown). ``screenshots`` holds every successful ``Page.captureScreenshot`` the
    snippet made, in call order, including those taken before an error or timeout.
    ``files`` are the copies the disk dump wrote and ``warnings`` what went wrong on the
    side (a dump that could not be written) without failing the call.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    call_id: str
    session_id: str
    description: str | None = None
    output: str
    result: Any = None
    screenshots: list[Screenshot] = Field(default_factory=list)
    error: ExecuteError | None = None
    started_at: datetime
    elapsed_ms: float
    files: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the snippet ran to its end."""
        return self.error is None

    @cached_property
    def attachments(self) -> list[ImageAttachment]:
        """The screenshots as image content blocks, in call order, each scaled down to
        what Anthropic's models see (:meth:`attachments_for` names another provider)."""
        return self.attachments_for(None)

    def attachments_for(self, provider: str | ImageLimits | None) -> list[ImageAttachment]:
        """The screenshots as image content blocks scaled to ``provider``'s limits."""
        return [ImageAttachment.of(shot, provider) for shot in self.screenshots]

    def text_for(self, attachments: list[ImageAttachment]) -> str:
        """:attr:`output`, with a line per scaled image saying how to map its
        coordinates back to page pixels."""
        notes = [
            f"Screenshot {number} is scaled to {image.width}x{image.height} "
            f"({image.scale:.4g} of the page's pixels): divide coordinates read off it by "
            f"{image.scale:.4g}."
            for number, image in enumerate(attachments, 1)
            if image.scale < 1.0
        ]
        return "\n".join([self.output, *notes])

    def summary(self) -> dict[str, Any]:
        """This result as JSON data without the image bytes (for logs and ``--json``)."""
        data = self.model_dump(mode="json", exclude={"screenshots"})
        data["screenshots"] = [
            shot.model_dump(mode="json", exclude={"data"}) | {"bytes": len(shot.data)}
            for shot in self.screenshots
        ]
        return data


def count_line(count: int) -> str:
    """The last line of every output: how many screenshots are attached."""
    if count == 0:
        return "[no screenshots attached]"
    return f"[{count} screenshot{'s' if count != 1 else ''} attached]"
