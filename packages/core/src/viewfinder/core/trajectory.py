"""The Trajectory model: ordered actions with what is needed to replay them safely."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from viewfinder.core.event import Event
from viewfinder.core.screenshot import Screenshot, _as_utc, utc_now

HashMethod = Literal["phash", "ahash", "dhash", "whash"]


class VisualValidation(BaseModel):
    """How replay checks the screen before a step: hash a square around the action point."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    method: HashMethod = "phash"
    region_size: int = Field(default=100, gt=0)
    hash_size: int = Field(default=8, ge=2)
    threshold: int = Field(default=10, ge=0)


class ScreenSize(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    width: int = Field(gt=0)
    height: int = Field(gt=0)


class TrajectoryMetadata(BaseModel):
    """What a trajectory is for, where it came from, and how to validate it."""

    model_config = ConfigDict(extra="allow")

    goal: str | None = None
    created_at: datetime = Field(default_factory=utc_now)
    source: str = "unknown"
    screen: ScreenSize | None = None
    visual_validation: VisualValidation = Field(default_factory=VisualValidation)

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return _as_utc(value)


class TrajectoryStep(BaseModel):
    """One action, the hash of the region around it (if taken), and its pre-action frame."""

    model_config = ConfigDict(extra="forbid")

    event: Event
    visual_hash: str | None = None
    frame: Screenshot | None = None


class Trajectory(BaseModel):
    """Ordered steps plus metadata. Recorder sessions, code env runs and caches become these."""

    model_config = ConfigDict(extra="forbid")

    metadata: TrajectoryMetadata = Field(default_factory=TrajectoryMetadata)
    steps: list[TrajectoryStep] = Field(default_factory=list)

    def append(
        self, event: Event, *, frame: Screenshot | None = None, visual_hash: str | None = None
    ) -> TrajectoryStep:
        step = TrajectoryStep(event=event, frame=frame, visual_hash=visual_hash)
        self.steps.append(step)
        return step

    @property
    def events(self) -> list[Event]:
        return [step.event for step in self.steps]

    def to_computer_use(self) -> list[dict[str, Any]]:
        """Every step as Anthropic computer-use tool input, in order."""
        return [step.event.to_computer_use() for step in self.steps]

    def __len__(self) -> int:
        return len(self.steps)
