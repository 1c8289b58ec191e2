"""Comparing a step's stored hash with the live screen, through any capture backend."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from PIL import Image

from viewfinder.cache.actions import action_point, describe, point_field
from viewfinder.cache.errors import StepCoordinateError
from viewfinder.cache.hashing import hamming_distance, hasher, region_around
from viewfinder.cache.models import CacheFile, ToolUseBlock, VisualValidationSettings
from viewfinder.cache.regions import (
    COLOUR_TOLERANCE,
    apply_masks,
    colour_distance,
    colour_signature,
    masks_in,
)
from viewfinder.core.backend import CaptureBackend
from viewfinder.core.errors import RegionError
from viewfinder.core.geometry import Point, Region

#: Hamming distance accepted when neither the caller nor the file says (askui's default).
DEFAULT_THRESHOLD = 10


@dataclass(frozen=True)
class StepCheck:
    """One step's stored hash against the live screen."""

    index: int
    action: str
    region: Region | None
    stored_hash: str
    live_hash: str
    distance: int
    threshold: int
    #: largest channel difference of the quarters' mean colours (None: no colour stored)
    colour_distance: int | None = None
    colour_tolerance: int = COLOUR_TOLERANCE

    @property
    def colour_passed(self) -> bool:
        """True when the colours are close enough (or the file stored none)."""
        return self.colour_distance is None or self.colour_distance <= self.colour_tolerance

    @property
    def passed(self) -> bool:
        """True when the live region is close enough: hash within the threshold, colours too."""
        return self.distance <= self.threshold and self.colour_passed


def effective_threshold(visual: VisualValidationSettings, override: int | None) -> int:
    """The threshold to use: the caller's, else the file's, else :data:`DEFAULT_THRESHOLD`."""
    if override is not None:
        return override
    return visual.threshold if visual.threshold is not None else DEFAULT_THRESHOLD


class LiveScreen:
    """The screen behind a capture backend, as images of the regions replay checks."""

    def __init__(self, backend: CaptureBackend) -> None:
        self.backend = backend
        self._size: tuple[int, int] | None = None

    @property
    def size(self) -> tuple[int, int]:
        """Width and height of the screen (asked once)."""
        if self._size is None:
            self._size = self.backend.screen_size()
        return self._size

    def image(self, region: Region | None, context: dict[str, Any]) -> Image.Image:
        """``region`` of the screen now (all of it when None), captured through the backend."""
        return self.backend.capture(region=region, context=context).to_pil()


class VisualChecker:
    """Checks steps of one cache file against a live screen; made once per replay.

    Making it warms the hasher, so no step pays for importing scipy or pywt.
    """

    def __init__(
        self,
        cache: CacheFile,
        threshold: int | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.visual = cache.visual
        self.threshold = effective_threshold(self.visual, threshold)
        self.path = path
        self.hasher = hasher(self.visual.method, self.visual.hash_size)

    def region_for(
        self, index: int, block: ToolUseBlock, screen_size: tuple[int, int]
    ) -> Region | None:
        """The region hashed for ``block`` on a screen of ``screen_size``; None: all of it."""
        point = check_point(block)
        width, height = screen_size
        try:
            return region_around(point, self.visual.region_size, width, height)
        except RegionError as exc:
            raise StepCoordinateError(
                f"{exc}; the screen is smaller than when this step was recorded",
                path=self.path,
                step=index,
                field=f"trajectory[{index}].{point_field(block.input)}",
            ) from exc

    def check(
        self, index: int, block: ToolUseBlock, screen: LiveScreen
    ) -> tuple[StepCheck, Image.Image]:
        """Hash the live region of a hashed step; the comparison and the live region image."""
        assert block.visual_representation is not None
        region = self.region_for(index, block, screen.size)
        live = screen.image(region, {"purpose": "cache-validation", "step": index})
        whole = region or Region(x=0, y=0, width=live.width, height=live.height)
        live = apply_masks(live, masks_in(whole, block_masks(block)))
        live_hash = self.hasher.hash_image(live)
        colour = (
            colour_distance(block.visual_colour, colour_signature(live))
            if block.visual_colour
            else None
        )
        result = StepCheck(
            index=index,
            action=describe(block),
            region=region,
            stored_hash=block.visual_representation,
            live_hash=live_hash,
            distance=hamming_distance(block.visual_representation, live_hash),
            threshold=self.threshold,
            colour_distance=colour,
        )
        return result, live


def check_point(block: ToolUseBlock) -> Point | None:
    """The point a step's region is centred on: its action's, else its ``visual_point``."""
    point = action_point(block.input)
    if point is None and block.visual_point is not None and len(block.visual_point) == 2:
        point = Point(x=int(block.visual_point[0]), y=int(block.visual_point[1]))
    return point


def block_masks(block: ToolUseBlock) -> list[Region]:
    """The screen rectangles a step's check paints grey (``visual_mask``)."""
    return [
        Region(x=x, y=y, width=width, height=height)
        for x, y, width, height in (block.visual_mask or [])
    ]


def check_steps(
    backend: CaptureBackend,
    cache: CacheFile,
    threshold: int | None = None,
    path: str | os.PathLike[str] | None = None,
) -> list[StepCheck]:
    """Every hashed step of ``cache`` against the live screen, without acting on anything.

    Empty when the file has no active visual validation.
    """
    if not cache.visual.active:
        return []
    checker = VisualChecker(cache, threshold, path)
    screen = LiveScreen(backend)
    return [
        checker.check(index, block, screen)[0]
        for index, block in enumerate(cache.trajectory)
        if block.visual_representation is not None
    ]
