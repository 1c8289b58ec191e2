"""Scaling: the model's size of a screen, and points mapped between the two exactly."""

from __future__ import annotations

import random

import pytest
from PIL import Image

from viewfinder.desktop import CoordinateRangeError, Scaling, ScalingError

SIZES = [
    ((1920, 1080), (1024, 768)),
    ((1920, 1080), (1366, 768)),
    ((1280, 800), (1024, 768)),
    ((2560, 1440), (1366, 768)),
    ((1366, 768), (1366, 768)),
    ((1000, 700), (999, 1)),
    ((3840, 2160), (1280, 800)),
]


@pytest.mark.parametrize(("screen", "model"), SIZES)
def test_model_to_screen_to_model_is_the_identity_on_every_axis_point(
    screen: tuple[int, int], model: tuple[int, int]
) -> None:
    scaling = Scaling(*screen, *model)
    # Each axis maps on its own, so every column and every row covers every point.
    for x in range(model[0]):
        sx, _ = scaling.to_screen(x, 0)
        assert 0 <= sx < screen[0]
        assert scaling.to_model(sx, 0)[0] == x
    for y in range(model[1]):
        _, sy = scaling.to_screen(0, y)
        assert 0 <= sy < screen[1]
        assert scaling.to_model(0, sy)[1] == y


def test_every_point_of_a_1920x1080_screen_seen_at_1024x768_maps_back_to_itself() -> None:
    scaling = Scaling.choose(1920, 1080, "XGA")
    for x in range(0, 1024, 3):
        for y in range(0, 768, 3):
            assert scaling.to_model(*scaling.to_screen(x, y)) == (x, y)
    for x, y in [(0, 0), (1023, 767), (1023, 0), (0, 767)]:
        assert scaling.to_model(*scaling.to_screen(x, y)) == (x, y)


def test_a_screen_point_lands_in_the_model_pixel_whose_run_holds_it() -> None:
    scaling = Scaling.choose(1920, 1080, "XGA")
    for sx in range(1920):
        mx, _ = scaling.to_model(sx, 0)
        run = scaling.box_to_screen((mx, 0, mx + 1, 1))
        assert run.x <= sx < run.right, (sx, mx)
    # the runs tile the screen: 1920 / 1024 is 1.875, so each run is one or two pixels
    widths = {scaling.box_to_screen((m, 0, m + 1, 1)).width for m in range(1024)}
    assert widths == {1, 2}


def test_auto_picks_the_standard_size_of_the_same_shape_like_the_reference() -> None:
    assert Scaling.choose(1920, 1080, "auto").model_size == (1366, 768)
    assert Scaling.choose(1920, 1200, "auto").model_size == (1280, 800)
    assert Scaling.choose(2048, 1536, "auto").model_size == (1024, 768)
    # not smaller than the screen, or no standard shape: left as it is
    assert Scaling.choose(1024, 768, "auto").model_size == (1024, 768)
    assert Scaling.choose(1000, 1000, "auto").model_size == (1000, 1000)
    assert not Scaling.choose(1000, 1000, "auto").scaled


def test_named_and_explicit_targets_and_maximums() -> None:
    assert Scaling.choose(1920, 1080, "XGA").model_size == (1024, 768)
    assert Scaling.choose(1920, 1080, "wxga").model_size == (1280, 800)
    assert Scaling.choose(1920, 1080, (800, 600)).model_size == (800, 600)
    assert Scaling.choose(1920, 1080).model_size == (1920, 1080)
    # never scaled up: a target larger on one axis leaves that axis alone
    assert Scaling.choose(1280, 720, "XGA").model_size == (1024, 720)
    # maximums keep the shape
    assert Scaling.choose(1920, 1080, max_width=1280).model_size == (1280, 720)
    assert Scaling.choose(1920, 1080, max_height=540).model_size == (960, 540)
    assert Scaling.choose(1920, 1080, max_width=1000, max_height=1000).model_size == (1000, 563)
    assert Scaling.choose(800, 600, max_width=1280).model_size == (800, 600)


@pytest.mark.parametrize(
    ("target", "options", "words"),
    [
        ("SVGA", {}, "unknown scaling target 'SVGA'; use auto, XGA (1024x768)"),
        ((0, 768), {}, "two positive integers"),
        ((1024,), {}, "two positive integers"),
        ("XGA", {"max_width": 800}, "either a target or max_width/max_height"),
        (None, {"max_width": -3}, "max_width must be a positive integer"),
    ],
)
def test_bad_targets_are_refused_saying_what_works(
    target: object, options: dict[str, int], words: str
) -> None:
    with pytest.raises(ScalingError) as raised:
        Scaling.choose(1920, 1080, target, **options)  # type: ignore[arg-type]
    assert words in str(raised.value)


def test_points_off_the_models_image_name_the_field_and_the_range() -> None:
    scaling = Scaling.choose(1920, 1080, "XGA")
    with pytest.raises(CoordinateRangeError) as raised:
        scaling.to_screen(1024, 10, field="start_coordinate")
    error = raised.value
    assert error.field == "start_coordinate"
    assert str(error) == (
        "start_coordinate: [1024, 10] is outside the 1024x768 screen; "
        "allowed: x from 0 to 1023 and y from 0 to 767"
    )
    with pytest.raises(CoordinateRangeError, match="0 <= x0 < x1 <= 1024"):
        scaling.box_to_screen((10, 10, 5, 20))


def test_a_box_covers_the_screen_pixels_of_its_model_pixels() -> None:
    scaling = Scaling.choose(1920, 1080, "XGA")
    whole = scaling.box_to_screen((0, 0, 1024, 768))
    assert whole.box == (0, 0, 1920, 1080)
    part = scaling.box_to_screen((512, 384, 1024, 768))
    assert part.box == (960, 540, 1920, 1080)


def test_frames_shrink_to_the_model_size_keeping_what_is_where() -> None:
    scaling = Scaling.choose(1920, 1080, "XGA")
    frame = Image.new("RGB", (1920, 1080), (255, 255, 255))
    frame.paste((200, 30, 30), (960, 540, 1920, 1080))  # the bottom-right quarter
    for resample in ("box", "lanczos"):
        small = scaling.scale_image(frame, resample)  # type: ignore[arg-type]
        assert small.size == (1024, 768)
        rng = random.Random(4)
        for _ in range(200):
            x, y = rng.randrange(1024), rng.randrange(768)
            sx, sy = scaling.to_screen(x, y)
            if abs(sx - 960) > 4 and abs(sy - 540) > 4:  # away from the edge of the quarter
                assert small.getpixel((x, y)) == frame.getpixel((sx, sy))
    with pytest.raises(ScalingError, match="expected a 1920x1080 frame"):
        scaling.scale_image(Image.new("RGB", (10, 10)))
    with pytest.raises(ScalingError, match="unknown resampling filter"):
        scaling.scale_image(frame, "sinc")  # type: ignore[arg-type]
