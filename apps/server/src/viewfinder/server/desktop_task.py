"""The task of a desktop session: what ``reset`` takes (apps, screen size, scaling).

A reset's ``data`` (``{"type": "reset", "data": {...}}``, the body of ``POST /reset``,
``reset(**task)`` in OpenEnv's clients) is a :class:`DesktopTask`; every field left out
comes from the server's task (``viewfinder serve --env desktop --app ... --size ...
--target ...``). Unknown fields and wrong types are refused with the field's name.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
)

from viewfinder.server.errors import TaskRejectedError
from viewfinder.server.tasks.model import Task

#: Most apps one task may start.
MAX_APPS = 8
#: Most words in one app's command, and characters in one word.
MAX_WORDS, MAX_WORD_CHARS = 64, 4096
#: Smallest and largest screen sides (a larger screen costs its memory in every capture).
MIN_SIDE, MAX_WIDTH, MAX_HEIGHT = 64, 7680, 4320
TARGET_NAMES = ("auto", "XGA", "WXGA", "FWXGA")

Word = Annotated[StrictStr, Field(min_length=1, max_length=MAX_WORD_CHARS)]
Command = Annotated[list[Word], Field(min_length=1, max_length=MAX_WORDS)]
Side = Annotated[StrictInt, Field(ge=1, le=MAX_WIDTH)]


class DesktopTask(BaseModel):
    """What a desktop episode starts with.

    - ``apps``: commands with their arguments, ``[["python3", "form.py"], ["xterm"]]``,
      started in order on the session's screen; each must be one of the server's apps
      unless the server allows any (``--allow-any-app``).
    - ``size``: the screen, ``[width, height]`` or ``"WIDTHxHEIGHT"``; one other than the
      server's ``--size`` gets a display of its own instead of a warm one.
    - ``target``: the size the model sees the screen at: ``"XGA"`` (1024x768),
      ``"WXGA"`` (1280x800), ``"FWXGA"`` (1366x768), ``"auto"`` (the standard size of the
      screen's shape), ``[width, height]``, or null for none (the default). The model's
      coordinates are in that space, mapped back to the screen exactly.
    - ``elements``: start the screen's accessibility buses with it, so the apps publish
      their elements, and have every ``computer`` result carry them (a snapshot with
      refs; actions may then name an element, ``{"element": "e12"}``). Default false.
    - ``task``: a task that scores itself (docs/tasks.md): its apps, screen and files
      start the episode, its instruction comes back in the reset's metadata, and every
      step's observation carries its checker's ``reward`` and ``done``.
    - ``record_to``: an absolute path of a new or empty folder on the server's machine
      that receives the episode as a session folder the viewer opens (every ``computer``
      action with the screen before it; with a task, its scores in ``task.json``). Only
      on a server that allows any app (``--allow-any-app``): it writes as the server's
      user.
    - ``seed`` (accepted, as OpenEnv's reset has it) and ``episode_id``.
    """

    model_config = ConfigDict(extra="forbid")

    seed: StrictInt | None = Field(default=None, ge=0)
    episode_id: StrictStr | None = Field(default=None, max_length=255)
    apps: list[Command] | None = Field(default=None, max_length=MAX_APPS)
    size: tuple[int, int] | None = None
    target: Literal["auto", "XGA", "WXGA", "FWXGA"] | tuple[Side, Side] | None = None
    elements: StrictBool | None = None
    task: Task | None = None
    record_to: Annotated[StrictStr, Field(min_length=2, max_length=4096)] | None = None

    @field_validator("record_to")
    @classmethod
    def _record_to(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError(f"{value!r} must be an absolute path (a folder on the server)")
        return value

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        if isinstance(value, str):
            match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", value)
            if match is None:
                raise ValueError(f"{value!r} is not WIDTHxHEIGHT (e.g. 1280x800)")
            return (int(match.group(1)), int(match.group(2)))
        if isinstance(value, list | tuple):
            if len(value) != 2 or not all(
                isinstance(side, int) and not isinstance(side, bool) for side in value
            ):
                raise ValueError(f"{value!r} is not [width, height] in whole pixels")
            width, height = value
            if not (MIN_SIDE <= width <= MAX_WIDTH and MIN_SIDE <= height <= MAX_HEIGHT):
                raise ValueError(
                    f"{width}x{height} is not a screen size this server starts: width from "
                    f"{MIN_SIDE} to {MAX_WIDTH}, height from {MIN_SIDE} to {MAX_HEIGHT}"
                )
            return (width, height)
        return value

    @field_validator("target", mode="before")
    @classmethod
    def _target(cls, value: Any) -> Any:
        if isinstance(value, str):
            for name in TARGET_NAMES:
                if value.strip().lower() == name.lower():
                    return name
            raise ValueError(
                f"{value!r} is not a scaling target; use auto, XGA (1024x768), WXGA "
                "(1280x800), FWXGA (1366x768), [width, height], or null for none"
            )
        if isinstance(value, list):
            return tuple(value)
        return value

    def over(self, base: DesktopTask) -> DesktopTask:
        """This task with what it leaves out taken from ``base`` (the server's task)."""
        given = self.model_fields_set
        values = {
            name: getattr(self if name in given else base, name) for name in type(self).model_fields
        }
        return type(self).model_construct(_fields_set=set(values), **values)


def check_apps(apps: list[list[str]], allowed: list[list[str]], allow_any: bool) -> None:
    """Raise :class:`TaskRejectedError` naming the first app not among ``allowed``.

    Apps run as the server's user, not in a session's sandbox, so a client may start
    only the apps the operator gave (``--app``), unless the operator allows any.
    """
    if allow_any:
        return
    for index, app in enumerate(apps):
        if app not in allowed:
            listed = "; ".join(" ".join(command) for command in allowed) or "none"
            raise TaskRejectedError(
                f"apps.{index}: {app!r} is not one of this server's apps ({listed}); its "
                "operator can add it with --app, or let clients start any program with "
                "--allow-any-app"
            )
