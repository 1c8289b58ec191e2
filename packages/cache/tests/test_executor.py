"""Replay logic on the in-process canvas backend (the real screen is in tests/test_cache_*)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from viewfinder.cache import (
    CacheExecutor,
    CacheFile,
    ExecutionSettings,
    MissingParameterError,
    ReplayResult,
    ReplayStatus,
    StepCoordinateError,
    build_from_messages,
    parameterize,
    read_cache_file,
    save_cache_file,
)
from viewfinder.core import (
    CaptureError,
    CaptureNotSupportedError,
    Event,
    EventKind,
    Region,
    hookimpl,
)
from viewfinder.core.testing import Canvas, CanvasBackend

Form = Callable[..., Image.Image]
NO_DELAY = ExecutionSettings(delay_time_between_actions=0)
MOVED = Region(x=400, y=300, width=120, height=40)


@pytest.fixture
def recorded(
    form: Form, history: Callable[..., list[dict[str, Any]]], layout: dict[str, Region]
) -> CacheFile:
    """Click the entry, click Submit, type a name, press Tab; recorded on the drawn form.

    The button comes before the typing because a type step hashes the whole screen:
    a changed button is then first noticed at the button's own step.
    """
    frame, typed = form(), form(text="Ada")
    entry, submit = layout["entry"].center, layout["submit"].center
    cache = build_from_messages(
        history(
            frame,
            [
                ({"action": "left_click", "coordinate": [entry.x, entry.y]}, frame),
                ({"action": "left_click", "coordinate": [submit.x, submit.y]}, frame),
                ({"action": "type", "text": "Ada"}, typed),
                ({"action": "key", "text": "Tab"}, typed),
            ],
        ),
        goal="Submit the form",
    )
    return parameterize(cache, {"name": "Ada"})


def screen(image: Image.Image) -> tuple[Canvas, CanvasBackend]:
    canvas = Canvas(image.width, image.height)
    canvas.image = image.copy()
    return canvas, CanvasBackend(canvas)


def test_unchanged_screen_replays_every_step(recorded: CacheFile, form: Form) -> None:
    canvas, backend = screen(form())
    # the live screen as the recording saw it before each step: the typed text matters
    # only to steps after typing, and the canvas does not change when acted on
    canvas.image = form()
    result = CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"})
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert result.step_index is None and result.acted == [0, 1, 2, 3]
    assert [event.kind for event in canvas.events] == [
        EventKind.CLICK,
        EventKind.CLICK,
        EventKind.TYPE,
        EventKind.KEY,
    ]
    assert [step.validated for step in result.steps] == [True, True, True, False]
    assert result.steps[0].distance == 0
    assert recorded.metadata.execution_attempts == 1
    assert recorded.metadata.last_executed_at is not None and not recorded.metadata.failures


def test_a_moved_button_stops_before_its_step(recorded: CacheFile, form: Form) -> None:
    canvas, backend = screen(form(submit=MOVED))
    result = CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"})
    assert result.status is ReplayStatus.NEEDS_AGENT
    assert result.step_index == 1
    assert result.distance is not None and result.threshold == 10
    assert result.distance > result.threshold
    assert result.acted == [0]
    assert len(canvas.events) == 1  # the entry click; not Submit, not what follows
    assert "step 1" in result.message and f"distance {result.distance}" in result.message
    assert "resume from step 2" in result.message
    failure = recorded.metadata.failures[-1]
    assert (failure.step_index, failure.failure_count_at_step) == (1, 1)
    assert "visual mismatch" in failure.error_message


def test_the_execution_threshold_overrides_the_files(recorded: CacheFile, form: Form) -> None:
    _, backend = screen(form(submit=MOVED))
    first = CacheExecutor(backend, NO_DELAY).run(recorded.model_copy(deep=True), {"name": "Ada"})
    assert first.distance is not None
    lenient = ExecutionSettings(
        delay_time_between_actions=0, visual_validation_threshold=first.distance
    )
    # The hash now passes; the moved button's colours still stop the replay.
    overridden = CacheExecutor(backend, lenient).run(recorded, {"name": "Ada"})
    assert overridden.status is ReplayStatus.NEEDS_AGENT and overridden.step_index == 1
    assert f"within threshold {first.distance}" in overridden.message
    assert "colours differ" in overridden.message
    recorded.metadata.visual_validation.threshold = first.distance  # type: ignore[union-attr]
    from_file = CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"})
    assert f"within threshold {first.distance}" in from_file.message


def test_skip_visual_validation_replays_blind(recorded: CacheFile, form: Form) -> None:
    canvas, backend = screen(Image.new("RGB", (640, 480), "black"))
    settings = ExecutionSettings(delay_time_between_actions=0, skip_visual_validation=True)
    result = CacheExecutor(backend, settings).run(recorded, {"name": "Ada"})
    assert result.status is ReplayStatus.COMPLETED
    assert not any(step.validated for step in result.steps) and len(canvas.events) == 4


def test_steps_without_a_hash_run_unvalidated(recorded: CacheFile) -> None:
    for block in recorded.trajectory:
        block.visual_representation = None
    canvas, backend = screen(Image.new("RGB", (640, 480), "black"))
    result = CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"})
    assert result.status is ReplayStatus.COMPLETED and len(canvas.events) == 4


def test_parameters_are_substituted(recorded: CacheFile, form: Form) -> None:
    canvas, backend = screen(form())
    CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Grace Hopper"})
    assert canvas.events[2] == Event(
        kind=EventKind.TYPE, text="Grace Hopper", timestamp=canvas.events[2].timestamp
    )


def test_a_missing_parameter_is_an_error_before_acting(recorded: CacheFile, form: Form) -> None:
    canvas, backend = screen(form())
    with pytest.raises(MissingParameterError, match="name") as caught:
        CacheExecutor(backend, NO_DELAY).run(recorded)
    assert caught.value.missing == ["name"] and not canvas.events
    assert recorded.metadata.execution_attempts == 0


class Sticky(CanvasBackend):
    """A canvas whose clicks fail, as a display that went away would."""

    def act(self, event: Event) -> None:
        if event.kind is EventKind.CLICK and self.canvas.events:
            raise RuntimeError("display went away")
        super().act(event)


def test_an_action_that_raises_ends_the_replay_failed(recorded: CacheFile, form: Form) -> None:
    canvas = Canvas()
    canvas.image = form()
    result = CacheExecutor(Sticky(canvas), NO_DELAY).run(recorded, {"name": "Ada"})
    assert result.status is ReplayStatus.FAILED and result.step_index == 1
    assert "display went away" in result.message and result.acted == [0]
    assert recorded.metadata.failures[-1].step_index == 1


def test_metadata_is_saved_to_the_file(tmp_path: Path, recorded: CacheFile, form: Form) -> None:
    path = save_cache_file(recorded, tmp_path / "form.json")
    _, backend = screen(form())
    result = CacheExecutor(backend, NO_DELAY).run(path, {"name": "Ada"})
    assert result.cache_path == path
    saved = read_cache_file(path)
    assert saved.metadata.execution_attempts == 1 and saved.metadata.last_executed_at is not None
    CacheExecutor(backend, NO_DELAY).run(path, {"name": "Ada"}, save=False)
    assert read_cache_file(path).metadata.execution_attempts == 1


def test_three_failures_at_one_step_invalidate_the_file(
    tmp_path: Path, recorded: CacheFile, form: Form
) -> None:
    path = save_cache_file(recorded, tmp_path / "form.json")
    canvas, backend = screen(form(submit=MOVED))
    results = [CacheExecutor(backend, NO_DELAY).run(path, {"name": "Ada"}) for _ in range(3)]
    assert [r.step_index for r in results] == [1, 1, 1]
    assert (
        results[2].invalidation_reason is not None
        and "step 1 failed 3 times" in results[2].invalidation_reason
    )
    saved = read_cache_file(path)
    assert not saved.metadata.is_valid and saved.metadata.execution_attempts == 3
    assert [f.failure_count_at_step for f in saved.metadata.failures] == [1, 2, 3]
    canvas.events.clear()
    refused = CacheExecutor(backend, NO_DELAY).run(path, {"name": "Ada"})
    assert refused.status is ReplayStatus.NEEDS_AGENT and "marked invalid" in refused.message
    assert not canvas.events and read_cache_file(path).metadata.execution_attempts == 3
    anyway = ExecutionSettings(delay_time_between_actions=0, allow_invalid=True)
    assert CacheExecutor(backend, anyway).run(path, {"name": "Ada"}).acted == [0]


def test_a_file_unused_for_30_days_is_not_replayed(recorded: CacheFile, form: Form) -> None:
    recorded.metadata.created_at -= timedelta(days=31)
    canvas, backend = screen(form())
    result = CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"})
    assert result.status is ReplayStatus.NEEDS_AGENT and "unused for 31 days" in result.message
    assert not canvas.events and not recorded.metadata.is_valid


def test_a_backend_that_cannot_act_is_refused(recorded: CacheFile) -> None:
    class LookOnly(CanvasBackend):
        supports_act = False

    with pytest.raises(CaptureNotSupportedError, match="cannot perform actions"):
        CacheExecutor(LookOnly(), NO_DELAY).run(recorded, {"name": "Ada"})


def test_a_smaller_screen_is_an_error_before_acting(recorded: CacheFile) -> None:
    canvas, backend = screen(Image.new("RGB", (120, 90), "white"))
    with pytest.raises(StepCoordinateError) as caught:
        CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"})
    assert (caught.value.step, caught.value.field) == (0, "trajectory[0].input.coordinate")
    assert not canvas.events


def test_a_tool_replay_cannot_perform_hands_over(recorded: CacheFile, form: Form) -> None:
    recorded.trajectory[2] = recorded.trajectory[2].model_copy(
        update={"name": "ask_user", "input": {"q": "?"}}
    )
    canvas, backend = screen(form())
    result = CacheExecutor(backend, NO_DELAY).run(recorded)
    assert len(canvas.events) == 2
    assert result.status is ReplayStatus.NEEDS_AGENT and result.step_index == 2
    assert "'ask_user'" in result.message and result.acted == [0, 1]
    assert not recorded.metadata.failures and recorded.metadata.execution_attempts == 1


def test_start_from_a_step_and_wait_between_actions(recorded: CacheFile, form: Form) -> None:
    canvas, backend = screen(form())
    waits: list[float] = []
    settings = ExecutionSettings(delay_time_between_actions=0.25)
    result = CacheExecutor(backend, settings, sleep=waits.append).run(
        recorded, {"name": "Ada"}, start_from_step_index=1
    )
    assert result.acted == [1, 2, 3] and waits == [0.25, 0.25]
    assert [event.kind for event in canvas.events] == [
        EventKind.CLICK,
        EventKind.TYPE,
        EventKind.KEY,
    ]


class Takeover:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[tuple[ReplayResult, dict[str, Any]]] = []

    @hookimpl
    def viewfinder_replay_handoff(self, result: ReplayResult, context: dict[str, Any]) -> Any:
        self.calls.append((result, dict(context)))
        return self.answer


def test_viewfinder_replay_handoff_hook_gets_the_stopped_step(
    viewfinder_plugin: Callable[..., str], recorded: CacheFile, form: Form
) -> None:
    declines, agent = Takeover(None), Takeover("agent took over")
    viewfinder_plugin(declines, name="declines")
    viewfinder_plugin(agent, name="agent")
    _, backend = screen(form(submit=MOVED))
    result = CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"})
    assert result.handoff == "agent took over"
    ((seen, context),) = agent.calls
    assert seen is result and seen.status is ReplayStatus.NEEDS_AGENT
    assert context["backend"] == "canvas" and context["parameters"] == {"name": "Ada"}
    assert context["resume_from_step_index"] == 2 and context["cache_path"] is None
    assert context["step"]["input"] == {"action": "left_click", "coordinate": [100, 160]}
    assert "visual_representation" not in context["step"]
    # firstresult: later registered implementations run first; the first non-None wins
    assert declines.calls == []


def test_the_hook_is_not_called_when_replay_completes(
    viewfinder_plugin: Callable[..., str], recorded: CacheFile, form: Form
) -> None:
    agent = Takeover("x")
    viewfinder_plugin(agent, name="agent")
    _, backend = screen(form())
    assert CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"}).handoff is None
    assert agent.calls == []


def test_the_result_serialises_for_an_agent(recorded: CacheFile, form: Form) -> None:
    _, backend = screen(form(submit=MOVED))
    data = json.loads(
        CacheExecutor(backend, NO_DELAY).run(recorded, {"name": "Ada"}).model_dump_json()
    )
    assert data["status"] == "NEEDS_AGENT" and data["step_index"] == 1
    assert {"distance", "threshold", "message", "steps"} <= set(data) and "handoff" not in data


def test_off_screen_points_are_caught_even_without_validation(recorded: CacheFile) -> None:
    canvas, backend = screen(Image.new("RGB", (150, 90), "white"))
    settings = ExecutionSettings(delay_time_between_actions=0, skip_visual_validation=True)
    with pytest.raises(StepCoordinateError) as caught:
        CacheExecutor(backend, settings).run(recorded, {"name": "Ada"})
    assert (caught.value.step, caught.value.field) == (0, "trajectory[0].input.coordinate")
    assert "150x90" in str(caught.value) and not canvas.events


class Blind(CanvasBackend):
    """Acts, but cannot show its screen (or, with ``error``, fails to)."""

    error: type[Exception] = CaptureNotSupportedError

    def _capture(self, **_: Any) -> Any:
        raise self.error("no pixels here")


def test_a_backend_without_screenshots_replays_unvalidated(recorded: CacheFile) -> None:
    canvas = Canvas()
    result = CacheExecutor(Blind(canvas), NO_DELAY).run(recorded, {"name": "Ada"})
    assert result.status is ReplayStatus.COMPLETED and len(canvas.events) == 4
    assert not any(step.validated for step in result.steps)


def test_a_capture_that_fails_ends_the_replay_failed(recorded: CacheFile) -> None:
    class Broken(Blind):
        error = CaptureError

    canvas = Canvas()
    result = CacheExecutor(Broken(canvas), NO_DELAY).run(recorded, {"name": "Ada"})
    assert (result.status, result.step_index) == (ReplayStatus.FAILED, 0)
    assert "could not capture the screen" in result.message and not canvas.events
