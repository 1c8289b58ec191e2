"""Replaying a cache file through a capture backend, checking the screen before each step.

Before every step that has a hash, the executor captures the region around the step's
point, hashes it the way the file says and compares it with the stored hash. When the
Hamming distance is over the threshold it stops *before* acting and hands control back
(status ``NEEDS_AGENT``, the ``viewfinder_replay_handoff`` hook). After the run, the
file's metadata records the attempt and any failure, and may mark the file invalid.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from viewfinder.cache.errors import CacheError
from viewfinder.cache.models import CacheFile
from viewfinder.cache.parameters import check_parameters
from viewfinder.cache.preflight import check_steps_can_run, check_writable
from viewfinder.cache.replay_models import (
    ExecutionSettings,
    ReplayResult,
    ReplayStatus,
)
from viewfinder.cache.replay_run import ReplayRun
from viewfinder.cache.store import check_cache_file, read_cache_file, save_cache_file
from viewfinder.cache.validity import (
    DEFAULT_VALIDATORS,
    CacheValidator,
)
from viewfinder.core.backend import CaptureBackend
from viewfinder.core.errors import CaptureNotSupportedError
from viewfinder.core.plugins import get_plugin_manager

log = logging.getLogger(__name__)


class CacheExecutor:
    """Replays cache files through ``backend.act``, validating the screen before each step."""

    def __init__(
        self,
        backend: CaptureBackend,
        settings: ExecutionSettings | None = None,
        *,
        validators: Sequence[CacheValidator] = DEFAULT_VALIDATORS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.backend = backend
        self.settings = settings or ExecutionSettings()
        self.validators = tuple(validators)
        self._sleep = sleep

    def run(
        self,
        cache: CacheFile | str | os.PathLike[str],
        parameters: Mapping[str, str] | None = None,
        *,
        start_from_step_index: int = 0,
        save: bool | None = None,
    ) -> ReplayResult:
        """Replay ``cache`` (a model or a file path) from ``start_from_step_index``.

        ``parameters`` fill the ``{{name}}`` placeholders. The metadata is updated and,
        for a file path (unless ``save=False``), written back atomically. Bad input
        (missing or unknown parameters, an unknown action or key, a step off the screen,
        a file that cannot be written, a backend that cannot act) raises before anything
        is performed. Once steps were performed, a failure to write the file back is a
        warning on the result (``result.warnings``), never an exception.
        """
        # a model made in Python gets the checks a file gets when it is read
        if isinstance(cache, CacheFile):
            path, model = None, check_cache_file(cache)
        else:
            path = Path(cache)
            model = read_cache_file(path)
        values = dict(parameters or {})
        self._check_can_start(model, values, start_from_step_index)
        saving = path is not None and save is not False
        if saving:
            assert path is not None
            check_writable(path)
        run = ReplayRun(self, model, path, values, start_from_step_index)
        check_steps_can_run(model, values, start_from_step_index, run.screen.size, path)
        try:
            result = run.execute()
        finally:
            run.close()
        if saving:
            assert path is not None
            try:
                save_cache_file(model, path)
            except (OSError, CacheError) as exc:
                log.warning("cache replay: could not record the attempt in %s: %s", path, exc)
                result.warnings.append(
                    f"the replay ended {result.status.value}, but recording it in {path} "
                    f"failed: {exc}"
                )
        if result.status is not ReplayStatus.COMPLETED:
            result.handoff = get_plugin_manager().hook.viewfinder_replay_handoff(
                result=result, context=run.handoff_context(result)
            )
        return result

    def _check_can_start(self, cache: CacheFile, values: Mapping[str, str], start: int) -> None:
        if not self.backend.supports_act:
            raise CaptureNotSupportedError(
                f"capture backend {self.backend.name!r} cannot perform actions, so it cannot "
                "replay; use one that can act (xvfb, cdp)"
            )
        if not 0 <= start <= len(cache.trajectory):
            raise CacheError(
                f"start_from_step_index {start} is outside the trajectory's "
                f"{len(cache.trajectory)} steps (use 0 to {len(cache.trajectory)})"
            )
        check_parameters(cache, values)
