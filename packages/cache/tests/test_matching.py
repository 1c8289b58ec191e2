"""Template matching and the heal's arithmetic, on drawn pictures (the real-app test is
test_healing.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from viewfinder.cache import (
    CacheExecutor,
    ExecutionSettings,
    ReplayStatus,
    ToolUseBlock,
    build_from_messages,
)
from viewfinder.cache.heal import Heal, is_enabled, names_a_target, shifted
from viewfinder.cache.matching import (
    MAX_DIFFERING_SHARE,
    MAX_WINDOW_DIFFERING,
    MIN_TEMPLATE_MARGIN,
    densest,
    find_template,
)
from viewfinder.core import Point, Region
from viewfinder.core.element import Element, ElementAnchor
from viewfinder.core.testing import Canvas, CanvasBackend

GREY = (232, 232, 232)


def button(draw: ImageDraw.ImageDraw, x: int, y: int) -> None:
    draw.rectangle((x, y, x + 89, y + 33), (25, 140, 50))
    draw.polygon([(x + 20, y + 8), (x + 40, y + 17), (x + 20, y + 26)], (255, 255, 255))
    draw.rectangle((x + 52, y + 8, x + 69, y + 25), (255, 255, 255))


def screen(*places: tuple[int, int]) -> Image.Image:
    image = Image.new("RGB", (600, 400), GREY)
    draw = ImageDraw.Draw(image)
    for x, y in places:
        button(draw, x, y)
    return image


def test_a_moved_picture_is_found_where_it_is_with_confidence() -> None:
    template = screen((40, 40)).crop((35, 7, 135, 107))  # the region around (85, 57)
    match = find_template(screen((160, 200)), template)
    assert match is not None
    assert (match.x, match.y) == (155, 167)
    assert match.score > 0.99 and match.confident
    assert match.runner_up < match.score - MIN_TEMPLATE_MARGIN


def test_a_twin_makes_the_match_ambiguous() -> None:
    template = screen((40, 40)).crop((35, 7, 135, 107))
    match = find_template(screen((160, 200), (400, 60)), template)
    assert match is not None and match.score > 0.99
    assert match.runner_up > 0.99 and not match.confident


def test_a_look_alike_with_another_label_is_not_the_same_pixels() -> None:
    def labelled(x: int, label: str) -> Image.Image:
        image = Image.new("RGB", (600, 400), GREY)
        draw = ImageDraw.Draw(image)
        draw.rectangle((x, 40, x + 79, 73), (30, 90, 200))
        draw.text((x + 12, 50), label, fill=(255, 255, 255))
        return image

    template = labelled(40, "Bold").crop((30, 7, 130, 107))
    match = find_template(labelled(250, "Panel"), template)
    assert match is not None
    assert match.score > 0.9 and match.score - match.runner_up > MIN_TEMPLATE_MARGIN
    assert match.differing > MAX_DIFFERING_SHARE and not match.confident
    same = find_template(labelled(250, "Bold"), template)
    assert same is not None and same.differing == 0.0 and same.confident


BLUE = (32, 96, 192)


def pay(y: int, label: str = "Pay $10", colour: tuple[int, int, int] = BLUE) -> Image.Image:
    """A 96x32 button with a 13 px label at (60, y) on a grey screen."""
    image = Image.new("RGB", (600, 400), GREY)
    draw = ImageDraw.Draw(image)
    draw.rectangle((60, y, 155, y + 31), colour)
    font = ImageFont.load_default(size=13)
    draw.text((108, y + 16), label, fill=(255, 255, 255), font=font, anchor="mm")
    return image


PAY = pay(80).crop((58, 46, 158, 146))  # the 100 px region around the button


def test_one_changed_glyph_is_a_dense_cluster_and_never_confident() -> None:
    moved = find_template(pay(200), PAY)
    assert moved is not None and (moved.x, moved.y) == (58, 166)
    assert (moved.differing, moved.densest) == (0.0, 0) and moved.confident
    for label in ("Pay $18", "Pay $16"):
        match = find_template(pay(200, label), PAY)
        assert match is not None and (match.x, match.y) == (58, 166)
        # a high unique peak, and too few pixels off for a share of the region to see
        assert match.score > 0.99 and match.score - match.runner_up > MIN_TEMPLATE_MARGIN
        assert match.differing < MAX_DIFFERING_SHARE
        assert match.densest > 10 * MAX_WINDOW_DIFFERING and not match.confident


def test_a_darker_shade_of_the_button_is_not_the_same_pixels() -> None:
    # each channel 32 off: within the 40 a pixel used to be allowed, yet another button
    match = find_template(pay(200, colour=(0, 64, 160)), PAY)
    assert match is not None and match.score > 0.999 and not match.confident


def test_a_stray_pixel_is_allowed_and_two_together_are_not() -> None:
    screen = pay(200)
    screen.putpixel((70, 180), (0, 0, 0))  # background above the button
    match = find_template(screen, PAY)
    assert match is not None and match.densest == 1 and match.confident
    screen.putpixel((71, 181), (0, 0, 0))
    match = find_template(screen, PAY)
    assert match is not None and match.densest == 2 and not match.confident


def test_the_densest_square_counts_differing_pixels_close_together() -> None:
    off = np.zeros((20, 30), bool)
    off[0, 0] = off[19, 29] = True
    assert densest(off) == 1
    off[10:13, 10:13] = True
    assert densest(off) == 9
    assert densest(np.ones((3, 4), bool)) == 12  # smaller than a square


def test_a_search_at_a_shrunk_scale_is_never_confident() -> None:
    # the same pixels, but shrunk: a changed glyph would be blurred away
    match = find_template(pay(200), PAY, scale=0.64)
    assert match is not None and match.score > 0.999 and match.densest == 0
    assert not match.confident


def test_nothing_like_it_is_not_confident_and_a_flat_template_is_not_searched() -> None:
    template = screen((40, 40)).crop((35, 7, 135, 107))
    elsewhere = Image.new("RGB", (600, 400), GREY)
    ImageDraw.Draw(elsewhere).ellipse((200, 100, 260, 160), (200, 30, 30))
    match = find_template(elsewhere, template)
    assert match is not None and not match.confident
    assert find_template(screen(), Image.new("RGB", (100, 100), GREY)) is None
    assert find_template(screen().crop((0, 0, 50, 50)), template) is None  # too small


def test_a_shifted_step_moves_every_point_it_has() -> None:
    drag = ToolUseBlock(
        id="a",
        name="computer",
        input={"action": "left_click_drag", "start_coordinate": [10, 20], "coordinate": [30, 40]},
    )
    assert shifted(drag, 5, -3).input == {
        "action": "left_click_drag",
        "start_coordinate": [15, 17],
        "coordinate": [35, 37],
    }
    typing = ToolUseBlock(
        id="b", name="computer", input={"action": "type", "text": "x"}, visual_point=[50, 60]
    )
    moved = shifted(typing, 120, 0)
    assert moved.visual_point == [170, 60] and moved.input == typing.input
    heal = Heal("template", Point(x=50, y=60), Point(x=170, y=60), score=0.987654)
    record = heal.record(3)
    assert record.model_dump(mode="json")["from"] == [50, 60]
    assert (record.shift, record.score, record.element) == ([120, 0], 0.9877, None)


def test_only_named_or_interactive_elements_are_targets_and_greyed_out_ones_are_not_acted_on() -> (
    None
):
    assert names_a_target(ElementAnchor(role="push button"))
    assert names_a_target(ElementAnchor(role="label", name="Total"))
    assert not names_a_target(ElementAnchor(role="drawing area"))
    box = Region(x=0, y=0, width=10, height=10)
    live = frozenset({"showing", "visible", "enabled", "sensitive"})
    assert is_enabled(Element(ref="e1", role="push button", states=live, box=box))
    greyed = Element(ref="e1", role="push button", states=frozenset({"showing"}), box=box)
    assert not is_enabled(greyed)
    assert not is_enabled(Element(ref="e1", role="button", states=frozenset({"disabled"})))


def moved_picture_replay(history: Any, *, broken: bool) -> Any:
    frame = screen((40, 40))
    cache = build_from_messages(
        history(frame, [({"action": "left_click", "coordinate": [85, 57]}, frame)])
    )
    if broken:
        cache.trajectory[0].visual_thumbnail = "not a png"
    canvas = Canvas(600, 400)
    canvas.image = screen((190, 190))
    settings = ExecutionSettings(delay_time_between_actions=0, settle_time=0)
    return CacheExecutor(CanvasBackend(canvas), settings).run(cache), canvas, cache


def test_a_replay_heals_by_template_and_a_broken_thumbnail_only_stops_it(history: Any) -> None:
    result, canvas, cache = moved_picture_replay(history, broken=False)
    assert result.status is ReplayStatus.COMPLETED
    assert [event.position for event in canvas.events] == [Point(x=235, y=207)]
    assert [(h.method, h.shift) for h in cache.metadata.heals] == [("template", [150, 150])]

    result, canvas, cache = moved_picture_replay(history, broken=True)
    assert result.status is ReplayStatus.NEEDS_AGENT and result.step_index == 0
    assert canvas.events == [] and cache.metadata.heals == []


def test_a_wide_plain_button_is_no_confident_match(
    form: Any, history: Any, layout: dict[str, Region]
) -> None:
    # a 100 px region inside a 120 px button is bands of colour: sliding it sideways
    # matches nearly as well, so the place is not certain and replay stops
    frame, submit = form(), layout["submit"]
    cache = build_from_messages(
        history(frame, [({"action": "left_click", "coordinate": [100, 160]}, frame)])
    )
    canvas = Canvas()
    canvas.image = form(submit=Region(x=submit.x + 150, y=submit.y + 150, width=120, height=40))
    settings = ExecutionSettings(delay_time_between_actions=0, settle_time=0)
    result = CacheExecutor(CanvasBackend(canvas), settings).run(cache)
    assert result.status is ReplayStatus.NEEDS_AGENT and canvas.events == []


def test_a_healed_replay_does_not_make_an_invalid_file_valid(history: Any) -> None:
    frame = screen((40, 40))
    cache = build_from_messages(
        history(frame, [({"action": "left_click", "coordinate": [85, 57]}, frame)])
    )
    cache.metadata.is_valid, cache.metadata.invalidation_reason = False, "3 failures at step 0"
    settings = ExecutionSettings(delay_time_between_actions=0, settle_time=0, allow_invalid=True)
    moved = Canvas(600, 400)
    moved.image = screen((190, 190))
    healed = CacheExecutor(CanvasBackend(moved), settings).run(cache)
    assert healed.steps[0].healed == "template" and not cache.metadata.is_valid
    same = Canvas(600, 400)
    same.image = frame
    CacheExecutor(CanvasBackend(same), settings).run(cache)
    assert cache.metadata.is_valid  # every step matched as recorded
