"""The one budget every result handed to a model passes: images and text sized per client.

A model's client refuses or mangles results past its limits: Claude Desktop takes tool
results under 1 MB, Claude Code refuses a result over 25,000 tokens (its
``MAX_MCP_OUTPUT_TOKENS``) and moves text over 50,000 characters to a file, the MCP
SDK's HTTP client drops a server-sent event over 1 MiB, and Anthropic's models see at
most 1568 px on the long edge and about 1.15 megapixels. :data:`CLIENT_BUDGETS` holds
one :class:`ResultBudget` per client; :func:`fit_image`, :func:`fit_text` and
:func:`fit_result` bring an image, a text or a whole :class:`~viewfinder.core.ToolResult`
within one. The desktop's computer tool, the MCP server and the server's desktop env all
use these, so there is one way a result is made to fit.

An image is scaled with a box filter (the fastest of Pillow's, and the best-behaved for
shrinking screens), sent as PNG when that fits, else as JPEG at falling quality, and
only then (when the caller left the scale free) made smaller. Where a result lost
pixels and the host can keep files, the full-size image is kept and the result links it
(MCP's ``resource_link``), with text saying so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from viewfinder.core import imaging
from viewfinder.core.errors import ScreenshotDecodeError, ViewfinderError
from viewfinder.core.screenshot import Screenshot
from viewfinder.core.tools import (
    Content,
    ImageContent,
    ResourceLinkContent,
    TextContent,
    ToolResult,
)

if TYPE_CHECKING:
    from PIL import Image


@dataclass(frozen=True)
class ResultBudget:
    """What one client accepts in one tool result.

    ``image_bytes`` caps one encoded image (before base64); ``result_bytes`` caps the
    whole result as JSON, base64 included; ``text_tokens`` and ``text_chars`` (0: no
    limit) cap the model-visible text; ``max_images`` the images in one result.
    """

    name: str
    image_long_edge: int = 1568
    image_max_pixels: int = 1_150_000
    image_bytes: int = 700_000
    result_bytes: int = 1_000_000
    max_images: int = 8
    text_tokens: int = 25_000
    text_chars: int = 0

    def replace(self, **changes: Any) -> ResultBudget:
        """A copy with ``changes`` (e.g. ``image_long_edge=1024``)."""
        return replace(self, **changes)

    def scale_for(self, width: int, height: int) -> float:
        """The largest factor (at most 1) that brings ``width`` x ``height`` within the
        long edge and pixel count."""
        from viewfinder.core.model_images import ImageLimits

        limits = ImageLimits(
            self.name, max_side=0, long_edge=self.image_long_edge, max_pixels=self.image_max_pixels
        )
        return limits.scale_for(width, height)


#: One budget per client, by the name ``--client`` takes.
CLIENT_BUDGETS: dict[str, ResultBudget] = {
    # tool results under 1 MB; Anthropic's image limits
    "claude-desktop": ResultBudget("claude-desktop"),
    # 25k tokens (MAX_MCP_OUTPUT_TOKENS); text past 50k characters is moved to a file
    "claude-code": ResultBudget("claude-code", text_chars=40_000),
    # Anthropic's and OpenAI's models behind it: the smaller of their image limits
    "cursor": ResultBudget("cursor", image_long_edge=1568, text_tokens=20_000),
    # any MCP client: the SDK's 1 MiB event, Anthropic's image limits
    "generic": ResultBudget("generic", result_bytes=1_000_000, image_bytes=700_000),
}
DEFAULT_CLIENT = "claude-desktop"

# JPEG qualities tried, in order, once PNG is over the budget
_QUALITIES = (85, 70, 55, 40, 30, 20)
# what a JSON result costs besides its parts (keys, brackets, MIME types)
_ENVELOPE_BYTES = 2_048
# how many times fit_image may shrink an image that no quality brought under budget
_MAX_SHRINKS = 6


class UnknownClientError(ViewfinderError, ValueError):
    """A client name that :data:`CLIENT_BUDGETS` does not hold."""

    def __init__(self, client: object) -> None:
        self.client = client
        super().__init__(
            f"no result budget for client {client!r}; use one of: "
            f"{', '.join(sorted(CLIENT_BUDGETS))}"
        )


def budget_for(client: str | ResultBudget | None = None) -> ResultBudget:
    """The budget of ``client`` (a name in :data:`CLIENT_BUDGETS`, or a budget as it is)."""
    if isinstance(client, ResultBudget):
        return client
    name = DEFAULT_CLIENT if client is None else client
    try:
        return CLIENT_BUDGETS[name]
    except (KeyError, TypeError):
        raise UnknownClientError(client) from None


@dataclass(frozen=True)
class FittedImage:
    """An image as a client gets it: ``screenshot`` is what is sent, ``scale`` its size
    over the source's, ``quality`` the JPEG quality (None: lossless as captured or PNG)."""

    screenshot: Screenshot
    scale: float
    source_width: int
    source_height: int
    quality: int | None = None
    changed: bool = False
    over_budget: bool = False

    def to_source(self, x: float, y: float) -> tuple[int, int]:
        """A point on the sent image as a point on the source (clamped into it)."""
        return (
            min(max(round(x / self.scale), 0), self.source_width - 1),
            min(max(round(y / self.scale), 0), self.source_height - 1),
        )

    def note(self, label: str = "the screenshot") -> str | None:
        """One sentence saying what was done to the image (size, scale, format), or None
        when it is sent as it was."""
        if not self.changed:
            return None
        shot = self.screenshot
        parts = [f"{label} is {shot.width}x{shot.height}"]
        if self.scale < 1.0:
            parts.append(
                f"scaled by {self.scale:.4g} from {self.source_width}x{self.source_height}"
            )
        if self.quality is not None:
            parts.append(f"sent as JPEG (quality {self.quality}) to fit the size limit")
        else:
            parts.append(f"sent as {shot.format.upper()}")
        return ", ".join(parts)


