"""The wait that keeps one action's press out of the multi-click of the press before it
(xvfb/multiclick.py), on a fake clock. The real toolkits' counts are in
packages/desktop/tests/test_multi_clicks_apps.py."""

from __future__ import annotations

import pytest

from viewfinder.xvfb.multiclick import (
    DOUBLE_CLICK_DISTANCE_PX,
    DOUBLE_CLICK_TIME_S,
    TRIPLE_CLICK_TIME_S,
    PressSpacing,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def never_asked() -> tuple[int, int]:
    raise AssertionError("the point was asked for though no recent press needs it")


def test_the_first_press_and_a_press_after_the_double_click_time_do_not_wait(
    clock: Clock,
) -> None:
    spacing = PressSpacing(clock)
    assert spacing.wait_before(1, never_asked) == 0
    spacing.pressed(1, 50, 60)
    clock.now += DOUBLE_CLICK_TIME_S
    assert spacing.wait_before(1, never_asked) == 0


def test_a_press_near_the_last_one_soon_after_waits_out_the_rest_of_the_time(
    clock: Clock,
) -> None:
    spacing = PressSpacing(clock)
    spacing.pressed(1, 50, 60)
    clock.now += 0.1
    assert spacing.wait_before(1, lambda: (50, 60)) == pytest.approx(DOUBLE_CLICK_TIME_S - 0.1)
    near = DOUBLE_CLICK_DISTANCE_PX
    assert spacing.wait_before(1, lambda: (50 + near, 60 - near)) > 0


def test_a_press_elsewhere_or_of_another_button_does_not_wait(clock: Clock) -> None:
    spacing = PressSpacing(clock)
    spacing.pressed(1, 50, 60)
    clock.now += 0.1
    assert spacing.wait_before(1, lambda: (50 + DOUBLE_CLICK_DISTANCE_PX + 1, 60)) == 0
    assert spacing.wait_before(3, never_asked) == 0


def test_after_a_double_click_a_press_there_waits_out_the_triple_click_time(
    clock: Clock,
) -> None:
    # GTK counts a press within twice its double-click time of a double-click's first
    # press as the third
    spacing = PressSpacing(clock)
    spacing.pressed(1, 50, 60)
    clock.now += 0.02
    spacing.pressed(1, 50, 60)
    clock.now += DOUBLE_CLICK_TIME_S
    assert spacing.wait_before(1, lambda: (50, 60)) == pytest.approx(
        TRIPLE_CLICK_TIME_S - DOUBLE_CLICK_TIME_S - 0.02
    )
    assert spacing.wait_before(1, lambda: (70, 60)) == 0


def test_two_presses_apart_in_time_are_no_double_click_to_wait_after(clock: Clock) -> None:
    spacing = PressSpacing(clock)
    spacing.pressed(1, 50, 60)
    clock.now += DOUBLE_CLICK_TIME_S + 0.05
    spacing.pressed(1, 50, 60)
    clock.now += DOUBLE_CLICK_TIME_S
    assert spacing.wait_before(1, never_asked) == 0


def test_inputs_on_one_display_share_the_memory_and_other_displays_do_not() -> None:
    assert PressSpacing.of_display(":91") is PressSpacing.of_display(":91")
    assert PressSpacing.of_display(":91") is not PressSpacing.of_display(":92")
