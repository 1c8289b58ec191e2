"""Points and rectangles on a screen, in pixels, origin at the top-left corner."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core.errors import RegionError


class Point(BaseModel):
    """A pixel position on a screen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    x: int
    y: int

    def as_tuple(self) -> tuple[int, int]:
        return (self.x, self.y)


class Region(BaseModel):
    """A rectangle on a screen: top-left corner ``(x, y)`` and a positive size."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    x: int = Field(ge=0)
    y: int = Field(ge=0)
    width: int = Field(gt=0)
    height: int = Field(gt=0)

    @property
    def right(self) -> int:
        """One past the last column."""
        return self.x + self.width

    @property
    def bottom(self) -> int:
        """One past the last row."""
        return self.y + self.height

    @property
    def box(self) -> tuple[int, int, int, int]:
        """``(left, top, right, bottom)`` as PIL's ``crop`` takes it."""
        return (self.x, self.y, self.right, self.bottom)

    @property
    def center(self) -> Point:
        return Point(x=self.x + self.width // 2, y=self.y + self.height // 2)

    @classmethod
    def parse(cls, text: str) -> Region:
        """Parse ``"X,Y,W,H"`` (as the command line takes it), or ``"WxH+X+Y"`` (X11 style)."""
        cleaned = text.strip()
        try:
            if "x" in cleaned and "+" in cleaned:
                size, left, top = cleaned.split("+")
                across, down = size.split("x")
                x, y, w, h = int(left), int(top), int(across), int(down)
            else:
                x, y, w, h = (int(part) for part in cleaned.split(","))
        except ValueError as exc:
            raise RegionError(
                f"cannot read region {text!r}: write it as X,Y,WIDTH,HEIGHT (e.g. 10,20,300,200)"
            ) from exc
        if x < 0 or y < 0 or w <= 0 or h <= 0:
            raise RegionError(
                f"region {text!r} is not on a screen: X and Y must be 0 or more, WIDTH and "
                "HEIGHT more than 0 (e.g. 10,20,300,200)"
            )
        return cls(x=x, y=y, width=w, height=h)

    @classmethod
    def around(cls, point: Point, size: int, screen_width: int, screen_height: int) -> Region:
        """The square of side ``size`` centred on ``point``, clipped to the screen."""
        if size <= 0:
            raise RegionError(f"region size must be positive, got {size}")
        if not (0 <= point.x < screen_width and 0 <= point.y < screen_height):
            raise RegionError(
                f"point ({point.x}, {point.y}) is outside the {screen_width}x{screen_height} screen"
            )
        half = size // 2
        left = max(0, point.x - half)
        top = max(0, point.y - half)
        right = min(screen_width, point.x - half + size)
        bottom = min(screen_height, point.y - half + size)
        return cls(x=left, y=top, width=right - left, height=bottom - top)

    def check_within(self, screen_width: int, screen_height: int) -> None:
        """Raise :class:`RegionError` unless the region lies wholly on the screen."""
        if self.right > screen_width or self.bottom > screen_height:
            raise RegionError(
                f"region x={self.x} y={self.y} width={self.width} height={self.height} "
                f"reaches past the {screen_width}x{screen_height} screen; "
                f"keep x+width <= {screen_width} and y+height <= {screen_height}"
            )

    def __str__(self) -> str:
        return f"{self.x},{self.y},{self.width},{self.height}"