def _encode(image: Image.Image, fmt: str, quality: int | None, like: Screenshot) -> Screenshot:
    return Screenshot.from_image(
        image,
        source=like.source,
        format=fmt,
        quality=quality,
        region=like.region,
        captured_at=like.captured_at,
    )


def shrink_image(image: Image.Image, width: int, height: int) -> Image.Image:
    """``image`` at ``width`` x ``height`` (no larger than it), by the budget's fast
    filter: a whole-factor ``reduce()``, then a box filter for the rest. For a caller
    that has a frame not yet encoded (a grab of the screen) and would encode it once."""
    from PIL import Image as PILImage

    if (width, height) == image.size:
        return image
    # reduce() by a whole factor first (a plain block average, the cheapest step), then
    # a box filter for the rest
    factor = min(image.width // width, image.height // height)
    if factor >= 2:
        image = image.reduce(factor)
    if (width, height) == image.size:
        return image
    return image.resize((width, height), PILImage.Resampling.BOX)


def fit_image(
    shot: Screenshot,
    budget: ResultBudget | str | None = None,
    *,
    scale: float | None = None,
    max_bytes: int | None = None,
) -> FittedImage:
    """``shot`` within ``budget``: scaled, then re-encoded, until it fits.

    ``scale=None`` picks the largest scale within the budget's long edge and pixels and
    may go smaller when no JPEG quality fits ``max_bytes`` (default: the budget's
    ``image_bytes``); a given ``scale`` is kept exactly (a tool whose coordinates are
    fixed), and only the encoding changes. An image that fits as it is comes back
    without being decoded; one that cannot be brought under the bytes at a fixed scale
    comes back as the smallest tried with ``over_budget`` set.

    The image's header is read first: a size other than ``shot`` says, or more pixels
    than :data:`~viewfinder.core.imaging.MAX_DECODE_PIXELS`, raises
    :class:`~viewfinder.core.errors.ScreenshotDecodeError` (the latter
    :class:`~viewfinder.core.imaging.ImageTooLargeError`) before anything is decoded.
    """
    # a size another process (a session's worker) gave is checked before any decode
    imaging.check_header(shot.data, shot.width, shot.height)
    limits = budget_for(budget)
    cap = limits.image_bytes if max_bytes is None else max_bytes
    if cap <= 0:
        raise ValueError(f"max_bytes must be positive, not {cap}")
    free = scale is None
    factor = limits.scale_for(shot.width, shot.height) if scale is None else float(scale)
    if not 0 < factor <= 1:
        raise ValueError(f"scale must be in (0, 1], not {factor}")
    width = max(1, round(shot.width * factor))
    height = max(1, round(shot.height * factor))
    if (width, height) == (shot.width, shot.height) and len(shot.data) <= cap:
        return FittedImage(shot, 1.0, shot.width, shot.height)

    image = shot.to_pil()
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    best: Screenshot | None = None
    best_quality: int | None = None
    for _ in range(_MAX_SHRINKS + 1):
        scaled = shrink_image(image, width, height)
        # PNG when the source's bytes per pixel say it can fit: a busy screen's PNG is
        # several times its JPEG, and encoding it only to throw it away costs time
        png_guess = len(shot.data) * (width * height) / (shot.width * shot.height)
        if shot.format != "png" or png_guess <= cap * 1.5:
            candidate = _encode(scaled, "png", None, shot)
            if len(candidate.data) <= cap:
                return FittedImage(
                    candidate, width / shot.width, shot.width, shot.height, None, True
                )
        for quality in _QUALITIES:
            candidate = _encode(scaled, "jpeg", quality, shot)
            if best is None or len(candidate.data) < len(best.data):
                best, best_quality = candidate, quality
            if len(candidate.data) <= cap:
                return FittedImage(
                    candidate, width / shot.width, shot.width, shot.height, quality, True
                )
        if not free:
            break
        # smaller by what the lowest quality's size says is needed, with a margin
        shrink = min(0.9, math.sqrt(cap / len(candidate.data)) * 0.95)
        width, height = max(1, round(width * shrink)), max(1, round(height * shrink))
    if best is None:  # unreachable: every pass encodes at least one JPEG
        raise AssertionError("fit_image tried no encoding")
    return FittedImage(
        best, best.width / shot.width, shot.width, shot.height, best_quality, True, True
    )


def estimate_tokens(text: str) -> int:
    """A cautious count of the tokens ``text`` costs a model: one per three ASCII
    characters, one per other character (CJK text is about one token a character)."""
    # encoding drops the other characters in C: a per-character loop cost 100 ms a MB
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)


