"""``record_start`` and ``record_stop`` in the tool registry (``viewfinder_register_tools``).

A recording of the calling session's display (``ToolContext.display``): every click,
key, text entry and scroll made on it, by a person or by the agent's own actions, each
with the frame from just before it, into a session folder (``manifest.jsonl``) that
``viewfinder record show`` and ``viewfinder cache build`` read. One recording per
session at a time; closing the session stops it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core import Tool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from viewfinder.recorder.recorder import Recorder

#: ``ToolContext`` resource key of the session's running recorder.
RECORDER_RESOURCE = "recorder.recording"


class _Recording:
    """The session's recorder, stopped when the session's context closes."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def close(self) -> None:
        self.recorder.stop()


class RecordStartInput(BaseModel):
    """The arguments of ``record_start``."""

    model_config = ConfigDict(extra="forbid")

    folder: str = Field(
        min_length=1,
        description="The session folder to record into (created; must not hold a recording).",
    )


class RecordStopInput(BaseModel):
    """``record_stop`` takes no arguments."""

    model_config = ConfigDict(extra="forbid")


def record_start(arguments: RecordStartInput, context: ToolContext) -> ToolResult:
    """The ``record_start`` tool."""
    from viewfinder.recorder.recorder import Recorder
    from viewfinder.recorder.x11 import X11RecordInput

    if not context.display:
        raise ToolError("record_start: this session has no display to record")
    running = context.get_resource(RECORDER_RESOURCE)
    if running is not None and running.recorder.running:
        raise ToolError(
            f"record_start: already recording into {running.recorder.session_dir}; call "
            "record_stop first"
        )
    folder = context.path(arguments.folder, what="session folder")
    from viewfinder.recorder.errors import SessionExistsError

    try:
        recorder = Recorder(
            folder,
            "xvfb",
            backend_options={"display": context.display},
            input_source=X11RecordInput(context.display),
        )
        recorder.start()
    except SessionExistsError as exc:
        if not (folder / "manifest.jsonl").exists():  # other files: the message says so
            raise ToolError(f"record_start: {exc}") from None
        # the library's hint names resume=True, which this tool does not take
        raise ToolError(
            f"record_start: {arguments.folder} already holds a recording ({exc.events} "
            'events); give another folder (record_start {"folder": "a new name"})'
        ) from None
    context.drop_resource(RECORDER_RESOURCE)
    context.resource(RECORDER_RESOURCE, lambda: _Recording(recorder))
    return ToolResult.of(
        f"recording {context.display} into {arguments.folder}",
        structured={"folder": str(folder), "display": context.display},
    )


def record_stop(arguments: RecordStopInput, context: ToolContext) -> ToolResult:
    """The ``record_stop`` tool."""
    recording = context.drop_resource(RECORDER_RESOURCE)
    if recording is None:
        raise ToolError("record_stop: nothing is being recorded; call record_start first")
    summary = recording.recorder.stop()
    return ToolResult.of(
        str(summary),
        structured={
            "folder": str(summary.session_dir),
            "events": summary.events,
            "counts": dict(summary.counts),
            "error": summary.error,
        },
        is_error=summary.error is not None,
    )


RECORD_START = Tool(
    "record_start",
    "Start recording this screen: every click, key, text entry and scroll, each with the "
    "screenshot from just before it, into a session folder (manifest.jsonl + frames) that "
    "can become a replayable cache file. Stop with record_stop.",
    RecordStartInput,
    record_start,
    title="Start recording the screen",
)
RECORD_STOP = Tool(
    "record_stop",
    "Stop the recording record_start began; returns how many actions were recorded and where.",
    RecordStopInput,
    record_stop,
    title="Stop recording",
)
