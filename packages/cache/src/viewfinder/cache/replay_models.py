"""What a replay is told (:class:`ExecutionSettings`) and what it tells back."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: Seconds replay waits after each step for the app it went to to say it handled it.
DEFAULT_HANDLED_TIMEOUT = 2.0

#: Seconds a mismatching region gets to settle (measured: Tk repaints within ~100 ms on a
#: loaded two-core machine; the margin covers slower apps).
DEFAULT_SETTLE_TIME = 0.6


class ReplayStatus(StrEnum):
    """How a replay ended."""

    COMPLETED = "COMPLETED"
    NEEDS_AGENT = "NEEDS_AGENT"
    FAILED = "FAILED"


class StepOutcome(BaseModel):
    """What replay did with one step."""

    model_config = ConfigDict(frozen=True)

    index: int
    action: str
    acted: bool
    validated: bool = False
    distance: int | None = None
    #: how a step whose region did not match was found again ("element", "template")
    healed: str | None = None
    #: where a healed step acted instead of its recorded point
    healed_to: list[int] | None = None
    #: whether the app the step went to said it handled it before replay went on (None:
    #: the backend cannot ask, or the app does not answer)
    handled: bool | None = None


class ReplayResult(BaseModel):
    """The end of a replay: status, where it stopped, why, and what it did."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    status: ReplayStatus
    #: the first step not performed (None when every step was)
    step_index: int | None = None
    distance: int | None = None
    threshold: int | None = None
    message: str
    steps: list[StepOutcome] = Field(default_factory=list)
    cache_path: Path | None = None
    report: Path | None = None
    report_image: Path | None = None
    invalidation_reason: str | None = None
    #: what went wrong after the replay ended (the attempt could not be written back)
    warnings: list[str] = Field(default_factory=list)
    #: what a ``viewfinder_replay_handoff`` implementation returned when it took over
    handoff: Any = Field(default=None, exclude=True)

    @property
    def summary(self) -> str:
        """``STATUS: message``, then the warnings: the replay in one line of text."""
        return " ".join([f"{self.status.value}: {self.message}", *self.warnings])

    @property
    def acted(self) -> list[int]:
        """Indexes of the steps that were performed."""
        return [step.index for step in self.steps if step.acted]


class ExecutionSettings(BaseModel):
    """How to replay. The threshold here overrides the file's."""

    model_config = ConfigDict(frozen=True)

    delay_time_between_actions: float = Field(default=1.0, ge=0)
    skip_visual_validation: bool = False
    visual_validation_threshold: int | None = Field(default=None, ge=0)
    #: write a mismatch report (HTML + PNG) into this folder when a step does not match
    report_dir: Path | None = None
    #: replay a file even when it is (or becomes, by age) marked invalid
    allow_invalid: bool = False
    #: how long a step whose region does not match yet is checked again before replay
    #: stops: the app may still be repainting after the previous action
    settle_time: float = Field(default=DEFAULT_SETTLE_TIME, ge=0)
    #: how long replay waits after each step until the app it went to has handled it
    #: (the next step's check, and the caller once replay returns, see what it did)
    handled_timeout: float = Field(default=DEFAULT_HANDLED_TIMEOUT, ge=0)
    #: look for a mismatching step's target where it moved (its element, its region's
    #: pixels) and act there when certain (docs/cache.md, healing); False stops at the
    #: first mismatch, as before healing existed
    heal: bool = True
    #: the X display whose accessibility tree healing reads (None: the backend's own)
    heal_display: str | None = None
