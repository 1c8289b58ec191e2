"""The one result budget: images and text brought within what a client accepts."""

from __future__ import annotations

import json
import os

import pytest
from PIL import Image, ImageDraw

from viewfinder.core import Screenshot, ToolResult
from viewfinder.core.result_budget import (
    CLIENT_BUDGETS,
    ResultBudget,
    UnknownClientError,
    budget_for,
    estimate_tokens,
    fit_image,
    fit_result,
    fit_text,
)

BLUE = (20, 60, 220)


def _screen(width: int = 1920, height: int = 1080, *, noisy: bool = False) -> Screenshot:
    """A white screen with a blue rectangle at (400, 300)-(800, 600); ``noisy`` fills the
    rest with random pixels (photo-like content that PNG cannot shrink)."""
    if noisy:
        image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        image = Image.new("RGB", (width, height), "white")
    ImageDraw.Draw(image).rectangle((400, 300, 799, 599), fill=BLUE)
    return Screenshot.from_image(image, source="test")


def _near(pixel: tuple[int, int, int], colour: tuple[int, int, int], tolerance: int = 40) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=True))


def _mcp_bytes(result: ToolResult) -> int:
    return len(json.dumps(result.to_mcp()).encode())


def test_a_screen_is_scaled_within_the_long_edge_and_pixels_and_keeps_its_picture() -> None:
    shot = _screen()
    fitted = fit_image(shot)
    sent = fitted.screenshot
    assert max(sent.width, sent.height) <= 1568
    assert sent.width * sent.height <= 1_150_000
    assert sent.format == "png"  # a flat screen fits as PNG
    assert len(sent.data) <= CLIENT_BUDGETS["claude-desktop"].image_bytes
    # the blue rectangle is blue where it was drawn, scaled
    x, y = round(600 * fitted.scale), round(450 * fitted.scale)
    assert _near(sent.pixel(x, y), BLUE)
    assert _near(sent.pixel(round(200 * fitted.scale), y), (255, 255, 255))
    assert fitted.to_source(x, y) == pytest.approx((600, 450), abs=2)
    note = fitted.note()
    assert note is not None
    assert f"{sent.width}x{sent.height}" in note
    assert "1920x1080" in note
    assert "PNG" in note


def test_a_busy_screen_goes_to_jpeg_under_the_byte_budget() -> None:
    shot = _screen(noisy=True)
    assert len(shot.data) > 5_000_000
    fitted = fit_image(shot, "claude-desktop")
    assert fitted.screenshot.format == "jpeg"
    assert len(fitted.screenshot.data) <= CLIENT_BUDGETS["claude-desktop"].image_bytes
    assert fitted.quality is not None
    assert not fitted.over_budget
    x, y = round(600 * fitted.scale), round(450 * fitted.scale)
    assert _near(fitted.screenshot.pixel(x, y), BLUE)
    assert f"quality {fitted.quality}" in (fitted.note() or "")


def test_a_fixed_scale_is_kept_exactly_and_only_the_encoding_changes() -> None:
    shot = _screen(noisy=True)
    fitted = fit_image(shot, scale=1024 / 1920)
    assert (fitted.screenshot.width, fitted.screenshot.height) == (1024, 576)
    assert len(fitted.screenshot.data) <= CLIENT_BUDGETS["claude-desktop"].image_bytes


def test_a_free_scale_goes_smaller_when_no_quality_fits() -> None:
    shot = _screen(noisy=True)
    fitted = fit_image(shot, max_bytes=60_000)
    assert len(fitted.screenshot.data) <= 60_000
    assert fitted.screenshot.width < 1568
    assert not fitted.over_budget


def test_a_fixed_scale_that_cannot_fit_says_so() -> None:
    shot = _screen(noisy=True)
    fitted = fit_image(shot, scale=1.0, max_bytes=5_000)
    assert fitted.over_budget
    assert (fitted.screenshot.width, fitted.screenshot.height) == (1920, 1080)


def test_an_image_within_the_budget_is_sent_as_it_was() -> None:
    shot = _screen(800, 600)
    fitted = fit_image(shot)
    assert fitted.screenshot is shot
    assert fitted.note() is None
    assert fitted.scale == 1.0


