"""XTest input, checked by a real Tk app on the display reporting what it received."""

from __future__ import annotations

import threading

import pytest

from viewfinder.core import ActionError, Event, EventKind, Point
from viewfinder.xvfb import XvfbBackend

SHIFT, CONTROL = 0x1, 0x4
PAD = Point(x=200, y=150)  # inside the probe's blue pad


@pytest.fixture
def backend(display):
    with XvfbBackend(display) as opened:
        yield opened


def _press(probe, button: int, what: str, **where):
    def match(event):
        return (
            event["type"] == "press"
            and event["button"] == button
            and all(event[key] == value for key, value in where.items())
        )

    return probe.wait_for(match, what)


def test_clicks_arrive_where_and_as_sent(display, tk_probe) -> None:
    display.input.click(100, 120)
    _press(tk_probe, 1, "left click", x=100, y=120)
    display.input.click(110, 130, button="right")
    _press(tk_probe, 3, "right click", x=110, y=130)
    display.input.click(120, 140, button="middle")
    _press(tk_probe, 2, "middle click", x=120, y=140)


def test_act_performs_every_click_kind(backend, tk_probe) -> None:
    backend.act(Event(kind=EventKind.DOUBLE_CLICK, position=Point(x=150, y=100)))
    tk_probe.wait_for(lambda e: e["type"] == "double" and e["x"] == 150, "double click")
    tk_probe.clear()
    backend.act(Event(kind=EventKind.TRIPLE_CLICK, position=Point(x=300, y=250)))
    tk_probe.wait_for(lambda e: e["type"] == "triple" and e["x"] == 300, "triple click")
    backend.act(Event(kind=EventKind.RIGHT_CLICK, position=Point(x=60, y=70)))
    _press(tk_probe, 3, "right click", x=60, y=70)
    backend.act(Event(kind=EventKind.MIDDLE_CLICK, position=Point(x=61, y=71)))
    _press(tk_probe, 2, "middle click", x=61, y=71)


def test_modifiers_are_held_during_the_click(backend, tk_probe) -> None:
    backend.act(Event(kind=EventKind.CLICK, position=Point(x=80, y=200), modifiers=["ctrl"]))
    press = _press(tk_probe, 1, "ctrl+click", x=80, y=200)
    assert press["state"] & CONTROL
    backend.act(Event(kind=EventKind.RIGHT_CLICK, position=Point(x=90, y=210), modifiers=["shift"]))
    press = _press(tk_probe, 3, "shift+right click", x=90, y=210)
    assert press["state"] & SHIFT
    # and let go afterwards
    backend.act(Event(kind=EventKind.CLICK, position=Point(x=95, y=215)))
    assert not _press(tk_probe, 1, "plain click", x=95, y=215)["state"] & (SHIFT | CONTROL)


def test_mouse_down_move_up_and_drag(backend, tk_probe) -> None:
    backend.act(Event(kind=EventKind.MOVE, position=Point(x=50, y=100)))
    backend.act(Event(kind=EventKind.MOUSE_DOWN))
    _press(tk_probe, 1, "mouse down", x=50, y=100)
    backend.act(Event(kind=EventKind.MOVE, position=Point(x=70, y=110)))
    tk_probe.wait_for(lambda e: e["type"] == "drag_motion" and e["x"] == 70, "motion")
    backend.act(Event(kind=EventKind.MOUSE_UP, position=Point(x=80, y=120)))
    tk_probe.wait_for(
        lambda e: e["type"] == "release" and (e["x"], e["y"]) == (80, 120), "mouse up"
    )
    tk_probe.clear()
    backend.act(
        Event(kind=EventKind.DRAG, start_position=Point(x=40, y=80), position=Point(x=240, y=180))
    )
    _press(tk_probe, 1, "drag start", x=40, y=80)
    release = tk_probe.wait_for(lambda e: e["type"] == "release", "drag end")
    assert (release["x"], release["y"]) == (240, 180)
    motions = [e for e in tk_probe.events if e["type"] == "drag_motion"]
    # Tk collapses queued motion events, so how many steps arrive depends on timing;
    # that the button was held while moving is what a drag needs.
    assert (motions[-1]["x"], motions[-1]["y"]) == (240, 180)


def test_scroll_clicks_are_wheel_buttons(backend, tk_probe) -> None:
    backend.act(Event(kind=EventKind.SCROLL, position=PAD, scroll_dy=3))
    tk_probe.wait_for(
        lambda e: (
            len([x for x in tk_probe.events if x["type"] == "press" and x["button"] == 5]) == 3
        ),
        "three wheel-down clicks",
    )
    tk_probe.clear()
    backend.act(Event(kind=EventKind.SCROLL, position=PAD, scroll_dy=-1))
    _press(tk_probe, 4, "wheel up")
    tk_probe.clear()
    # Tk 8.6 reports horizontal wheel buttons 6/7 as Shift + buttons 4/5.
    backend.act(Event(kind=EventKind.SCROLL, position=PAD, scroll_dx=1))
    assert _press(tk_probe, 5, "wheel right")["state"] & SHIFT


