"""Every image a ComputerTool returns, within its client's result budget.

The screen is shrunk to the model size (:class:`~viewfinder.desktop.scaling.Scaling`,
box filter), encoded in the tool's format (PNG by default), and passed through
:func:`viewfinder.core.result_budget.fit_image` at that fixed size: a frame whose PNG is
over the budget's bytes (a photo, a video) is sent as JPEG at the highest quality that
fits, never at another size, so the model's coordinates stay those of the screenshots
it got. A zoom is the region at the screen's resolution, shrunk only as far as the
budget's long edge, pixels and bytes ask. The text for the model says the size, the
format and the scale (:meth:`ModelImages.describe`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from viewfinder.core import ElementTree, Screenshot
from viewfinder.core.geometry import Region
from viewfinder.core.result_budget import ResultBudget, fit_image

if TYPE_CHECKING:
    from PIL import Image

    from viewfinder.desktop.scaling import Resample, Scaling


def model_size_within(width: int, height: int, budget: ResultBudget) -> tuple[int, int] | None:
    """The largest size of a ``width`` x ``height`` screen, same shape, within the
    budget's long edge and pixels; None when the screen fits as it is."""
    scale = budget.scale_for(width, height)
    if scale >= 1.0:
        return None
    return (max(1, int(width * scale)), max(1, int(height * scale)))


class ModelImages:
    """Frames at the model size and zooms, encoded within ``budget``."""

    def __init__(
        self, scaling: Scaling, budget: ResultBudget, image_format: str, resample: Resample
    ) -> None:
        self.scaling = scaling
        self.budget = budget
        self.image_format = image_format
        self.resample: Resample = resample
        self._last: tuple[Image.Image, Screenshot, int] | None = None

    def frame(
        self, frame: Image.Image, captured_at: datetime | None = None, *, shared: int = 1
    ) -> Screenshot:
        """The whole screen at the model size, within the budget; ``shared``: how many
        images the result carries (each gets its share of the result's bytes). The last
        one is kept: the same frame asked for again costs nothing."""
        if self._last is not None and self._last[0] is frame and self._last[2] == shared:
            return self._last[1]
        shot = self._encode(self.scaling.scale_image(frame, self.resample), captured_at)
        share = (self.budget.result_bytes * 3 // 4 - 4096) // shared  # base64: 4 bytes per 3
        cap = min(self.budget.image_bytes, share)
        fitted = fit_image(shot, self.budget, scale=1.0, max_bytes=cap).screenshot
        self._last = (frame, fitted, shared)
        return fitted

    def marked(self, shot: Screenshot, tree: ElementTree, shared: int) -> Screenshot:
        """``shot`` (a frame at the model size) with the numbered boxes of ``tree``'s
        elements drawn on it (Set-of-Mark), within the budget like a frame."""
        from viewfinder.core.element_snapshot import set_of_mark

        drawn = set_of_mark(shot, tree, scale=self.scaling.factors)
        drawn = (
            self._encode(drawn.to_pil(), shot.captured_at) if self.image_format != "png" else drawn
        )
        share = (self.budget.result_bytes * 3 // 4 - 4096) // shared
        cap = min(self.budget.image_bytes, share)
        return fit_image(drawn, self.budget, scale=1.0, max_bytes=cap).screenshot

    def zoom(
        self, frame: Image.Image, region: Region, captured_at: datetime | None = None
    ) -> tuple[Screenshot, str]:
        """``region`` of the screen at its resolution, shrunk only as the budget asks;
        with the words that say what the image is."""
        shot = self._encode(frame.crop(region.box), captured_at, region)
        fitted = fit_image(shot, self.budget)
        sent = fitted.screenshot
        scale = (
            "at the screen's full resolution"
            if fitted.scale >= 1.0
            else f"scaled by {fitted.scale:.3g} from the screen's {region.width}x{region.height} "
            f"px to fit the {self.budget.name} image limit"
        )
        model_width, model_height = self.scaling.model_size
        return sent, (
            f"that region {scale} ({self._format_of(sent)}, {sent.width}x{sent.height}); "
            f"coordinates of actions stay those of the {model_width}x{model_height} "
            "screenshots, not of this image"
        )

    def describe(self, shot: Screenshot) -> str:
        """What a frame is, in a few words: size, format and the screen it shows."""
        screen_width, screen_height = self.scaling.screen_size
        of = (
            f" of the {screen_width}x{screen_height} screen"
            if self.scaling.scaled
            else ", the screen at full size"
        )
        return f"screenshot {shot.width}x{shot.height} {self._format_of(shot)}{of}"

    def _format_of(self, shot: Screenshot) -> str:
        return shot.format.upper()

    def _encode(
        self, image: Image.Image, captured_at: datetime | None, region: Region | None = None
    ) -> Screenshot:
        return Screenshot.from_image(
            image, source="xvfb", format=self.image_format, region=region, captured_at=captured_at
        )
