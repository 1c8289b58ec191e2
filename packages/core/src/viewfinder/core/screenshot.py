"""The Screenshot model: encoded image bytes plus what is known about them."""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from viewfinder.core import imaging
from viewfinder.core.errors import OutputPathError, RegionError, ScreenshotDecodeError
from viewfinder.core.geometry import Region
from viewfinder.core.imaging import ImageFormat


def utc_now() -> datetime:
    return datetime.now(UTC)


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("timestamps must carry a time zone (viewfinder stores UTC)")
    return value.astimezone(UTC)


class Screenshot(BaseModel):
    """One captured frame.

    ``data`` holds the encoded image (PNG, JPEG or WebP); in JSON it is standard
    base64. ``region`` is the part of the source screen the frame shows, or None for
    the whole screen. Build one with :meth:`from_image` or a backend's ``capture()``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: bytes = Field(repr=False)
    format: ImageFormat = "png"
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    captured_at: datetime = Field(default_factory=utc_now)
    source: str = "unknown"
    region: Region | None = None

    @field_validator("data", mode="before")
    @classmethod
    def _decode_base64(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ValueError(
                    f"data is not valid base64 ({exc}); encode the image bytes with "
                    "standard base64 (RFC 4648, with padding)"
                ) from exc
        return value

    @field_validator("captured_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return _as_utc(value)

    @model_validator(mode="after")
    def _data_matches_format(self) -> Screenshot:
        found = imaging.sniff_format(self.data)
        if found is None:
            raise ValueError(
                "data is not a PNG, JPEG or WebP image (its first bytes match none of them)"
            )
        if found != self.format:
            raise ValueError(f"format says {self.format!r} but data holds a {found!r} image")
        return self

    @field_serializer("data", when_used="json")
    def _encode_base64(self, value: bytes) -> str:
        return base64.b64encode(value).decode("ascii")

    # -- construction ---------------------------------------------------------

    @classmethod
    def from_image(
        cls,
        image: Image.Image,
        *,
        source: str,
        format: str = "png",
        region: Region | None = None,
        quality: int | None = None,
        captured_at: datetime | None = None,
    ) -> Screenshot:
        """Encode a PIL image into a Screenshot."""
        fmt = imaging.normalize_format(format)
        return cls(
            data=imaging.encode(image, fmt, quality),
            format=fmt,
            width=image.width,
            height=image.height,
            captured_at=captured_at or utc_now(),
            source=source,
            region=region,
        )

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str, region: Region | None = None) -> Screenshot:
        """Wrap already-encoded image bytes, reading the format and size from them."""
        fmt = imaging.sniff_format(data)
        if fmt is None:
            raise ScreenshotDecodeError("bytes are not a PNG, JPEG or WebP image")
        image = imaging.decode(data)
        return cls(
            data=data,
            format=fmt,
            width=image.width,
            height=image.height,
            source=source,
            region=region,
        )

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, source: str = "file") -> Screenshot:
        """Read an image file into a Screenshot."""
        return cls.from_bytes(Path(path).read_bytes(), source=source)

    @classmethod
    def from_json(cls, text: str | bytes) -> Screenshot:
        """Parse Screenshot JSON, raising :class:`ScreenshotDecodeError` with the reason."""
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise ScreenshotDecodeError(f"invalid Screenshot JSON: {exc}") from exc

    # -- views ----------------------------------------------------------------

    @property
    def mime_type(self) -> str:
        return imaging.MIME_TYPES[self.format]

    @property
    def size(self) -> tuple[int, int]:
        return (self.width, self.height)

    def b64(self) -> str:
        """The image bytes as standard base64 text."""
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.mime_type};base64,{self.b64()}"

    def to_pil(self) -> Image.Image:
        """Decode into a PIL image (RGB or RGBA)."""
        return imaging.decode(self.data)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the image bytes to ``path`` atomically and return the path.

        A directory gets a generated file name; a name without a suffix gets the format's.
        Raises :class:`~viewfinder.core.errors.OutputPathError` when it cannot be written.
        """
        target = Path(path)
        if target.is_dir():
            stamp = self.captured_at.strftime("%Y%m%dT%H%M%S%fZ")
            target = target / f"{self.source}-{stamp}.{self.extension}"
        elif not target.suffix:
            target = target.with_suffix(f".{self.extension}")
        tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(self.data)
            os.replace(tmp, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise OutputPathError(target, exc.strerror or str(exc)) from exc
        return target

    @property
    def extension(self) -> str:
        return "jpg" if self.format == "jpeg" else self.format

    def crop(self, region: Region) -> Screenshot:
        """The part of this frame inside ``region`` (in this frame's own pixel space)."""
        region.check_within(self.width, self.height)
        origin = self.region or Region(x=0, y=0, width=self.width, height=self.height)
        absolute = Region(
            x=origin.x + region.x, y=origin.y + region.y, width=region.width, height=region.height
        )
        cropped = self.to_pil().crop(region.box)
        return Screenshot.from_image(
            cropped,
            source=self.source,
            format=self.format,
            region=absolute,
            captured_at=self.captured_at,
        )

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        """The RGB colour at ``(x, y)`` of this frame (handy in tests and checks)."""
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise RegionError(f"pixel ({x}, {y}) is outside the {self.width}x{self.height} frame")
        value = self.to_pil().convert("RGB").getpixel((x, y))
        assert isinstance(value, tuple)
        return (int(value[0]), int(value[1]), int(value[2]))
