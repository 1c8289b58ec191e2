"""When a cache file stops being trustworthy: too many failures, or unused for too long.

After every replay the metadata records the attempt (``execution_attempts``,
``last_executed_at``) and any failure; then each validator may give a reason to mark the
file invalid. The defaults are askui's: 3 failures at one step, a failure rate over 50 %
after 10 attempts, or 30 days without use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from viewfinder.cache.models import CacheFailure, CacheFile, utc_now


class CacheValidator(Protocol):
    """Something that may find a reason to stop trusting a cache file."""

    def reason_to_invalidate(self, cache: CacheFile, now: datetime) -> str | None:
        """Why ``cache`` should be marked invalid at ``now``, or None if it should not."""
        ...


@dataclass(frozen=True)
class StepFailureLimit:
    """Invalid once one step has failed ``max_failures_per_step`` times."""

    max_failures_per_step: int = 3

    def reason_to_invalidate(self, cache: CacheFile, now: datetime) -> str | None:
        counts: dict[int, int] = {}
        for failure in cache.metadata.failures:
            counts[failure.step_index] = counts.get(failure.step_index, 0) + 1
        for step, count in sorted(counts.items()):
            if count >= self.max_failures_per_step:
                return (
                    f"step {step} failed {count} times (limit {self.max_failures_per_step}); "
                    "the screen there has changed for good"
                )
        return None


@dataclass(frozen=True)
class FailureRateLimit:
    """Invalid when, after ``min_attempts`` replays, more than ``max_rate`` of them failed."""

    min_attempts: int = 10
    max_rate: float = 0.5

    def reason_to_invalidate(self, cache: CacheFile, now: datetime) -> str | None:
        attempts = cache.metadata.execution_attempts
        if attempts < self.min_attempts:
            return None
        rate = len(cache.metadata.failures) / attempts
        if rate > self.max_rate:
            return (
                f"{rate:.0%} of {attempts} replays failed (limit {self.max_rate:.0%} "
                f"after {self.min_attempts})"
            )
        return None


@dataclass(frozen=True)
class StaleLimit:
    """Invalid after ``max_age_days`` without a replay (counted from creation if never run)."""

    max_age_days: int = 30

    def reason_to_invalidate(self, cache: CacheFile, now: datetime) -> str | None:
        last_used = cache.metadata.last_executed_at or cache.metadata.created_at
        idle = now - last_used
        if idle > timedelta(days=self.max_age_days):
            return f"unused for {idle.days} days (limit {self.max_age_days})"
        return None


DEFAULT_VALIDATORS: tuple[CacheValidator, ...] = (
    StepFailureLimit(),
    FailureRateLimit(),
    StaleLimit(),
)


def invalidation_reason(
    cache: CacheFile,
    validators: Sequence[CacheValidator] = DEFAULT_VALIDATORS,
    now: datetime | None = None,
) -> str | None:
    """The first validator's reason to mark ``cache`` invalid, or None."""
    moment = now or utc_now()
    for validator in validators:
        reason = validator.reason_to_invalidate(cache, moment)
        if reason:
            return reason
    return None


def mark_invalid_if_due(
    cache: CacheFile,
    validators: Sequence[CacheValidator] = DEFAULT_VALIDATORS,
    now: datetime | None = None,
) -> str | None:
    """Mark ``cache`` invalid when a validator says so; return the reason (None if valid)."""
    if not cache.metadata.is_valid:
        return cache.metadata.invalidation_reason or "marked invalid"
    reason = invalidation_reason(cache, validators, now)
    if reason:
        cache.metadata.is_valid = False
        cache.metadata.invalidation_reason = reason
    return reason


def record_attempt(
    cache: CacheFile,
    *,
    failed_step: int | None = None,
    error_message: str = "",
    validators: Sequence[CacheValidator] = DEFAULT_VALIDATORS,
    now: datetime | None = None,
) -> str | None:
    """Record one replay in the metadata, and a failure at ``failed_step`` if there was one.

    Returns the reason the file was marked invalid, if this attempt made it so.
    """
    moment = now or utc_now()
    metadata = cache.metadata
    metadata.execution_attempts += 1
    metadata.last_executed_at = moment
    if failed_step is not None:
        metadata.failures.append(
            CacheFailure(
                timestamp=moment,
                step_index=failed_step,
                error_message=error_message,
                failure_count_at_step=metadata.failures_at(failed_step) + 1,
            )
        )
    return mark_invalid_if_due(cache, validators, moment)


def restore_validity(cache: CacheFile) -> None:
    """Trust ``cache`` again: valid, no reason, no failures counted against it.

    Done by ``viewfinder cache reset`` and by a replay that performed every step with
    each check passing; the attempt count and the last use are kept.
    """
    metadata = cache.metadata
    metadata.is_valid = True
    metadata.invalidation_reason = None
    metadata.failures = []