def test_typed_text_lands_in_the_entry(backend, tk_probe) -> None:
    text = "Hello, World! ABC xyz 0123 @#$%^&*()_+-=[]{};':\",./<>?`~|\\ é ü ß €"
    backend.act(Event(kind=EventKind.TYPE, text=text))
    tk_probe.wait_for(lambda e: e["type"] == "entry" and e["text"] == text, "typed text")


def test_newline_types_return(display, tk_probe) -> None:
    display.input.type("a\nb")
    tk_probe.wait_for(lambda e: e["type"] == "entry" and e["text"] == "ab", "a, b typed")
    keysyms = [e["keysym"] for e in tk_probe.events if e["type"] == "key"]
    assert keysyms == ["a", "Return", "b"]


def test_key_chords_and_aliases(backend, tk_probe) -> None:
    backend.act(Event(kind=EventKind.KEY, keys=["ctrl", "a"]))
    chord = tk_probe.wait_for(lambda e: e["type"] == "key" and e["keysym"] == "a", "ctrl+a")
    assert chord["state"] & CONTROL
    for keys, keysym in (
        (["enter"], "Return"),
        (["esc"], "Escape"),
        (["Page_Down"], "Next"),
        (["pgup"], "Prior"),
        (["left"], "Left"),
        (["Up"], "Up"),
        (["F5"], "F5"),
        (["BackSpace"], "BackSpace"),
        (["tab"], "Tab"),
        (["super"], "Super_L"),
    ):
        backend.act(Event(kind=EventKind.KEY, keys=keys))
        tk_probe.wait_for(
            lambda e, k=keysym: e["type"] == "key" and e["keysym"] == k, "+".join(keys)
        )
    backend.act(Event(kind=EventKind.KEY, keys=["ctrl", "shift", "t"]))
    event = tk_probe.wait_for(
        lambda e: e["type"] == "key" and e["keysym"] in ("T", "t"), "ctrl+shift+t"
    )
    assert event["state"] & CONTROL and event["state"] & SHIFT


def test_hold_key_and_wait(backend, tk_probe) -> None:
    backend.act(Event(kind=EventKind.HOLD_KEY, keys=["shift"], duration_s=0.05))
    tk_probe.wait_for(lambda e: e["type"] == "key" and e["keysym"] == "Shift_L", "held shift")
    backend.act(Event(kind=EventKind.WAIT, duration_s=0.01))
    backend.act(Event(kind=EventKind.SCREENSHOT))
    backend.act(Event(kind=EventKind.TYPE, text="x"))
    # typing after the hold is not shifted: the key came back up
    tk_probe.wait_for(lambda e: e["type"] == "entry" and e["text"] == "x", "unshifted x")


def test_unknown_key_says_how_to_name_keys(display) -> None:
    with pytest.raises(ActionError) as caught:
        display.input.key("ctrl+frobnicate")
    message = str(caught.value)
    assert "frobnicate" in message
    assert "Return" in message and "ctrl" in message


def test_unknown_button_is_an_action_error(display) -> None:
    with pytest.raises(ActionError, match="left, middle or right"):
        display.input.click(1, 1, button="fourth")


def test_wait_to_act_waits_only_for_a_press_where_one_was_just_made(backend, display) -> None:
    # set, the interrupt makes any wait end at once with an error: a wait shows as one
    cancelled = threading.Event()
    cancelled.set()
    display.input.click(PAD.x, PAD.y)
    display.input.interrupt = cancelled
    try:
        near = Point(x=PAD.x + 3, y=PAD.y - 3)
        for kind in (EventKind.CLICK, EventKind.DOUBLE_CLICK, EventKind.MOUSE_DOWN):
            with pytest.raises(ActionError, match="cancelled before its click"):
                backend.wait_to_act(Event(kind=kind, position=near))
        with pytest.raises(ActionError, match="cancelled"):
            backend.wait_to_act(
                Event(kind=EventKind.DRAG, start_position=PAD, position=Point(x=0, y=0))
            )
        # elsewhere, with another button, or no press at all: no wait
        backend.wait_to_act(Event(kind=EventKind.CLICK, position=Point(x=PAD.x + 40, y=PAD.y)))
        backend.wait_to_act(Event(kind=EventKind.RIGHT_CLICK, position=PAD))
        backend.wait_to_act(
            Event(kind=EventKind.DRAG, start_position=Point(x=0, y=0), position=PAD)
        )
        backend.wait_to_act(Event(kind=EventKind.SCROLL, position=PAD, scroll_dy=1))
        backend.wait_to_act(Event(kind=EventKind.TYPE, text="x"))
    finally:
        display.input.interrupt = None