def fit_text(text: str, max_tokens: int, *, max_chars: int = 0) -> tuple[str, str | None]:
    """``text`` within ``max_tokens`` (and ``max_chars``, 0: none): its head and tail with
    a line in between saying how much was left out, and that note; the text as it is and
    None when it fits."""
    tokens = estimate_tokens(text)
    if tokens <= max_tokens and (not max_chars or len(text) <= max_chars):
        return text, None
    # the per-character cost of this text, to turn a token budget into characters
    per_char = max(tokens / max(len(text), 1), 1e-9)
    # the note and its two line breaks take at most this many characters
    reserve = 200
    keep = int(max_tokens / per_char * 0.97) - reserve
    if max_chars:
        keep = min(keep, max_chars - reserve)
    keep = max(keep, 0)
    head = text[: keep * 2 // 3]
    tail = text[len(text) - (keep - len(head)) :] if keep > len(head) else ""
    left_out = len(text) - len(head) - len(tail)
    note = (
        f"[{left_out} of {len(text)} characters left out here to fit the client's limit "
        f"of {max_tokens} tokens; the start and the end are kept]"
    )
    return f"{head}\n{note}\n{tail}", note


class FullSizeKeeper(Protocol):
    """Keeps a full-size image where the client can fetch it; returns (uri, description)."""

    def __call__(self, shot: Screenshot) -> tuple[str, str]: ...


def _structured_without_text(
    structured: Mapping[str, Any] | None, texts: list[str]
) -> dict[str, Any] | None:
    """``structured`` with every long string that a text part already carries left out
    (named under ``"in_text"``), so a client that shows both does not pay twice."""
    if structured is None:
        return None
    out: dict[str, Any] = {}
    moved: list[str] = []
    for key, value in structured.items():
        if isinstance(value, str) and len(value) > 200 and any(value in text for text in texts):
            moved.append(key)
            continue
        out[key] = value
    if moved:
        out["in_text"] = moved
    return out


def fit_result(
    result: ToolResult,
    budget: ResultBudget | str | None = None,
    *,
    keep: FullSizeKeeper | None = None,
) -> ToolResult:
    """``result`` within ``budget``, as a new result.

    Text over the token budget keeps its head and tail, shared among the text parts by
    their length; long strings of ``structured`` that the text carries are left out of
    it; images past ``max_images`` are dropped and every image is fitted with an equal
    share of what the text leaves of ``result_bytes``. Where an image lost pixels or
    was dropped and ``keep`` is given, the full-size image is kept and linked.
    """
    limits = budget_for(budget)
    texts = [part.text for part in result.content if isinstance(part, TextContent)]
    text_total = sum(estimate_tokens(text) for text in texts) or 1
    char_total = sum(len(text) for text in texts) or 1
    structured = _structured_without_text(result.structured, texts)

    images = [part.image for part in result.content if isinstance(part, ImageContent)]
    kept_images = images[: limits.max_images]
    text_bytes = sum(len(text.encode()) for text in texts) + len(
        json.dumps(structured or {}, ensure_ascii=False).encode()
    )
    room = limits.result_bytes - _ENVELOPE_BYTES - text_bytes - 200 * len(images)
    per_image = min(limits.image_bytes, max(room, 0) * 3 // 4 // max(len(kept_images), 1))

    content: list[Content] = []
    links: list[Content] = []
    notes: list[str] = []
    position = -1
    for part in result.content:
        if isinstance(part, TextContent):
            tokens = max(1, limits.text_tokens * estimate_tokens(part.text) // text_total)
            chars = limits.text_chars * len(part.text) // char_total if limits.text_chars else 0
            text, _ = fit_text(part.text, tokens, max_chars=chars)
            content.append(TextContent(text=text))
            continue
        if not isinstance(part, ImageContent):
            content.append(part)
            continue
        position += 1
        label = f"image {position + 1} of {len(images)}" if len(images) > 1 else "the image"
        if position >= limits.max_images:
            notes.append(f"{label} was left out (at most {limits.max_images} images a result)")
            if keep is not None:
                links.append(_link(keep, part.image))
            continue
        try:
            fitted = fit_image(part.image, limits, max_bytes=per_image) if per_image else None
        except ScreenshotDecodeError as exc:  # refused before decoding: say why, keep none
            notes.append(f"{label} was left out: {exc}")
            continue
        if fitted is None or fitted.over_budget:
            notes.append(f"{label} was left out: it does not fit the client's size limit")
            if keep is not None:
                links.append(_link(keep, part.image))
            continue
        content.append(ImageContent(image=fitted.screenshot))
        note = fitted.note(label)
        if note:
            notes.append(note)
            if keep is not None:
                links.append(_link(keep, part.image))
    if links:
        notes.append(
            "the full-size image is linked (read the resource to get it)"
            if len(links) == 1
            else "the full-size images are linked (read the resources to get them)"
        )
    if notes:
        content.append(TextContent(text="; ".join(notes) + "."))
    return result.model_copy(update={"content": content + links, "structured": structured})


def _link(keep: FullSizeKeeper, shot: Screenshot) -> ResourceLinkContent:
    uri, description = keep(shot)
    return ResourceLinkContent(
        uri=uri,
        name=uri.rsplit("/", 1)[-1] or "screenshot",
        mime_type=shot.mime_type,
        description=description,
        size=len(shot.data),
    )
