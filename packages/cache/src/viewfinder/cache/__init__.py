"""viewfinder.cache: trajectory cache files with perceptual hashes, validated before replay.

Build a cache file from what an agent did, then replay it without asking a model again,
stopping wherever the screen no longer looks as it did::

    from viewfinder.cache import CacheExecutor, ExecutionSettings, build_cache, save_cache_file
    from viewfinder.core import get_backend

    save_cache_file(build_cache("messages.json"), "login.json")          # doctest: +SKIP
    backend = get_backend("xvfb", display=":1")                          # doctest: +SKIP
    result = CacheExecutor(backend).run("login.json", {"user": "ada"})   # doctest: +SKIP
    result.status       # COMPLETED, or NEEDS_AGENT with result.step_index and .message

Files follow askui's cache format 0.3 (and 0.2, 0.1, 0.0 are read); hashes are
bit-identical to imagehash's. See docs/cache.md.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from viewfinder.cache.actions import DEFAULT_HASHED_ACTIONS, action_point, block_event
    from viewfinder.cache.checks import DEFAULT_THRESHOLD, LiveScreen, StepCheck, check_steps
    from viewfinder.cache.errors import (
        CacheError,
        CacheFileError,
        HashSettingsError,
        MissingParameterError,
        SourceError,
        StepCoordinateError,
    )
    from viewfinder.cache.executor import CacheExecutor
    from viewfinder.cache.frames import Frame, RecordedStep, steps_from_messages
    from viewfinder.cache.hashing import (
        HASH_METHODS,
        HashMethod,
        RegionHasher,
        hamming_distance,
        hash_length,
        image_hash,
        region_around,
    )
    from viewfinder.cache.models import (
        FORMAT_VERSION,
        CacheFailure,
        CacheFile,
        CacheMetadata,
        HealRecord,
        TokenUsage,
        ToolUseBlock,
        VisualValidationSettings,
    )
    from viewfinder.cache.parameters import (
        check_parameters,
        parameterize,
        substitute,
        used_parameters,
    )
    from viewfinder.cache.recording import (
        RecordingSettings,
        build_cache,
        build_from_messages,
        build_from_session,
        build_from_trajectory,
        record,
    )
    from viewfinder.cache.replay_models import (
        ExecutionSettings,
        ReplayResult,
        ReplayStatus,
        StepOutcome,
    )
    from viewfinder.cache.report import MismatchReport, write_mismatch_report
    from viewfinder.cache.store import (
        check_cache_file,
        parse_cache_json,
        read_cache_file,
        save_cache_file,
    )
    from viewfinder.cache.validity import (
        DEFAULT_VALIDATORS,
        CacheValidator,
        FailureRateLimit,
        StaleLimit,
        StepFailureLimit,
        invalidation_reason,
        record_attempt,
    )

# Loaded on first use: the plugin manager imports this package (for its command) in every
# viewfinder process, and most of them never touch a cache file or numpy.
_LAZY = {
    "CacheError": "viewfinder.cache.errors",
    "CacheExecutor": "viewfinder.cache.executor",
    "CacheFailure": "viewfinder.cache.models",
    "CacheFile": "viewfinder.cache.models",
    "CacheFileError": "viewfinder.cache.errors",
    "CacheMetadata": "viewfinder.cache.models",
    "CacheValidator": "viewfinder.cache.validity",
    "DEFAULT_HASHED_ACTIONS": "viewfinder.cache.actions",
    "DEFAULT_THRESHOLD": "viewfinder.cache.checks",
    "DEFAULT_VALIDATORS": "viewfinder.cache.validity",
    "ExecutionSettings": "viewfinder.cache.replay_models",
    "FORMAT_VERSION": "viewfinder.cache.models",
    "FailureRateLimit": "viewfinder.cache.validity",
    "Frame": "viewfinder.cache.frames",
    "HASH_METHODS": "viewfinder.cache.hashing",
    "HashMethod": "viewfinder.cache.hashing",
    "HashSettingsError": "viewfinder.cache.errors",
    "HealRecord": "viewfinder.cache.models",
    "LiveScreen": "viewfinder.cache.checks",
    "MismatchReport": "viewfinder.cache.report",
    "MissingParameterError": "viewfinder.cache.errors",
    "RecordedStep": "viewfinder.cache.frames",
    "RecordingSettings": "viewfinder.cache.recording",
    "RegionHasher": "viewfinder.cache.hashing",
    "ReplayResult": "viewfinder.cache.replay_models",
    "ReplayStatus": "viewfinder.cache.replay_models",
    "SourceError": "viewfinder.cache.errors",
    "StaleLimit": "viewfinder.cache.validity",
    "StepCheck": "viewfinder.cache.checks",
    "StepCoordinateError": "viewfinder.cache.errors",
    "StepFailureLimit": "viewfinder.cache.validity",
    "StepOutcome": "viewfinder.cache.replay_models",
    "TokenUsage": "viewfinder.cache.models",
    "ToolUseBlock": "viewfinder.cache.models",
    "VisualValidationSettings": "viewfinder.cache.models",
    "action_point": "viewfinder.cache.actions",
    "block_event": "viewfinder.cache.actions",
    "build_cache": "viewfinder.cache.recording",
    "build_from_messages": "viewfinder.cache.recording",
    "build_from_session": "viewfinder.cache.recording",
    "build_from_trajectory": "viewfinder.cache.recording",
    "check_cache_file": "viewfinder.cache.store",
    "check_parameters": "viewfinder.cache.parameters",
    "check_steps": "viewfinder.cache.checks",
    "hamming_distance": "viewfinder.cache.hashing",
    "hash_length": "viewfinder.cache.hashing",
    "image_hash": "viewfinder.cache.hashing",
    "invalidation_reason": "viewfinder.cache.validity",
    "parameterize": "viewfinder.cache.parameters",
    "parse_cache_json": "viewfinder.cache.store",
    "read_cache_file": "viewfinder.cache.store",
    "record": "viewfinder.cache.recording",
    "record_attempt": "viewfinder.cache.validity",
    "region_around": "viewfinder.cache.hashing",
    "save_cache_file": "viewfinder.cache.store",
    "steps_from_messages": "viewfinder.cache.frames",
    "substitute": "viewfinder.cache.parameters",
    "used_parameters": "viewfinder.cache.parameters",
    "write_mismatch_report": "viewfinder.cache.report",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'viewfinder.cache' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "DEFAULT_HASHED_ACTIONS",
    "DEFAULT_THRESHOLD",
    "DEFAULT_VALIDATORS",
    "FORMAT_VERSION",
    "HASH_METHODS",
    "CacheError",
    "CacheExecutor",
    "CacheFailure",
    "CacheFile",
    "CacheFileError",
    "CacheMetadata",
    "CacheValidator",
    "ExecutionSettings",
    "FailureRateLimit",
    "Frame",
    "HashMethod",
    "HashSettingsError",
    "HealRecord",
    "LiveScreen",
    "MismatchReport",
    "MissingParameterError",
    "RecordedStep",
    "RecordingSettings",
    "RegionHasher",
    "ReplayResult",
    "ReplayStatus",
    "SourceError",
    "StaleLimit",
    "StepCheck",
    "StepCoordinateError",
    "StepFailureLimit",
    "StepOutcome",
    "TokenUsage",
    "ToolUseBlock",
    "VisualValidationSettings",
    "action_point",
    "block_event",
    "build_cache",
    "build_from_messages",
    "build_from_session",
    "build_from_trajectory",
    "check_cache_file",
    "check_parameters",
    "check_steps",
    "hamming_distance",
    "hash_length",
    "image_hash",
    "invalidation_reason",
    "parameterize",
    "parse_cache_json",
    "read_cache_file",
    "record",
    "record_attempt",
    "region_around",
    "save_cache_file",
    "steps_from_messages",
    "substitute",
    "used_parameters",
    "write_mismatch_report",
]
