"""One replay's walk through a cache file's steps (:class:`ReplayRun`, made by
:meth:`viewfinder.cache.executor.CacheExecutor.run`).

Each step in turn: its region is checked against the file's hash (looked at again for
a while when the previous step's repaint may still come), healed when its target only
moved, refused when the application or element in front is not the recorded one, then
performed, and the app it went to is waited for until it has handled it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from viewfinder.cache.actions import (
    action_point,
    block_event,
    describe,
    is_observation,
)
from viewfinder.cache.checks import LiveScreen, StepCheck, VisualChecker
from viewfinder.cache.heal import Heal, Healer, shifted
from viewfinder.cache.models import CacheFile, ToolUseBlock
from viewfinder.cache.parameters import substitute
from viewfinder.cache.replay_models import (
    ReplayResult,
    ReplayStatus,
    StepOutcome,
)
from viewfinder.cache.report import write_mismatch_report
from viewfinder.cache.targets import LiveTargets
from viewfinder.cache.thumbnails import decode_thumbnail
from viewfinder.cache.validity import (
    mark_invalid_if_due,
    record_attempt,
    restore_validity,
)
from viewfinder.core.errors import CaptureNotSupportedError, EventFormatError, ViewfinderError
from viewfinder.core.event import Event

if TYPE_CHECKING:
    from viewfinder.cache.executor import CacheExecutor

log = logging.getLogger(__name__)
#: Pause between two checks of a region that has not settled yet.
_SETTLE_POLL = 0.05


class ReplayRun:
    """One replay's state; :meth:`execute` walks the steps."""

    def __init__(
        self,
        executor: CacheExecutor,
        cache: CacheFile,
        path: Path | None,
        values: dict[str, str],
        start: int,
    ) -> None:
        self.executor = executor
        self.settings = executor.settings
        self.cache = cache
        self.path = path
        self.values = values
        self.start = start
        self.screen = LiveScreen(executor.backend)
        validate = cache.visual.active and not self.settings.skip_visual_validation
        self.checker = (
            VisualChecker(cache, self.settings.visual_validation_threshold, path)
            if validate
            else None
        )
        #: the tree and X server of the display: healing searches it, and every step
        #: that recorded its element is checked against it before it acts
        self.targets = LiveTargets(self._heal_display())
        self.healer = (
            Healer(self.checker, self.screen, self.targets)
            if self.checker is not None and self.settings.heal
            else None
        )
        self.outcomes: list[StepOutcome] = []
        #: where a caller continues after handling the step replay stopped at
        self.resume_from: int | None = None

    def _heal_display(self) -> str | None:
        display = self.settings.heal_display or getattr(self.executor.backend, "display_name", None)
        return display if isinstance(display, str) and display else None

    def close(self) -> None:
        self.targets.close()

    def execute(self) -> ReplayResult:
        if not self.settings.allow_invalid:
            reason = mark_invalid_if_due(self.cache, self.executor.validators)
            if reason:
                stopped = self._result(
                    ReplayStatus.NEEDS_AGENT,
                    self.start,
                    f"the cache file is marked invalid ({reason}); nothing was replayed. "
                    "Perform the task yourself (and record a new cache), or replay with "
                    "allow_invalid to try anyway.",
                    invalidation_reason=reason,
                )
                self.resume_from = None  # nothing to resume: the whole file is in doubt
                return stopped
        for index in range(self.start, len(self.cache.trajectory)):
            if index > self.start and self.settings.delay_time_between_actions:
                self.executor._sleep(self.settings.delay_time_between_actions)
            paused = self._step(index)
            if paused is not None:
                return paused
        healed = any(outcome.healed for outcome in self.outcomes)
        if self.start == 0 and not self.settings.skip_visual_validation and not healed:
            # A whole replay that matched every step (none healed: the screen changed) is
            # the evidence validity is about.
            restore_validity(self.cache)
        record_attempt(self.cache, validators=self.executor.validators)
        done = len(self.cache.trajectory) - self.start
        return self._result(ReplayStatus.COMPLETED, None, f"replayed {done} step(s) from cache")

    def _step(self, index: int) -> ReplayResult | None:
        block = self.cache.trajectory[index]
        action = describe(block)
        if is_observation(block):
            self.outcomes.append(StepOutcome(index=index, action=action, acted=False))
            return None
        filled = substitute(block, self.values)
        try:
            event = block_event(filled)
        except EventFormatError as exc:
            return self._failed(index, f"step {index} ({action}) has an unreadable input: {exc}")
        if event is None:
            record_attempt(self.cache, validators=self.executor.validators)
            return self._result(
                ReplayStatus.NEEDS_AGENT,
                index,
                f"step {index} uses the tool {block.name!r}, which replay cannot perform. "
                f"Perform it yourself, then resume from step {index + 1}.",
            )
        check: StepCheck | None = None
        heal = None
        try:  # the wait for a click to stay its own comes before the check of the screen
            self.executor.backend.wait_to_act(event)
        except ViewfinderError as exc:
            return self._failed(index, f"step {index} ({action}) failed: {exc}")
        if self.checker is not None and block.visual_representation is not None:
            try:
                check, live = self._settled_check(index, block)
            except CaptureNotSupportedError as exc:
                # a backend that cannot show its screen: nothing to compare with
                log.warning("cache replay: step %d runs unvalidated: %s", index, exc)
            except ViewfinderError as exc:
                return self._failed(
                    index, f"could not capture the screen to check step {index} ({action}): {exc}"
                )
            else:
                if not check.passed:
                    heal = self.healer.find(index, block, check) if self.healer else None
                    if heal is None:
                        return self._mismatch(index, block, check, live)
                    event = block_event(shifted(filled, *heal.shift)) or event
        refused = self._refusal(block, event)
        if refused is not None:
            return self._refused(index, action, refused, heal)
        if heal is not None:
            log.info("cache replay: step %d %s", index, heal.describe())
            self.cache.metadata.heals.append(heal.record(index))
        try:
            self.executor.backend.act(event)
        except Exception as exc:  # any backend error ends the replay as FAILED
            log.info("cache replay: step %d (%s) raised %r", index, action, exc)
            return self._failed(index, f"step {index} ({action}) failed: {exc}")
        handled = self._handled(index, event)
        self.outcomes.append(
            StepOutcome(
                index=index,
                action=action,
                acted=True,
                validated=check is not None,
                distance=check.distance if check is not None else None,
                healed=heal.method if heal is not None else None,
                healed_to=[heal.new.x, heal.new.y] if heal is not None else None,
                handled=handled,
            )
        )
        return None

    def _handled(self, index: int, event: Event) -> bool | None:
        """Wait until the app ``event`` went to has handled it (the backend's
        :meth:`~viewfinder.core.backend.CaptureBackend.wait_handled`): the next step's
        check, and the caller once replay returns, see what the step did."""
        try:
            return self.executor.backend.wait_handled(event, self.settings.handled_timeout)
        except ViewfinderError as exc:  # the screen's trouble shows in the next check
            log.info("cache replay: whether step %d was handled is unknown: %s", index, exc)
            return None

    def _refusal(self, block: ToolUseBlock, event: Event) -> str | None:
        try:
            return self.targets.step_refusal(block, event.start_position or event.position)
        except Exception as exc:  # the X server went away (any of Xlib's errors too)
            return f"where it would act could not be checked: {exc}"

    def _refused(self, index: int, action: str, reason: str, heal: Heal | None) -> ReplayResult:
        found = f" {heal.describe()}, but" if heal is not None else ""
        message = (
            f"Step {index} ({action}) was not performed:{found} {reason}. Nothing from "
            f"step {index} on was performed. Look at the screen, perform step {index} "
            f"yourself if it still applies, then resume from step {index + 1}."
        )
        failure = record_attempt(
            self.cache,
            failed_step=index,
            error_message=f"target refused: {reason}",
            validators=self.executor.validators,
        )
        return self._result(ReplayStatus.NEEDS_AGENT, index, message, invalidation_reason=failure)

    def _settled_check(self, index: int, block: ToolUseBlock) -> tuple[StepCheck, Image.Image]:
        # The previous action's repaint may still be on its way: look again for a while
        # before calling the screen changed.
        assert self.checker is not None
        deadline = time.monotonic() + self.settings.settle_time
        check, live = self.checker.check(index, block, self.screen)
        while not check.passed and time.monotonic() < deadline:
            self.executor._sleep(_SETTLE_POLL)
            check, live = self.checker.check(index, block, self.screen)
        return check, live

    def _mismatch(
        self, index: int, block: ToolUseBlock, check: StepCheck, live: Image.Image
    ) -> ReplayResult:
        where = "the whole screen" if check.region is None else f"the region around {_point(block)}"
        message = (
            f"Visual validation failed at step {index} ({check.action}): {where} no longer "
            f"looks as recorded ({_difference(check)}). Nothing from step {index} on was "
            f"performed. Look at the "
            f"screen, perform step {index} yourself if it still applies, then resume from "
            f"step {index + 1}."
        )
        report = None
        if self.settings.report_dir is not None:
            stored = (
                decode_thumbnail(block.visual_thumbnail, step=index)
                if block.visual_thumbnail
                else None
            )
            report = write_mismatch_report(
                self.settings.report_dir, check, live, stored, method=self.cache.visual.method
            )
        reason = record_attempt(
            self.cache,
            failed_step=index,
            error_message=f"visual mismatch: {_difference(check)}",
            validators=self.executor.validators,
        )
        return self._result(
            ReplayStatus.NEEDS_AGENT,
            index,
            message,
            distance=check.distance,
            threshold=check.threshold,
            report=report.html if report else None,
            report_image=report.image if report else None,
            invalidation_reason=reason,
        )

    def _failed(self, index: int, message: str) -> ReplayResult:
        reason = record_attempt(
            self.cache,
            failed_step=index,
            error_message=message,
            validators=self.executor.validators,
        )
        return self._result(ReplayStatus.FAILED, index, message, invalidation_reason=reason)

    def _result(
        self, status: ReplayStatus, index: int | None, message: str, **extra: Any
    ) -> ReplayResult:
        if status is not ReplayStatus.COMPLETED and index is not None:
            self.resume_from = index + 1
        result = ReplayResult(
            status=status,
            step_index=index,
            message=message,
            steps=list(self.outcomes),
            cache_path=self.path,
            **extra,
        )
        last = self.outcomes[-1] if self.outcomes else None
        if last is not None and last.acted and last.handled is False:
            result.warnings.append(
                f"step {last.index} ({last.action}) was performed, but its app had not "
                f"handled it {self.settings.handled_timeout:g} s later (it is busy, or it "
                "does not answer pings): the screen and what the app writes may still "
                "change; look again before relying on them"
            )
        return result

    def handoff_context(self, result: ReplayResult) -> dict[str, Any]:
        """What the ``viewfinder_replay_handoff`` hook gets besides the result."""
        index = result.step_index
        step = None
        if index is not None and index < len(self.cache.trajectory):
            step = substitute(self.cache.trajectory[index], self.values).to_api()
        return {
            "cache_path": str(self.path) if self.path is not None else None,
            "backend": self.executor.backend.name,
            "step": step,
            "parameters": dict(self.values),
            "resume_from_step_index": self.resume_from,
        }


def _difference(check: StepCheck) -> str:
    if check.distance > check.threshold:
        return f"Hamming distance {check.distance} > threshold {check.threshold}"
    return (
        f"colours differ by {check.colour_distance} > {check.colour_tolerance} "
        f"(Hamming distance {check.distance} within threshold {check.threshold})"
    )


def _point(block: ToolUseBlock) -> str:
    point = action_point(block.input)
    return f"({point.x}, {point.y})" if point is not None else "the screen"