@pytest.mark.parametrize("scale", [0, -1, 1.5])
def test_a_scale_out_of_range_is_refused(scale: float) -> None:
    with pytest.raises(ValueError, match="scale must be in"):
        fit_image(_screen(64, 64), scale=scale)


def test_an_unknown_client_is_a_typed_error_naming_the_known_ones() -> None:
    with pytest.raises(UnknownClientError, match="claude-code") as caught:
        budget_for("claude-mobile")
    assert "claude-mobile" in str(caught.value)
    assert budget_for(None).name == "claude-desktop"
    custom = ResultBudget("mine", image_long_edge=512)
    assert budget_for(custom) is custom
    assert custom.replace(text_tokens=10).text_tokens == 10


def test_text_keeps_its_head_and_tail_within_the_tokens() -> None:
    text = "".join(f"line {i}\n" for i in range(200_000))
    fitted, note = fit_text(text, 25_000)
    assert estimate_tokens(fitted) <= 25_000
    assert fitted.startswith("line 0\nline 1\n")
    assert fitted.endswith("line 199999\n")
    assert note is not None
    assert note in fitted
    assert f"of {len(text)} characters left out" in note
    assert fit_text("short", 10) == ("short", None)


def test_text_of_wide_characters_counts_one_token_a_character() -> None:
    text = "東京都渋谷区" * 10_000
    assert estimate_tokens(text) == len(text)
    fitted, note = fit_text(text, 1_000)
    assert estimate_tokens(fitted) <= 1_000
    assert note is not None


def test_a_character_cap_holds_beside_the_tokens() -> None:
    fitted, note = fit_text("x" * 100_000, 100_000, max_chars=40_000)
    assert len(fitted) <= 40_000
    assert note is not None


def test_a_code_run_result_fits_and_its_structure_does_not_repeat_the_text() -> None:
    stdout = "".join(f"out {i}\n" for i in range(150_000))  # ~1 MB
    result = ToolResult.of(
        f"exit code 0\nstdout:\n{stdout}",
        structured={"exit_code": 0, "stdout": stdout, "stderr": ""},
    )
    fitted = fit_result(result, "claude-code")
    assert estimate_tokens(fitted.text) <= 25_000
    assert len(fitted.text) <= 40_000
    assert fitted.structured == {"exit_code": 0, "stderr": "", "in_text": ["stdout"]}
    assert "out 149999" in fitted.text
    assert _mcp_bytes(fitted) < 1_000_000


def test_many_busy_images_share_the_result_bytes_and_link_their_full_size() -> None:
    shots = [_screen(noisy=True) for _ in range(3)]
    kept: list[Screenshot] = []

    def keep(shot: Screenshot) -> tuple[str, str]:
        kept.append(shot)
        return f"viewfinder://frames/{len(kept)}.png", "the full-size frame"

    result = ToolResult.of("three frames", *shots)
    fitted = fit_result(result, "generic", keep=keep)
    assert _mcp_bytes(fitted) < 1_000_000
    assert len(fitted.images) == 3
    assert [shot.data for shot in kept] == [shot.data for shot in shots]
    links = [part for part in fitted.to_mcp()["content"] if part["type"] == "resource_link"]
    assert [link["uri"] for link in links] == [f"viewfinder://frames/{i}.png" for i in (1, 2, 3)]
    assert all(link["mimeType"] == "image/png" for link in links)
    assert "linked" in fitted.text


def test_images_past_the_count_are_left_out_with_a_note() -> None:
    shots = [_screen(64, 48) for _ in range(10)]
    fitted = fit_result(ToolResult.of(*shots), ResultBudget("few", max_images=8))
    assert len(fitted.images) == 8
    assert "image 9 of 10 was left out" in fitted.text
    assert "image 10 of 10 was left out" in fitted.text


def test_a_result_within_the_budget_keeps_its_parts() -> None:
    shot = _screen(320, 200)
    result = ToolResult.of("clicked", shot, structured={"ok": True})
    fitted = fit_result(result)
    assert fitted.text == "clicked"
    assert fitted.images[0] is shot
    assert fitted.structured == {"ok": True}
    assert fitted.links == []
