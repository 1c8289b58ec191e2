"""Input sources: where the recorder learns about actions.

A source is started with the recorder as its :class:`InputSink` and calls
``button_pressed`` / ``key_pressed`` for every raw press it sees; the recorder applies
the pairing rules (double clicks, scroll bursts, typing bursts). A program that performs
its own actions needs no source: it calls ``recorder.click(...)``, ``recorder.type(...)``
and friends, which work whatever source is running.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from viewfinder.recorder.errors import InputSourceError


class InputSink(Protocol):
    """What a source reports to (the :class:`~viewfinder.recorder.Recorder` implements it)."""

    def button_pressed(
        self,
        x: int,
        y: int,
        button: str | int,
        modifiers: Sequence[str] = (),
        at: float | None = None,
    ) -> None:
        """A mouse button went down; ``button`` is left/middle/right or an X button number
        (4-7 are wheel clicks). ``at`` is the monotonic time of the press."""

    def key_pressed(
        self, name: str, char: str | None, modifiers: Sequence[str] = (), at: float | None = None
    ) -> None:
        """Key ``name`` (an X keysym name) went down, typing ``char`` (None: nothing)."""

    # A source that also reports releases and motion sets ``reports_releases = True`` and
    # calls ``button_released(x, y, button, at)`` and ``pointer_moved(x, y, at)``, which
    # the Recorder implements: a left press that moves before its release is a drag.

    def input_failed(self, error: BaseException) -> None:
        """The source stopped working; the recording stops with ``error``."""


@runtime_checkable
class InputSource(Protocol):
    """A pluggable source of input events."""

    #: Recorded in metadata.json as the session's input source.
    name: str

    def start(self, sink: InputSink) -> None:
        """Begin reporting to ``sink``; raise :class:`InputSourceError` when it cannot."""

    def stop(self) -> None:
        """Stop reporting; after it returns the sink gets no more calls. Idempotent."""


class ProgrammaticInput:
    """No listener: only what the program records itself (``recorder.click(x, y)``, ...)."""

    name = "programmatic"

    def start(self, sink: InputSink) -> None:
        """Nothing to start: actions arrive through the recorder's own methods."""

    def stop(self) -> None:
        """Nothing to stop."""


#: Names accepted by :func:`make_input_source` (and ``viewfinder record --input``).
SOURCE_NAMES = ("auto", "x11", "programmatic")


def make_input_source(name: str, display: str | None = None) -> InputSource:
    """The source called ``name``: ``x11`` (listen on ``display``, default ``$DISPLAY``),
    ``programmatic`` (none), or ``auto`` (x11 when a display is known, else programmatic)."""
    wanted = name.strip().lower()
    shown = display or os.environ.get("DISPLAY")
    if wanted == "auto":
        wanted = "x11" if shown else "programmatic"
    if wanted == "x11":
        if not shown:
            raise InputSourceError(
                "the x11 input source needs an X display: pass --display :N or set DISPLAY"
            )
        from viewfinder.recorder.x11 import X11RecordInput

        return X11RecordInput(shown)
    if wanted in ("programmatic", "none"):
        return ProgrammaticInput()
    raise InputSourceError(
        f"unknown input source {name!r}; choose one of: {', '.join(SOURCE_NAMES)}"
    )
