"""Actions, observations and state of the code env, shaped like OpenEnv's coding env.

The field names, types and defaults are those of OpenEnv's ``CodeAction`` /
``CodeObservation`` / ``CodeState`` (on its ``Action`` / ``Observation`` / ``State``
bases: ``metadata`` on actions and observations, ``done`` and ``reward`` on
observations, ``episode_id`` and ``step_count`` on state), so code written against
OpenEnv's coding env runs unchanged. The additions are optional with defaults:
``timeout_s`` and ``capture_screenshot`` on the action, ``screenshot``,
``screenshots`` and ``videos`` on the observation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

#: The longest a step may be asked to run, in seconds (a day).
MAX_TIMEOUT_S = 24 * 3600


class CodeAction(BaseModel):
    """Run ``code`` (Python source) in the session's interpreter.

    ``timeout_s`` overrides the environment's step timeout. ``capture_screenshot=True``
    is the old after-execution capture, kept for old clients and deprecated: call
    ``capture_screenshot()`` inside the code instead (see docs/codeenv.md).
    """

    # strict: "5" is not a number of seconds and "yes" is not True; a client that sends
    # them gets told, instead of a guess
    model_config = ConfigDict(extra="forbid", validate_assignment=True, strict=True)

    code: str
    timeout_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    capture_screenshot: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)


StoppedBy = Literal["code", "step end", "worker lost"]


class Video(BaseModel):
    """A video the step's code recorded with ``start_recording()`` / ``stop_recording()``.

    ``path`` is the MP4 (H.264) on the machine running the environment; ``data`` is the
    same file as base64 when it is at most the environment's ``video_inline_bytes``
    (None otherwise). ``started_at`` is the instant of its first frame (UTC), so an
    instant ``t`` of the step is at ``t - started_at`` in the video. ``stopped_by``:
    ``code`` (``stop_recording()``), ``step end`` (still running when the step ended)
    or ``worker lost`` (the step timed out or crashed).
    """

    model_config = ConfigDict(extra="forbid")

    path: str
    mime_type: str = "video/mp4"
    started_at: datetime
    duration_s: float
    frames: int
    width: int
    height: int
    fps: float
    size_bytes: int
    region: list[int] | None = None
    stopped_by: StoppedBy = "code"
    data: str | None = None


class CodeObservation(BaseModel):
    """What one step did.

    ``exit_code`` follows ``python -c``: 0 when the code ran to its end, 1 for an
    uncaught exception, the value given to ``sys.exit()``; 124 when the step was killed
    at its timeout, and the worker's status (negative: the signal) when it crashed.
    ``screenshots`` holds every capture of the step in order as base64 PNG;
    ``screenshot`` is the last one, or None. ``videos`` holds the step's recordings
    (:class:`Video`).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    screenshot: str | None = None
    screenshots: list[str] = Field(default_factory=list)
    videos: list[Video] = Field(default_factory=list)
    done: bool = False
    reward: bool | int | float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class CodeState(BaseModel):
    """The episode: its id, the steps taken, and the exit code of the last one."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    episode_id: str | None = None
    step_count: int = Field(default=0, ge=0)
    last_exit_code: int = 0


ObservationT = TypeVar("ObservationT")


@dataclass
class StepResult(Generic[ObservationT]):
    """A step's result as OpenEnv's clients return it: the observation, reward, done."""

    observation: ObservationT
    reward: float | None = None
    done: bool = False


#: Observation fields OpenEnv's coding env does not have: left out of the wire format
#: when empty, so OpenEnv's own strict client reads our observations unchanged.
ADDED_OBSERVATION_FIELDS = ("screenshot", "screenshots", "videos")


def observation_payload(
    observation: CodeObservation, *, deduplicated: bool = False
) -> dict[str, Any]:
    """The wire form of an observation: ``{"observation": ..., "reward": ..., "done": ...}``.

    The layout of OpenEnv's ``serialize_observation``, except that ``metadata`` stays in
    the observation when it has anything (OpenEnv drops it; its clients accept it).
    ``screenshot`` is there whenever the step captured, as OpenEnv's clients read it
    (``observation["screenshot"]``, a ``CodeObservation``'s field). ``deduplicated``
    sends the last capture once: ``screenshot`` is left out when it is the last of
    ``screenshots`` (:func:`observation_from_payload` puts it back); a client asks
    for it (viewfinder's ``CodingEnv`` does).
    """
    body = observation.model_dump(exclude={"reward", "done", "videos"})
    body["videos"] = [video.model_dump(mode="json") for video in observation.videos]
    if deduplicated and body["screenshots"] and body["screenshot"] == body["screenshots"][-1]:
        body["screenshot"] = None
    for name in ADDED_OBSERVATION_FIELDS:
        if not body[name]:
            del body[name]
    if not body["metadata"]:
        del body["metadata"]
    return {"observation": body, "reward": observation.reward, "done": observation.done}


#: Stand in for the captures while the rest of an observation is written as JSON.
_SHOTS_SLOT = "\x00viewfinder-screenshots\x00"
_SHOT_SLOT = "\x00viewfinder-screenshot\x00"


def observation_json(
    observation: CodeObservation,
    wrap: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    *,
    deduplicated: bool = False,
) -> str:
    """:func:`observation_payload` as JSON text (wrapped in ``wrap(payload)`` when given).

    The same text as ``json.dumps``, made faster: base64 needs no escaping, so the
    captures are joined in as they are instead of being scanned by the encoder,
    which would hold the GIL for the whole of a large observation.
    """
    payload = observation_payload(observation, deduplicated=deduplicated)
    body = payload["observation"]
    shots, shot = body.get("screenshots"), body.get("screenshot")
    if shots:
        body["screenshots"] = _SHOTS_SLOT
    if shot:
        body["screenshot"] = _SHOT_SLOT
    text = json.dumps(wrap(payload) if wrap is not None else payload)
    if shot:
        head, tail = text.split(json.dumps(_SHOT_SLOT), 1)
        text = "".join([head, '"', shot, '"', tail])
    if shots:
        head, tail = text.split(json.dumps(_SHOTS_SLOT), 1)
        text = "".join([head, '["', '","'.join(shots), '"]', tail])
    return text


def observation_from_payload(payload: dict[str, Any]) -> CodeObservation:
    """Read a wire-form observation back (the inverse of :func:`observation_payload`)."""
    body = dict(payload.get("observation", {}))
    if body.get("screenshot") is None and body.get("screenshots"):
        body["screenshot"] = body["screenshots"][-1]
    return CodeObservation(**body, reward=payload.get("reward"), done=bool(payload.get("done")))
