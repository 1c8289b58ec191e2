"""When a cache file is marked invalid: failures at one step, failure rate, age."""

from __future__ import annotations

from datetime import timedelta

from viewfinder.cache import (
    CacheFile,
    CacheValidator,
    FailureRateLimit,
    StaleLimit,
    StepFailureLimit,
    invalidation_reason,
    record_attempt,
)
from viewfinder.cache.models import utc_now


def test_three_failures_at_one_step() -> None:
    cache = CacheFile()
    assert record_attempt(cache, failed_step=2, error_message="a") is None
    assert record_attempt(cache, failed_step=5, error_message="b") is None
    assert record_attempt(cache, failed_step=2, error_message="c") is None
    reason = record_attempt(cache, failed_step=2, error_message="d")
    assert reason is not None and "step 2 failed 3 times" in reason
    assert not cache.metadata.is_valid and cache.metadata.invalidation_reason == reason
    assert [f.failure_count_at_step for f in cache.metadata.failures] == [1, 1, 2, 3]


def test_failure_rate_counts_only_after_ten_attempts() -> None:
    cache = CacheFile()
    for step in range(6):  # six failures, each at its own step
        record_attempt(cache, failed_step=step, error_message="x")
    assert cache.metadata.is_valid  # 6 of 6, but fewer than 10 attempts
    for _ in range(3):
        record_attempt(cache)
    assert cache.metadata.is_valid  # 9 attempts
    reason = record_attempt(cache)
    assert reason == "60% of 10 replays failed (limit 50% after 10)"
    healthy = CacheFile()
    for step in range(5):
        record_attempt(healthy, failed_step=step, error_message="x")
    for _ in range(5):
        record_attempt(healthy)
    assert healthy.metadata.is_valid  # exactly 50%: not over


def test_thirty_days_unused() -> None:
    now = utc_now()
    cache = CacheFile()
    cache.metadata.created_at = now - timedelta(days=40)
    cache.metadata.last_executed_at = now - timedelta(days=29)
    assert invalidation_reason(cache, now=now) is None
    cache.metadata.last_executed_at = None
    assert invalidation_reason(cache, now=now) == "unused for 40 days (limit 30)"


def test_validators_are_configurable() -> None:
    cache = CacheFile()
    record_attempt(cache, failed_step=0, error_message="x")
    strict: list[CacheValidator] = [
        StepFailureLimit(max_failures_per_step=1),
        FailureRateLimit(),
        StaleLimit(),
    ]
    assert invalidation_reason(cache, strict) is not None
    assert invalidation_reason(cache) is None
