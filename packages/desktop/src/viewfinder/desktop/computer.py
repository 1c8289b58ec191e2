"""ComputerTool: one computer-use action in, the settled screen (scaled for the model) out.

>>> tool = ComputerTool(":1", target="XGA")                          # doctest: +SKIP
>>> result = tool({"action": "left_click", "coordinate": [512, 384]})  # doctest: +SKIP
>>> result.screenshot.size, result.text                             # doctest: +SKIP
((1024, 768), 'left_click at (512, 384); the screen changed and settled after 0.06 s')

Anthropic's and OpenAI's actions are read by :func:`~viewfinder.desktop.actions.parse_action`;
points are mapped from the model's image to the screen by
:class:`~viewfinder.desktop.scaling.Scaling`; after the action the screen is captured
once it has settled (:mod:`viewfinder.desktop.settle`) and shrunk to the model size.
:mod:`viewfinder.desktop.formats` turns a :class:`ComputerResult` into each API's
tool result and gives each API's tool definition.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from viewfinder.core import (
    ElementTree,
    Event,
    EventKind,
    Screenshot,
    Trajectory,
    ViewfinderError,
)
from viewfinder.core.result_budget import ResultBudget
from viewfinder.core.screenshot import utc_now
from viewfinder.desktop.actions import Action, Api, action_name, parse_action
from viewfinder.desktop.aiming import aim
from viewfinder.desktop.attribution import describe_elsewhere
from viewfinder.desktop.computer_options import checked_options
from viewfinder.desktop.frames import ScreenFrames
from viewfinder.desktop.images import ModelImages, model_size_within
from viewfinder.desktop.pointer import PointerQuery, drag_along
from viewfinder.desktop.results import (
    ComputerResult,
    Seen,
    describe_action,
    describe_settle,
    failure_result,
)
from viewfinder.desktop.scaling import Resample, Scaling, Target
from viewfinder.desktop.screen_elements import ScreenElements
from viewfinder.desktop.screen_elements import snapshot_tokens as tokens_for
from viewfinder.desktop.settle import SettleOptions
from viewfinder.desktop.steps import StepLog, step_extra

if TYPE_CHECKING:
    import os

    from PIL import Image

    from viewfinder.core.element_sources import ElementSource
    from viewfinder.xvfb import Display, XvfbBackend


class ComputerToolClosedError(ViewfinderError, RuntimeError):
    """A ComputerTool was called after :meth:`ComputerTool.close`."""


class ComputerTool:
    """Computer-use actions on an X display, each answered with the settled screen.

    ``display``: a :class:`viewfinder.xvfb.Display` or a display name (``":1"``).
    ``target`` / ``max_width`` / ``max_height``: the size the model sees the screen at
    (:meth:`Scaling.choose <viewfinder.desktop.scaling.Scaling.choose>`; default: the
    screen's own, shrunk as far as the client's image limits ask). ``client``: whose
    result budget every returned image fits (:mod:`viewfinder.core.result_budget`;
    default ``claude-desktop``: under 1 MB, at most 1568 px long and 1.15 megapixels),
    as JPEG instead of PNG at the same size when needed
    (:mod:`viewfinder.desktop.images`). ``settle``: how long to wait after an action
    (:class:`~viewfinder.desktop.settle.SettleOptions`). ``record_to``: a new or empty
    folder that receives every step in the recorder's session format, full-size frames
    included. ``image_format``: png, jpeg or webp for the returned screenshots (JPEG
    where that is over the budget). ``api``: read every action as ``"anthropic"`` or
    ``"openai"`` input (default: tell by its keys). ``resample``: the filter that
    shrinks frames (:meth:`Scaling.scale_image
    <viewfinder.desktop.scaling.Scaling.scale_image>`; ``box``, the default, is the
    fastest). ``elements``: every result carries the elements on the screen (a text
    snapshot, boxes in the model's coordinates, within ``snapshot_tokens``; default: what
    the client's text budget allows, at most 2000) and every pointer step records the
    element under its point; an action asks for them (``"elements": true``) or for a
    Set-of-Mark image (``"set_of_mark": true``) on its own too, and may name an element
    to act on (``"element": "e12"``). ``element_source``: the source to read them with
    (default: ``atspi`` on the display, made on first use; refs stay the same for the
    tool's life). See docs/elements.md.

    Calling the tool never raises for a bad action: the result says what was wrong
    (``is_error``), and the next call works. Calls are serialised (one action at a
    time). Close the tool (or use it as a context manager) to release its connections
    and finish the session folder; the display keeps running.
    """

    def __init__(
        self,
        display: Display | str,
        *,
        target: Target = None,
        max_width: int | None = None,
        max_height: int | None = None,
        settle: SettleOptions | None = None,
        record_to: str | os.PathLike[str] | None = None,
        image_format: str = "png",
        api: Api | None = None,
        resample: Resample = "box",
        client: str | ResultBudget | None = None,
        elements: bool = False,
        element_source: ElementSource | None = None,
        snapshot_tokens: int | None = None,
    ) -> None:
        from viewfinder.xvfb import XvfbBackend

        self.image_format, self.budget = checked_options(
            image_format, api, settle, resample, client, snapshot_tokens
        )
        self.api = api
        self.resample: Resample = resample
        self.settle_options = settle or SettleOptions()
        self._backend: XvfbBackend = XvfbBackend(display)
        self.display_name = self._backend.display_name
        self._lock = threading.Lock()
        self._closed = False
        self._pointer_query = PointerQuery(self.display_name)
        self._frames: ScreenFrames | None = None
        self._elements = ScreenElements(
            self.display_name,
            source=element_source,
            enabled=elements,
            max_tokens=snapshot_tokens or tokens_for(self.budget),
        )
        try:
            width, height = self._backend.screen_size()
            if target is None and max_width is None and max_height is None:
                # the whole screen, as large as the client takes it (else the client
                # would shrink it, and the model's coordinates would be off)
                max_width, max_height = model_size_within(width, height, self.budget) or (
                    None,
                    None,
                )
            self.scaling = Scaling.choose(
                width,
                height,
                target,
                max_width=max_width,
                max_height=max_height,
                budget=self.budget if target is not None else None,
            )
            self._images = ModelImages(self.scaling, self.budget, self.image_format, resample)
            self._frames = ScreenFrames(self._backend, self.settle_options)
            self._elements.scale = self.scaling.factors
            self._log = StepLog((width, height), self.display_name, record_to)
        except BaseException:
            self._release()
            raise

    # -- facts ----------------------------------------------------------------------------

    @property
    def model_size(self) -> tuple[int, int]:
        """The size of the screenshots the model gets, and the space of its coordinates."""
        return self.scaling.model_size

    @property
    def screen_size(self) -> tuple[int, int]:
        return self.scaling.screen_size

    @property
    def session_dir(self) -> Path | None:
        """The folder steps are recorded into (``record_to``), if any."""
        return self._log.session_dir

    @property
    def settle_method(self) -> str:
        """How changes of the screen are noticed: ``damage`` or ``poll``."""
        assert self._frames is not None
        return self._frames.method

    # -- acting -----------------------------------------------------------------------------

    def __call__(
        self, action: Mapping[str, Any] | Action, *, api: Api | None = None
    ) -> ComputerResult:
        """Perform one computer-use action; the result carries the settled screen.

        ``action`` is Anthropic computer-use tool input or an OpenAI computer-use action
        (``api`` says which, or it is told by the keys), an :class:`Action` already read
        (as :mod:`~viewfinder.desktop.computer_toolset` reads its members), or an OpenAI
        ``computer_call`` item, whose ``actions`` batch runs in order into one result
        (:func:`~viewfinder.desktop.openai_batch.run_computer_call`). A malformed or
        unknown action, a point off the screen or a display that has gone comes back as
        a result with ``is_error`` set, never as an exception.
        """
        if (
            isinstance(action, Mapping)
            and action.get("type") == "computer_call"
            and action.get("actions") is not None  # a batch: each action in turn
        ):
            from viewfinder.desktop.openai_batch import run_computer_call

            return run_computer_call(self, action)
        with self._lock:
            if self._closed:
                raise ComputerToolClosedError("this ComputerTool is closed; create a new one")
            name = action.name if isinstance(action, Action) else action_name(action)
            try:
                if not isinstance(action, Action):
                    action = parse_action(action, api or self.api)
                return self._run(action)
            except ViewfinderError as exc:
                return self._failure(exc, name)

    def interrupt_pauses_with(self, event: threading.Event | None) -> None:
        """Once ``event`` is set, a ``wait`` or ``hold_key`` in progress ends early (the
        keys released); a caller that cancels a call sets it."""
        self._backend.input.interrupt = event

    def screenshot(self) -> Screenshot:
        """The screen now, at the model size (no action, no step recorded)."""
        with self._lock:
            return self._images.frame(self._grab()[0])

    @property
    def step_log(self) -> StepLog:
        """The steps so far (:meth:`trajectory` is the usual way to read them)."""
        return self._log

    @property
    def frames(self) -> ScreenFrames:
        """The tool's grabs, change watch and settle memory."""
        assert self._frames is not None, "the tool failed to start"
        return self._frames

    def _run(self, action: Action) -> ComputerResult:
        if not action.changes_screen:
            return self._look(action)
        event, focus, path = aim(action, self._elements, self.scaling, self._pointer)
        # a click's wait to stay its own comes before the frame the action is paired
        # with and before the settle's clock starts
        self._backend.wait_to_act(focus or event)
        before = self.frames.before_action()
        event = event.model_copy(update={"timestamp": utc_now()})
        started = time.monotonic()  # the deadline counts from here, whatever comes next
        if focus is not None:
            focus = focus.model_copy(update={"timestamp": event.timestamp})
            self._backend.act(focus)
        self._perform(event, path, action.repeat)
        waited = event.kind is EventKind.WAIT
        late = before.late
        shared = 1 + (late is not None) + action.set_of_mark  # images the result carries
        plain = not self._elements.wanted(action.elements) and not action.set_of_mark
        report, after, after_at = self.frames.settle_after(
            before,
            time.monotonic() if waited else started,
            expect_change=not waited,
            typed=len(action.text or "") if event.kind is EventKind.TYPE else 0,
            handled=None if waited else self._ask_handled(event, path),
            pointer=None if waited else event.is_pointer or bool(path),
            recheck=None if waited else lambda: self._ask_handled(event, path),
            # the result's screenshot, encoded ahead while the screen is quiet
            prepare=(lambda frame, at: self._images.frame(frame, at, shared=shared))
            if plain
            else None,
        )
        seen = self._seen(action, after, after_at, shared)
        if focus is not None:  # the same pre-action frame: the click's effect came later
            self._log.add(focus, before.frame, before.captured_at, step_extra(action, None))
        self._log.add(event, before.frame, before.captured_at, step_extra(action, path))
        assert seen.shot is not None  # an action that acts always shows the screen
        return seen.result(
            action=action.name,
            api=action.api,
            text="; ".join(
                [describe_action(action), describe_settle(report), self._images.describe(seen.shot)]
                + ([late.describe()] if late else [])
                + ([describe_elsewhere(report.elsewhere)] if report.elsewhere else [])
            ),
            event=event,
            settle=report,
            before=(
                self._images.frame(before.frame, before.captured_at, shared=shared)
                if late
                else None
            ),
        )

    def _seen(self, action: Action, frame: Image.Image, at: datetime, shared: int) -> Seen:
        """The screenshot of ``frame`` and, as the action asks, its elements and marks;
        ``shared``: how many images the result carries (each gets its share)."""
        if not self._elements.wanted(action.elements) and not action.set_of_mark:
            return Seen(self._images.frame(frame, at, shared=shared))
        tree = self._elements.read_or_reason()
        shot = self._images.frame(frame, at, shared=shared)
        marked = self._images.marked(shot, tree, shared) if action.set_of_mark else None
        return Seen(shot, tree, self._elements.snapshot(tree), marked)

    def _look(self, action: Action) -> ComputerResult:
        before = self.frames.before_action()
        frame, captured_at = before.frame, before.captured_at
        self.frames.shown(frame)
        event = Event(kind=EventKind.SCREENSHOT)
        region = action.screen_region(self.scaling)
        self._log.add(event, frame, captured_at, step_extra(action, None, region))
        seen = Seen(None)
        if action.observation == "cursor_position":
            x, y = self.scaling.to_model(*self._pointer())
            text = f"X={x},Y={y}"
        elif region is not None:
            assert action.region is not None
            shot, words = self._images.zoom(frame, region, captured_at)
            seen, text = Seen(shot), f"zoom on {list(action.region)}: {words}"
        else:
            seen = self._seen(action, frame, captured_at, 1 + action.set_of_mark)
            text = self._images.describe(seen.shot) if seen.shot else ""
        if before.late is not None:
            text = "; ".join(part for part in (text, before.late.describe()) if part)
        return seen.result(action=action.name, api=action.api, text=text, event=event)

    def read_elements(self) -> ElementTree:
        """The elements on the screen now, read with the tool's source (its refs)."""
        with self._lock:
            return self._elements.read()

    def _failure(self, error: ViewfinderError, name: str | None) -> ComputerResult:
        shot = None
        with contextlib.suppress(ViewfinderError):  # the model sees the screen as it is now
            shot = self._images.frame(self._grab()[0])
        return failure_result(error, name, shot)

    def _ask_handled(self, event: Event, path: list[tuple[int, int]] | None) -> Any:
        """A ping behind the action to the app it went to (None: none can be asked): a
        busy app's late effect is then waited for (:func:`~viewfinder.desktop.settle`)."""
        try:
            return self._backend.input.ask_handled(pointer=event.is_pointer or bool(path))
        except ViewfinderError:
            return None  # the display's trouble shows in the grab that follows

    def _perform(self, event: Event, path: list[tuple[int, int]] | None, repeat: int = 1) -> None:
        if path is None:
            for _ in range(repeat):  # a key chord pressed again (the toolset's ``repeat``)
                self._backend.act(event)
        else:
            drag_along(self._backend.input, path)

    # -- frames --------------------------------------------------------------------------------

    def _grab(self) -> tuple[Image.Image, datetime]:
        return self.frames.grab()

    def _pointer(self) -> tuple[int, int]:
        return self._pointer_query.where()

    # -- the run ---------------------------------------------------------------------------------

    def trajectory(self, **metadata: Any) -> Trajectory:
        """Every action so far as a core Trajectory: events in SCREEN coordinates, each step
        with its pre-action frame at full resolution. ``metadata`` adds metadata fields."""
        model_width, model_height = self.model_size
        return self._log.trajectory(
            model_size={"width": model_width, "height": model_height}, **metadata
        )

    def close(self) -> None:
        """Finish the session folder and close the connections (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._release()

    def _release(self) -> None:
        log = getattr(self, "_log", None)
        if log is not None:
            log.close()
        if self._frames is not None:
            self._frames.close()
        elements = getattr(self, "_elements", None)
        if elements is not None:
            elements.close()
        self._pointer_query.close()
        self._backend.close()

    def __enter__(self) -> ComputerTool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ComputerTool {self.display_name} {self.scaling.describe()}>"
