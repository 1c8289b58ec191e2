"""Screen and model coordinates: the size a model sees the screen at, and exact mapping.

A model works best on screenshots of a standard size (Anthropic recommends XGA 1024x768,
WXGA 1280x800 or FWXGA 1366x768), so :class:`Scaling` shrinks each frame to a *model
size* and maps the points the model names back to the screen. Each axis is scaled on
its own, as in Anthropic's reference implementation (1920x1080 shown as 1024x768 is
squeezed a little vertically).

The mapping is exact and reversible: a model pixel ``m`` stands for the screen pixels
``s`` with ``m == s * model // screen`` (a run of one or two screen pixels when the
screen is up to twice as large), and :meth:`Scaling.to_screen` picks the middle of that
run. So ``to_model(*to_screen(x, y)) == (x, y)`` for every point of the model's image,
and a point the model reads off a screenshot lands on the screen pixel that the image's
pixel was made from. Frames are never scaled up: a target larger than the screen on an
axis leaves that axis as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from viewfinder.core.errors import ViewfinderError
from viewfinder.core.geometry import Region
from viewfinder.desktop.actions import CoordinateRangeError

if TYPE_CHECKING:
    from PIL import Image

    from viewfinder.core.result_budget import ResultBudget

#: The standard sizes, by name (as Anthropic's reference implementation names them).
TARGETS: dict[str, tuple[int, int]] = {
    "XGA": (1024, 768),  # 4:3
    "WXGA": (1280, 800),  # 16:10
    "FWXGA": (1366, 768),  # ~16:9
}
#: How far a screen's aspect ratio may be from a target's for ``target="auto"`` to pick it.
ASPECT_TOLERANCE = 0.02

TargetName = Literal["auto", "XGA", "WXGA", "FWXGA"]
Resample = Literal["box", "lanczos", "bicubic", "hamming", "bilinear"]
RESAMPLE_FILTERS: tuple[Resample, ...] = ("box", "lanczos", "bicubic", "hamming", "bilinear")
Target = TargetName | tuple[int, int] | None


class ScalingError(ViewfinderError, ValueError):
    """A scaling target or size limit that cannot be used."""


@dataclass(frozen=True)
class Scaling:
    """How a ``screen_width`` x ``screen_height`` screen is shown to a model.

    Build one with :meth:`choose`. ``model_width`` x ``model_height`` is the size of
    the screenshots the model gets and the coordinate space of its actions.
    """

    screen_width: int
    screen_height: int
    model_width: int
    model_height: int

    def __post_init__(self) -> None:
        sizes = (self.screen_width, self.screen_height, self.model_width, self.model_height)
        if any(not isinstance(value, int) or value <= 0 for value in sizes):
            raise ScalingError(f"sizes must be positive whole numbers of pixels, got {sizes}")
        if self.model_width > self.screen_width or self.model_height > self.screen_height:
            raise ScalingError(
                f"a {self.model_width}x{self.model_height} model size is larger than the "
                f"{self.screen_width}x{self.screen_height} screen; frames are never scaled up"
            )

    @classmethod
    def choose(
        cls,
        screen_width: int,
        screen_height: int,
        target: Target = None,
        *,
        max_width: int | None = None,
        max_height: int | None = None,
        budget: ResultBudget | None = None,
    ) -> Scaling:
        """The scaling of a screen for a model.

        ``target`` is None (no scaling), ``"auto"`` (the standard size whose aspect
        ratio is within :data:`ASPECT_TOLERANCE` of the screen's and that is smaller
        than the screen, as Anthropic's reference implementation picks it; for any other
        shape the screen itself; either shrunk, keeping its shape, to within ``budget``'s
        long edge and pixels, default Claude's 1568 px and 1.15 megapixels, so the
        client never shrinks the image again and the model's points stay exact), a
        name in :data:`TARGETS` (``"XGA"``, ``"WXGA"``, ``"FWXGA"``) or a ``(width,
        height)``. An axis of the target larger than the screen's stays
        unscaled. ``max_width`` / ``max_height`` instead shrink the screen, keeping its
        aspect ratio, until it fits within them. Raises :class:`ScalingError` for an
        unknown name, a size that is not two positive integers, or a target together
        with a maximum.
        """
        if target is not None and (max_width is not None or max_height is not None):
            raise ScalingError(
                "give either a target or max_width/max_height, not both: a target sets "
                "the model's size, the maximums shrink the screen keeping its shape"
            )
        screen = (screen_width, screen_height)
        if max_width is not None or max_height is not None:
            return cls(*screen, *_fit_within(screen_width, screen_height, max_width, max_height))
        if target is None:
            return cls(*screen, *screen)
        if isinstance(target, str):
            name = target.strip()
            if name.lower() == "auto":
                return cls(*screen, *_auto_size(screen_width, screen_height, budget))
            upper = name.upper()
            if upper not in TARGETS:
                raise ScalingError(
                    f"unknown scaling target {target!r}; use auto, "
                    + ", ".join(f"{key} ({w}x{h})" for key, (w, h) in TARGETS.items())
                    + ", a (width, height) pair, or None for no scaling"
                )
            width, height = TARGETS[upper]
        else:
            width, height = _pair(target)
        return cls(*screen, min(width, screen_width), min(height, screen_height))

    # -- facts ---------------------------------------------------------------------------

    @property
    def screen_size(self) -> tuple[int, int]:
        return (self.screen_width, self.screen_height)

    @property
    def model_size(self) -> tuple[int, int]:
        """The size of the screenshots the model gets: the space of its coordinates."""
        return (self.model_width, self.model_height)

    @property
    def factors(self) -> tuple[float, float]:
        """Model pixels per screen pixel on each axis, ``(x, y)``: how an element's box
        in screen pixels meets the model's image (a 1280x800 screen at XGA: 0.8, 0.96)."""
        return (self.model_width / self.screen_width, self.model_height / self.screen_height)

    @property
    def scaled(self) -> bool:
        """True when the model sees the screen at another size than it is."""
        return self.model_size != self.screen_size

    # -- points ----------------------------------------------------------------------------

    def to_screen(self, x: int, y: int, *, field: str = "coordinate") -> tuple[int, int]:
        """The screen pixel a model point stands for.

        Raises :class:`~viewfinder.desktop.actions.CoordinateRangeError` (naming
        ``field`` and the allowed range) when the point is off the model's image.
        """
        self.check_model_point(x, y, field=field)
        return (
            _middle_of_run(x, self.screen_width, self.model_width),
            _middle_of_run(y, self.screen_height, self.model_height),
        )

    def to_model(self, x: int, y: int) -> tuple[int, int]:
        """The model pixel showing screen pixel ``(x, y)`` (clamped onto the screen)."""
        x = min(max(int(x), 0), self.screen_width - 1)
        y = min(max(int(y), 0), self.screen_height - 1)
        return (
            x * self.model_width // self.screen_width,
            y * self.model_height // self.screen_height,
        )

    def check_model_point(self, x: int, y: int, *, field: str = "coordinate") -> None:
        """Raise :class:`CoordinateRangeError` unless ``(x, y)`` is on the model's image."""
        if not (0 <= x < self.model_width and 0 <= y < self.model_height):
            raise CoordinateRangeError(
                field,
                f"[{x}, {y}] is outside the {self.model_width}x{self.model_height} screen",
                f"x from 0 to {self.model_width - 1} and y from 0 to {self.model_height - 1}",
            )

    def box_to_screen(self, box: tuple[int, int, int, int], *, field: str = "region") -> Region:
        """A model-space box ``(x0, y0, x1, y1)`` (x1, y1 exclusive) as a screen region.

        The region covers exactly the screen pixels of the model pixels in the box.
        """
        x0, y0, x1, y1 = box
        width, height = self.model_width, self.model_height
        if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
            raise CoordinateRangeError(
                field,
                f"{list(box)} is not a box on the {width}x{height} screen",
                f"[x0, y0, x1, y1] with 0 <= x0 < x1 <= {width} and 0 <= y0 < y1 <= {height}",
            )
        left = _run_start(x0, self.screen_width, width)
        top = _run_start(y0, self.screen_height, height)
        right = _run_start(x1, self.screen_width, width)
        bottom = _run_start(y1, self.screen_height, height)
        return Region(x=left, y=top, width=right - left, height=bottom - top)

    def screen_distance(self, dx: float, dy: float) -> tuple[float, float]:
        """A distance in model pixels (a scroll's ``scroll_x``, ``scroll_y``) on the screen."""
        return (
            dx * self.screen_width / self.model_width,
            dy * self.screen_height / self.model_height,
        )

    # -- images ------------------------------------------------------------------------------

    def scale_image(self, image: Image.Image, resample: Resample = "box") -> Image.Image:
        """``image`` (the whole screen) at the model size.

        ``box`` (the default) makes each model pixel the average of the screen pixels it
        stands for (the runs :meth:`to_model` maps to it), the best-behaved filter for
        shrinking by up to 2x and the fastest one (a third of ``lanczos``'s time at
        1920x1080 -> 1024x768); ``lanczos``, ``bicubic``, ``hamming`` and ``bilinear``
        are Pillow's other filters. An image already at the model size is returned as it is.
        """
        if image.size == self.model_size:
            return image
        if image.size != self.screen_size:
            raise ScalingError(
                f"expected a {self.screen_width}x{self.screen_height} frame of the screen, "
                f"got {image.width}x{image.height}"
            )
        from PIL import Image as PILImage

        try:
            method = PILImage.Resampling[resample.upper()]
        except KeyError:
            raise ScalingError(
                f"unknown resampling filter {resample!r}; use box, lanczos, bicubic, hamming "
                "or bilinear"
            ) from None
        return image.resize(self.model_size, method)

    def describe(self) -> str:
        """One line for people and models: the two sizes and how they relate."""
        if not self.scaled:
            return f"screen {self.screen_width}x{self.screen_height}, shown at full size"
        return (
            f"screen {self.screen_width}x{self.screen_height}, shown to the model at "
            f"{self.model_width}x{self.model_height}; coordinates are in the model's space"
        )


def _run_start(model: int, screen_size: int, model_size: int) -> int:
    """The first screen pixel ``s`` with ``s * model_size // screen_size == model``."""
    return -(-model * screen_size // model_size)


def _middle_of_run(model: int, screen_size: int, model_size: int) -> int:
    first = _run_start(model, screen_size, model_size)
    last = _run_start(model + 1, screen_size, model_size) - 1
    return (first + last) // 2


def _auto_target(width: int, height: int) -> tuple[int, int] | None:
    ratio = width / height
    for target_width, target_height in TARGETS.values():
        if abs(target_width / target_height - ratio) < ASPECT_TOLERANCE:
            if target_width < width and target_height <= height:
                return (target_width, target_height)
            return None  # the matching target is not smaller: keep the screen as it is
    return None


def _auto_size(width: int, height: int, budget: ResultBudget | None) -> tuple[int, int]:
    """``auto``'s model size: the standard size of the screen's shape, else the screen,
    within the budget's image limits (an ultrawide or 5:4 screen matches no standard
    size, and at full size is over them)."""
    from viewfinder.core.result_budget import budget_for

    size = _auto_target(width, height) or (width, height)
    scale = budget_for(budget).scale_for(*size)
    if scale >= 1.0:
        return size
    return (max(1, int(size[0] * scale)), max(1, int(size[1] * scale)))


def _pair(target: object) -> tuple[int, int]:
    if (
        isinstance(target, tuple | list)
        and len(target) == 2
        and all(isinstance(value, int) and not isinstance(value, bool) for value in target)
        and all(value > 0 for value in target)
    ):
        return (target[0], target[1])
    raise ScalingError(
        f"a scaling target must be auto, XGA, WXGA, FWXGA or (width, height) with two "
        f"positive integers, got {target!r}"
    )


def _fit_within(
    width: int, height: int, max_width: int | None, max_height: int | None
) -> tuple[int, int]:
    for name, value in (("max_width", max_width), ("max_height", max_height)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value <= 0
        ):
            raise ScalingError(f"{name} must be a positive integer or None, got {value!r}")
    scale = min(
        1.0,
        (max_width or width) / width,
        (max_height or height) / height,
    )
    fitted_width = min(max_width or width, max(1, math.floor(width * scale + 0.5)))
    fitted_height = min(max_height or height, max(1, math.floor(height * scale + 0.5)))
    return (min(fitted_width, width), min(fitted_height, height))
