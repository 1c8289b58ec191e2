"""What size of image a model accepts, and screenshots scaled to fit it.

Model APIs refuse images past a size, and shrink large ones themselves (at the cost of
tokens and upload time for pixels the model never sees). :data:`IMAGE_LIMITS` is the one
table of those sizes; :func:`fit_for_model` scales a screenshot down to its target and
says by how much, so a point the model reads off the scaled image maps back to the
screen with :meth:`ScaledImage.to_source`.

The figures are the providers' published ones (late 2025):

- Anthropic refuses an image over 8000 px on a side (2000 px when a request holds more
  than 20 images), and recommends at most 1568 px on the long edge and about 1.15
  megapixels: larger images are scaled down by the API before the model sees them.
- OpenAI, at ``detail: "high"``, fits an image in a 2048 px square, then scales it so
  its short side is at most 768 px.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from viewfinder.core.errors import ViewfinderError
from viewfinder.core.screenshot import Screenshot


@dataclass(frozen=True)
class ImageLimits:
    """The sizes one provider's models take.

    ``max_side`` is the hard limit (larger is refused); ``long_edge``, ``short_edge`` and
    ``max_pixels`` describe the largest image the model really sees (0: no such limit).
    """

    provider: str
    max_side: int
    long_edge: int
    short_edge: int = 0
    max_pixels: int = 0

    def scale_for(self, width: int, height: int) -> float:
        """The factor (at most 1) that brings a ``width`` x ``height`` image within these
        limits."""
        scale = 1.0
        long_side, short_side = max(width, height), min(width, height)
        for limit in (self.max_side, self.long_edge):
            if limit and long_side * scale > limit:
                scale = limit / long_side
        if self.short_edge and short_side * scale > self.short_edge:
            scale = self.short_edge / short_side
        if self.max_pixels and width * height * scale * scale > self.max_pixels:
            scale = math.sqrt(self.max_pixels / (width * height))
        return scale


#: The one table of model image limits, by provider name.
IMAGE_LIMITS: dict[str, ImageLimits] = {
    "anthropic": ImageLimits("anthropic", max_side=8000, long_edge=1568, max_pixels=1_150_000),
    "openai": ImageLimits("openai", max_side=2048, long_edge=2048, short_edge=768),
}
#: The provider whose limits apply when none is named.
DEFAULT_PROVIDER = "anthropic"


class UnknownProviderError(ViewfinderError, ValueError):
    """A provider name that :data:`IMAGE_LIMITS` does not hold."""

    def __init__(self, provider: object) -> None:
        self.provider = provider
        super().__init__(
            f"no image limits for provider {provider!r}; "
            f"use one of: {', '.join(sorted(IMAGE_LIMITS))}"
        )


def limits_for(provider: str | ImageLimits | None = None) -> ImageLimits:
    """The limits of ``provider`` (a name in :data:`IMAGE_LIMITS`, or limits as they are)."""
    if isinstance(provider, ImageLimits):
        return provider
    try:
        return IMAGE_LIMITS[DEFAULT_PROVIDER if provider is None else provider]
    except (KeyError, TypeError):
        raise UnknownProviderError(provider) from None


@dataclass(frozen=True)
class ScaledImage:
    """A screenshot as a model gets it: ``screenshot`` is the image sent, ``scale`` its
    size over the source's (1.0 when it was small enough already)."""

    screenshot: Screenshot
    scale: float
    source_width: int
    source_height: int

    @property
    def scaled(self) -> bool:
        return self.scale < 1.0

    def to_source(self, x: float, y: float) -> tuple[int, int]:
        """A point on the sent image as a point on the source (clamped into it)."""
        return (
            min(max(round(x / self.scale), 0), self.source_width - 1),
            min(max(round(y / self.scale), 0), self.source_height - 1),
        )

    def note(self, label: str = "the image") -> str | None:
        """One sentence for the model saying how to map coordinates back, or None."""
        if not self.scaled:
            return None
        return (
            f"{label} was scaled from {self.source_width}x{self.source_height} to "
            f"{self.screenshot.width}x{self.screenshot.height} (scale {self.scale:.4g}); "
            f"divide coordinates read off it by {self.scale:.4g} for page pixels"
        )


def fit_for_model(screenshot: Screenshot, provider: str | ImageLimits | None = None) -> ScaledImage:
    """``screenshot`` scaled down (never up) to what ``provider``'s models see, in its
    own format; an image within the limits is returned as it is, without decoding."""
    limits = limits_for(provider)
    scale = limits.scale_for(screenshot.width, screenshot.height)
    if scale >= 1.0:
        return ScaledImage(screenshot, 1.0, screenshot.width, screenshot.height)
    from viewfinder.core.result_budget import shrink_image

    width = max(1, round(screenshot.width * scale))
    height = max(1, round(screenshot.height * scale))
    image = screenshot.to_pil()
    if image.mode not in ("RGB", "RGBA", "L"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    smaller = shrink_image(image, width, height)
    resized = Screenshot.from_image(
        smaller,
        source=screenshot.source,
        format=screenshot.format,
        region=screenshot.region,
        captured_at=screenshot.captured_at,
    )
    return ScaledImage(resized, width / screenshot.width, screenshot.width, screenshot.height)
