"""The options of a :class:`~viewfinder.desktop.computer.ComputerTool`, checked before it
starts: each one it cannot use is a :class:`ComputerToolOptionError` that says which."""

from __future__ import annotations

from viewfinder.core import ViewfinderError
from viewfinder.core.imaging import normalize_format
from viewfinder.core.result_budget import ResultBudget, UnknownClientError, budget_for
from viewfinder.desktop.scaling import RESAMPLE_FILTERS
from viewfinder.desktop.settle import SettleOptions

#: The fewest tokens a snapshot of the elements may be given.
MIN_SNAPSHOT_TOKENS = 20


class ComputerToolOptionError(ViewfinderError, ValueError):
    """A ComputerTool was given an option it cannot use."""


def checked_options(
    image_format: str,
    api: object,
    settle: object,
    resample: object,
    client: str | ResultBudget | None,
    snapshot_tokens: int | None,
) -> tuple[str, ResultBudget]:
    """The image format's normal name and the client's result budget, once every option
    was found usable; else :class:`ComputerToolOptionError`."""
    try:
        fmt = normalize_format(image_format)
    except ValueError as exc:
        raise ComputerToolOptionError(str(exc)) from None
    if api not in (None, "anthropic", "openai"):
        raise ComputerToolOptionError(f"api must be anthropic, openai or None, got {api!r}")
    if settle is not None and not isinstance(settle, SettleOptions):
        raise ComputerToolOptionError(
            f"settle must be a SettleOptions, got {type(settle).__name__}"
        )
    if resample not in RESAMPLE_FILTERS:
        raise ComputerToolOptionError(
            f"resample must be one of {', '.join(RESAMPLE_FILTERS)}, got {resample!r}"
        )
    try:
        budget = budget_for(client)
    except UnknownClientError as exc:
        raise ComputerToolOptionError(str(exc)) from None
    if snapshot_tokens is not None and snapshot_tokens < MIN_SNAPSHOT_TOKENS:
        raise ComputerToolOptionError(
            f"snapshot_tokens must be at least {MIN_SNAPSHOT_TOKENS}, got {snapshot_tokens}"
        )
    return fmt, budget
