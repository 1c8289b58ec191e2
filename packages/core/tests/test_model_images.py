"""Model image limits: the one table, the scale it gives, and pixels that stay put."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw

from viewfinder.core import Screenshot
from viewfinder.core.model_images import (
    IMAGE_LIMITS,
    ImageLimits,
    UnknownProviderError,
    fit_for_model,
    limits_for,
)


@pytest.mark.parametrize(
    ("provider", "size", "expected"),
    [
        ("anthropic", (1280, 800), (1280, 800)),  # within every limit: untouched
        ("anthropic", (3000, 100), (1568, 52)),  # long edge
        ("anthropic", (1920, 1080), (1430, 804)),  # 1.15 megapixels
        ("anthropic", (1280, 20000), (100, 1568)),  # a tall full-page capture
        ("openai", (1280, 800), (1229, 768)),  # short side 768
        ("openai", (4096, 1000), (2048, 500)),  # 2048 square
    ],
)
def test_each_provider_scales_to_its_published_limits(
    provider: str, size: tuple[int, int], expected: tuple[int, int]
) -> None:
    scale = limits_for(provider).scale_for(*size)
    assert (round(size[0] * scale), round(size[1] * scale)) == expected
    assert scale <= 1.0


def test_every_scaled_size_fits_the_hard_limit() -> None:
    for limits in IMAGE_LIMITS.values():
        for size in [(9000, 9000), (8001, 10), (10, 50000), (100000, 100000)]:
            scale = limits.scale_for(*size)
            assert max(size) * scale <= limits.max_side


def test_a_large_screenshot_is_scaled_and_its_points_map_back() -> None:
    image = Image.new("RGB", (3200, 2000), "white")
    ImageDraw.Draw(image).rectangle((2000, 1200, 2399, 1599), fill=(0, 0, 255))
    shot = Screenshot.from_image(image, source="test")

    fitted = fit_for_model(shot, "anthropic")

    assert fitted.scaled
    sent = fitted.screenshot
    assert max(sent.size) <= 1568 and sent.width * sent.height <= 1_150_000
    assert sent.format == "png" and sent.source == "test"
    assert fitted.scale == pytest.approx(sent.width / 3200, abs=1e-9)
    # the middle of the blue square on the sent image is still blue, and maps back into it
    x, y = round(2200 * fitted.scale), round(1400 * fitted.scale)
    assert sent.pixel(x, y) == (0, 0, 255)
    back_x, back_y = fitted.to_source(x, y)
    assert 2000 <= back_x <= 2399 and 1200 <= back_y <= 1599
    assert shot.pixel(back_x, back_y) == (0, 0, 255)
    assert sent.pixel(round(1000 * fitted.scale), round(500 * fitted.scale)) == (255, 255, 255)
    note = fitted.note("screenshot 1")
    assert note is not None and "3200x2000" in note and f"{sent.width}x{sent.height}" in note


def test_a_small_screenshot_is_passed_through_untouched() -> None:
    shot = Screenshot.from_image(Image.new("RGB", (640, 480), "red"), source="test", format="jpeg")
    fitted = fit_for_model(shot)
    assert fitted.screenshot is shot
    assert (fitted.scale, fitted.scaled, fitted.note()) == (1.0, False, None)
    assert fitted.to_source(700, -5) == (639, 0)  # clamped into the source


def test_jpeg_stays_jpeg_and_custom_limits_are_taken_as_they_are() -> None:
    shot = Screenshot.from_image(Image.new("RGB", (1000, 500), "red"), source="t", format="jpeg")
    fitted = fit_for_model(shot, ImageLimits("tiny", max_side=200, long_edge=100))
    assert (fitted.screenshot.format, fitted.screenshot.size) == ("jpeg", (100, 50))


@pytest.mark.parametrize("provider", ["gemini", "", 3])
def test_an_unknown_provider_is_a_clear_error(provider: object) -> None:
    with pytest.raises(UnknownProviderError, match="anthropic, openai"):
        limits_for(provider)  # type: ignore[arg-type]
