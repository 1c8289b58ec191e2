"""``cache_check`` and ``cache_replay`` in the tool registry (``viewfinder_register_tools``).

Both work on the calling session's display (``ToolContext.display``, the xvfb backend).
Cache file paths go through :meth:`ToolContext.path`, so behind a server a model names
files inside the session's folder only.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core import Tool, ToolContext, ToolError, ToolResult

CHECK_DESCRIPTION = (
    "Check a cache file of a recorded trajectory against the screen as it is now, "
    "without acting: for each step that stored a perceptual hash of the region around "
    "its click or text entry, the Hamming distance between that hash and the live "
    "region, and whether it is within the threshold. Use it before cache_replay to learn "
    "whether the screen still looks as recorded; the first failing step is where the UI "
    "changed."
)
REPLAY_DESCRIPTION = (
    "Replay a cache file of a recorded trajectory on this screen without asking a model: "
    "before each step the region around it is compared with the recorded hash, and the "
    "replay stops (status NEEDS_AGENT, with the step index and distance) where the "
    "screen no longer looks as recorded, handing control back to you. A step whose target "
    "only moved is first looked for (its element by role and name, else its recorded "
    "picture nearby) and performed there when the match is certain (`heal: false` to "
    "stop instead). `parameters` fill "
    "the file's {{name}} placeholders. Returns the status, the step it stopped at and a "
    "screenshot of the screen afterwards."
)


class CacheCheckInput(BaseModel):
    """The arguments of ``cache_check``."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(min_length=1, description="The cache file (JSON) to check.")
    threshold: int | None = Field(
        default=None,
        ge=0,
        description="Largest Hamming distance that still matches (default: the file's, else 10).",
    )


class CacheReplayInput(BaseModel):
    """The arguments of ``cache_replay``."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(min_length=1, description="The cache file (JSON) to replay.")
    parameters: dict[str, str] = Field(
        default_factory=dict, description="Values of the file's {{name}} placeholders."
    )
    start_from_step_index: int = Field(
        default=0, ge=0, description="The first step to perform (0: from the start)."
    )
    threshold: int | None = Field(
        default=None, ge=0, description="Largest Hamming distance that still matches."
    )
    delay_between_actions: float = Field(
        default=0.5, ge=0, le=10, description="Seconds to wait after each step (0 to 10)."
    )
    heal: bool = Field(
        default=True,
        description="Perform a step whose target moved where it is found with certainty "
        "(false: stop at the first step that does not look as recorded).",
    )


def _display(tool: str, context: ToolContext) -> str:
    if not context.display:
        raise ToolError(f"{tool}: this session has no display to check or act on")
    return context.display


def cache_check(arguments: CacheCheckInput, context: ToolContext) -> ToolResult:
    """The ``cache_check`` tool."""
    from viewfinder.cache.checks import check_steps
    from viewfinder.cache.store import read_cache_file
    from viewfinder.core import get_backend

    path = context.path(arguments.file, what="cache file")
    cache = read_cache_file(path)
    with get_backend("xvfb", display=_display("cache_check", context)) as backend:
        checks = check_steps(backend, cache, arguments.threshold, path)
    if not checks:
        return ToolResult.of(
            f"{arguments.file} has no visual validation: nothing to check",
            structured={"status": "UNCHECKED", "steps": []},
        )
    failed = [check for check in checks if not check.passed]
    lines = [
        f"step {check.index} ({check.action}): distance {check.distance} of at most "
        f"{check.threshold}: {'matches' if check.passed else 'DIFFERENT'}"
        for check in checks
    ]
    first = failed[0] if failed else None
    status = "MISMATCH" if first else "MATCH"
    summary = (
        f"the screen differs from the recording at step {first.index}"
        if first
        else "the screen looks as recorded at every checked step"
    )
    return ToolResult.of(
        "\n".join([summary, *lines]),
        structured={
            "status": status,
            "step": first.index if first else None,
            "distance": first.distance if first else None,
            "steps": [
                {
                    "index": check.index,
                    "action": check.action,
                    "distance": check.distance,
                    "threshold": check.threshold,
                    "passed": check.passed,
                }
                for check in checks
            ],
        },
    )


def cache_replay(arguments: CacheReplayInput, context: ToolContext) -> ToolResult:
    """The ``cache_replay`` tool."""
    from viewfinder.cache.executor import CacheExecutor, ExecutionSettings
    from viewfinder.core import get_backend

    path = context.path(arguments.file, what="cache file")
    settings = ExecutionSettings(
        delay_time_between_actions=arguments.delay_between_actions,
        visual_validation_threshold=arguments.threshold,
        heal=arguments.heal,
    )
    with get_backend("xvfb", display=_display("cache_replay", context)) as backend:
        result = CacheExecutor(backend, settings).run(
            path, arguments.parameters, start_from_step_index=arguments.start_from_step_index
        )
        after = backend.capture()
    return ToolResult.of(
        result.summary,
        after,
        structured={
            "status": result.status.value,
            "step": result.step_index,
            "distance": result.distance,
            "threshold": result.threshold,
            "acted": result.acted,
            "healed": [
                {"index": step.index, "method": step.healed, "to": step.healed_to}
                for step in result.steps
                if step.healed
            ],
            "warnings": result.warnings,
        },
        is_error=result.status.value == "FAILED",
    )


CACHE_CHECK = Tool(
    "cache_check",
    CHECK_DESCRIPTION,
    CacheCheckInput,
    cache_check,
    title="Check a cached trajectory against the screen",
    annotations={"readOnlyHint": True},
)
CACHE_REPLAY = Tool(
    "cache_replay",
    REPLAY_DESCRIPTION,
    CacheReplayInput,
    cache_replay,
    title="Replay a cached trajectory",
    annotations={"readOnlyHint": False, "destructiveHint": False},
)
