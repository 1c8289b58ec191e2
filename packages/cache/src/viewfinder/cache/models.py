"""The cache file: askui's trajectory cache format 0.3, read back to 0.0.

A cache file is one JSON object::

    {"metadata": {"version": "0.3", "created_at": ..., "goal": ..., "last_executed_at": ...,
                  "token_usage": {...}, "execution_attempts": 0, "failures": [...],
                  "is_valid": true, "invalidation_reason": null,
                  "visual_validation": {"enabled": true, "method": "phash", "region_size": 100}},
     "trajectory": [{"type": "tool_use", "id": ..., "name": "computer", "input": {...},
                     "visual_representation": "c3c3..." or null}, ...],
     "cache_parameters": {"name": "description"}}

Older files are read too: 0.2 keeps the visual settings flat in the metadata
(``visual_verification_method``, ``visual_validation_region_size``,
``visual_validation_threshold``), 0.1 calls the parameters ``placeholders`` and has no
visual fields, and 0.0 is a bare list of tool_use blocks. All are migrated on reading and
written back as 0.3. Fields this package does not know are kept on every model and
written back unchanged. viewfinder adds three optional fields of its own, which askui's
reader ignores: ``visual_validation.hash_size`` (default 8), ``visual_validation.threshold``
and a block's ``visual_thumbnail`` (debug mode).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from viewfinder.cache.hashing import DEFAULT_HASH_SIZE, DEFAULT_REGION_SIZE
from viewfinder.core.element import ElementAnchor

#: The format version this package writes.
FORMAT_VERSION = "0.3"
#: Versions whose layout is migrated on reading.
_OLD_VERSIONS = {"0.0", "0.1", "0.2"}
#: The fields of an Anthropic ``tool_use`` block; the API form keeps only these.
API_BLOCK_FIELDS = ("type", "id", "name", "input", "cache_control")
#: Fields a cache adds to a block for itself; never sent to a model API.
CACHE_ONLY_BLOCK_FIELDS = (
    "visual_representation",
    "visual_thumbnail",
    "visual_colour",
    "visual_point",
    "visual_mask",
    "visual_element",
    "visual_window",
)
#: ``metadata.visual_validation.method`` values; ``none`` records that hashing was off.
VISUAL_METHODS = ("phash", "ahash", "dhash", "whash", "none")


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    # Files written elsewhere may hold naive times; askui writes UTC.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_now() -> datetime:
    return datetime.now(UTC)


class CacheFailure(BaseModel):
    """One failed replay of the file: when, at which step, why, and how often there."""

    model_config = ConfigDict(extra="allow")

    timestamp: datetime
    step_index: int
    error_message: str
    failure_count_at_step: int

    _timestamp_utc = field_validator("timestamp")(_utc)


class HealRecord(BaseModel):
    """One healed step of a replay: where the step was recorded, where it acted instead.

    ``method`` is ``"element"`` (the recorded element found again in the accessibility
    tree; ``element`` names it) or ``"template"`` (the stored region found again by
    normalised cross-correlation; ``score`` is the peak's). ``from``/``to`` are the
    step's point before and after, ``shift`` the difference.
    """

    model_config = ConfigDict(
        extra="allow", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    timestamp: datetime
    step_index: int = Field(ge=0)
    method: str
    from_: list[int] = Field(alias="from", min_length=2, max_length=2)
    to: list[int] = Field(min_length=2, max_length=2)
    shift: list[int] = Field(min_length=2, max_length=2)
    score: float | None = Field(default=None, exclude_if=lambda value: value is None)
    element: str | None = Field(default=None, exclude_if=lambda value: value is None)

    _timestamp_utc = field_validator("timestamp")(_utc)

    def describe(self) -> str:
        """``step 2 by element push button 'Save': (90, 58) -> (210, 58), shift (+120, +0)``."""
        how = f"element {self.element}" if self.element else f"template (score {self.score})"
        if self.method not in ("element", "template"):
            how = self.method
        moved = ", ".join(f"{value:+d}" for value in self.shift)
        return (
            f"step {self.step_index} by {how}: {tuple(self.from_)} -> {tuple(self.to)}, "
            f"shift ({moved})"
        )


class TokenUsage(BaseModel):
    """Tokens the recording run spent (what a replay saves)."""

    model_config = ConfigDict(extra="allow")

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None

    def add(self, usage: dict[str, Any]) -> None:
        """Add one model response's ``usage`` numbers."""
        for name in type(self).model_fields:
            value = usage.get(name)
            if isinstance(value, int):
                setattr(self, name, (getattr(self, name) or 0) + value)


class VisualValidationSettings(BaseModel):
    """How the hashes in ``trajectory[].visual_representation`` were made.

    ``enabled``, ``method`` and ``region_size`` are askui's; ``hash_size`` and
    ``threshold`` are viewfinder's (askui hashes at size 8 and takes the threshold from
    its execution settings). Checked by :func:`viewfinder.cache.store.check_cache_file`.
    """

    model_config = ConfigDict(extra="allow")

    #: A file that has a ``visual_validation`` block but does not say ``enabled: false``
    #: is validated: a block written elsewhere without the key must never replay blind.
    enabled: bool = True
    method: str = "phash"
    region_size: int = DEFAULT_REGION_SIZE
    hash_size: int = DEFAULT_HASH_SIZE
    threshold: int | None = Field(default=None, exclude_if=lambda value: value is None)

    @property
    def active(self) -> bool:
        """True when steps carry hashes to check."""
        return self.enabled and self.method != "none"


class CacheMetadata(BaseModel):
    """What the file is for, how it fared in replays, and how its hashes were made."""

    model_config = ConfigDict(extra="allow")

    version: str = FORMAT_VERSION
    created_at: datetime = Field(default_factory=utc_now)
    goal: str | None = None
    last_executed_at: datetime | None = None
    token_usage: TokenUsage | None = None
    execution_attempts: int = 0
    failures: list[CacheFailure] = Field(default_factory=list)
    is_valid: bool = True
    invalidation_reason: str | None = None
    visual_validation: VisualValidationSettings | None = None
    #: steps replays healed (viewfinder's; written only once there is one)
    heals: list[HealRecord] = Field(default_factory=list, exclude_if=lambda value: not value)

    _times_utc = field_validator("created_at", "last_executed_at")(_utc)

    @model_validator(mode="before")
    @classmethod
    def _flat_visual_settings(cls, data: Any) -> Any:
        # 0.2 kept the visual settings flat in the metadata; 0.3 nests them.
        if not isinstance(data, dict):
            return data
        flat = {
            "visual_verification_method": "method",
            "visual_validation_region_size": "region_size",
            "visual_validation_threshold": "threshold",
        }
        if not any(key in data for key in flat):
            return data
        data = dict(data)
        moved = {new: data.pop(old) for old, new in flat.items() if old in data}
        moved = {key: value for key, value in moved.items() if value is not None}
        if data.get("visual_validation") is None and moved:
            method = moved.get("method", "none")
            data["visual_validation"] = {"enabled": method != "none", **moved}
        return data

    def failures_at(self, step_index: int) -> int:
        """How many recorded failures happened at ``step_index``."""
        return sum(1 for failure in self.failures if failure.step_index == step_index)


class ToolUseBlock(BaseModel):
    """One step: an Anthropic ``tool_use`` block plus the cache's hash of its region.

    Serialise with ``model_dump(context={"for_api": True})`` to get the block a model
    API accepts: only ``type``, ``id``, ``name``, ``input`` and ``cache_control`` remain.
    """

    model_config = ConfigDict(extra="allow")

    type: str = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    visual_representation: str | None = None
    visual_thumbnail: str | None = Field(default=None, exclude_if=lambda value: value is None)
    #: mean colour of the region's quarters (:mod:`viewfinder.cache.regions`)
    visual_colour: str | None = Field(default=None, exclude_if=lambda value: value is None)
    #: where the region is centred when the action has no point of its own: a ``type``
    #: step's field, at the click that focused it
    visual_point: list[int] | None = Field(default=None, exclude_if=lambda value: value is None)
    #: screen rectangles ``[x, y, width, height]`` painted grey before hashing: text
    #: typed from a parameter by an earlier step
    visual_mask: list[list[int]] | None = Field(
        default=None, exclude_if=lambda value: value is None
    )
    #: the element under the step's point when it was recorded (role, name, path, box):
    #: a replay finds it again where the screen changed (docs/cache.md, healing)
    visual_element: ElementAnchor | None = Field(
        default=None, exclude_if=lambda value: value is None
    )
    #: the application whose window was in front at the step's point when it was
    #: recorded (X's ``WM_CLASS``, ``"tk_form/Tk"``): a replay acts there only when the
    #: same application's window is in front again (docs/cache.md, the one check)
    visual_window: str | None = Field(
        default=None, max_length=200, exclude_if=lambda value: value is None
    )

    @model_serializer(mode="wrap")
    def _serialize(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if info.context and info.context.get("for_api"):
            data = {key: data[key] for key in API_BLOCK_FIELDS if key in data}
            if data.get("cache_control") is None:
                data.pop("cache_control", None)
        return data

    @property
    def action(self) -> str | None:
        """The computer-use ``action`` of the input, if it has one."""
        action = self.input.get("action")
        return action if isinstance(action, str) else None

    def to_api(self) -> dict[str, Any]:
        """The block as sent to a model API (no cache-only fields)."""
        return self.model_dump(mode="json", context={"for_api": True})


class CacheFile(BaseModel):
    """A cached trajectory: metadata, ordered tool_use steps and their parameters."""

    model_config = ConfigDict(extra="allow")

    metadata: CacheMetadata = Field(default_factory=CacheMetadata)
    trajectory: list[ToolUseBlock] = Field(default_factory=list)
    cache_parameters: dict[str, str] = Field(default_factory=dict)

    #: The version the file had when it was read (None for a file made here).
    _read_version: str | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if isinstance(data, list):  # 0.0: nothing but the blocks
            return {"metadata": {"version": FORMAT_VERSION}, "trajectory": data}
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "placeholders" in data and "cache_parameters" not in data:  # 0.1
            data["cache_parameters"] = data.pop("placeholders")
        metadata = data.get("metadata")
        if isinstance(metadata, dict) and metadata.get("version", "0.0") in _OLD_VERSIONS:
            data["metadata"] = {**metadata, "version": FORMAT_VERSION}
        return data

    @property
    def read_version(self) -> str | None:
        """The format version of the file this was read from (None if made here)."""
        return self._read_version

    @property
    def visual(self) -> VisualValidationSettings:
        """The visual validation settings (disabled ones when the file has none)."""
        return self.metadata.visual_validation or VisualValidationSettings(enabled=False)

    def to_json(self) -> str:
        """The file's JSON text (format 0.3, unknown fields kept)."""
        return self.model_dump_json(indent=2) + "\n"

    def api_trajectory(self) -> list[dict[str, Any]]:
        """The steps as tool_use blocks a model API accepts."""
        return [block.to_api() for block in self.trajectory]
