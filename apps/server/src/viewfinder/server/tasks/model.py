"""The task format: one task or a suite of them, in JSON or TOML (docs/tasks.md).

A file is refused before anything starts, in one line naming the field that is wrong
(:class:`TaskFileError`): ``tasks.2.check.all.0.element.rolee: extra inputs are not
permitted``. :func:`task_schema` is the published JSON schema
(``viewfinder tasks schema``).
"""

from __future__ import annotations

import base64
import json
import tomllib
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    Tag,
    ValidationError,
    field_validator,
)

from viewfinder.core.errors import ViewfinderError

#: Most steps one episode may take.
MAX_STEPS = 1000


class TaskFileError(ViewfinderError, ValueError):
    """A task file that cannot be used: unreadable, or a field that is wrong (named)."""


def relative_path(value: str) -> str:
    """A path inside the episode's folder: relative, without ``..``."""
    path = PurePosixPath(value)
    if not value or path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{value!r} must be a path inside the episode's folder (relative, no ..)")
    return value


Relative = Annotated[StrictStr, Field(min_length=1, max_length=1024)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ElementCheck(_Strict):
    """An element on the screen with this role, name, value and states (all given must
    match; ``name``/``value`` exactly, ``value_contains`` as a part)."""

    role: StrictStr | None = None
    name: StrictStr | None = None
    value: StrictStr | None = None
    value_contains: StrictStr | None = None
    states: list[StrictStr] = Field(default_factory=list)


class WindowCheck(_Strict):
    """A window on the screen whose title is ``title``, or contains ``title_contains``."""

    title: StrictStr | None = None
    title_contains: StrictStr | None = None


class FileCheck(_Strict):
    """A file of the episode's folder: it exists (or not, ``exists: false``), and its text
    ``equals``, ``contains`` or ``matches`` (a regular expression)."""

    path: Relative
    exists: StrictBool = True
    equals: StrictStr | None = None
    contains: StrictStr | None = None
    matches: StrictStr | None = None

    _path = field_validator("path")(classmethod(lambda cls, value: relative_path(value)))


class LogCheck(_Strict):
    """A line of an app's log (a file of the episode's folder the app writes) that is
    ``line``, contains ``contains`` or matches ``matches``."""

    path: Relative
    line: StrictStr | None = None
    contains: StrictStr | None = None
    matches: StrictStr | None = None

    _path = field_validator("path")(classmethod(lambda cls, value: relative_path(value)))


class ScreenCheck(_Strict):
    """The screen's ``region`` ``[x, y, width, height]`` looks like ``picture`` (a PNG
    path beside the task file, or ``data:image/png;base64,...``) within ``max_distance``
    bits of perceptual hash."""

    region: tuple[StrictInt, StrictInt, StrictInt, StrictInt]
    picture: StrictStr
    max_distance: StrictInt = Field(default=6, ge=0, le=64)


class OutputCheck(_Strict):
    """What the last run of a code task printed: its ``stream`` (``stdout`` or
    ``stderr``) ``equals``, ``contains`` or ``matches`` (a regular expression), and its
    ``exit_code``."""

    stream: Literal["stdout", "stderr"] = "stdout"
    equals: StrictStr | None = None
    contains: StrictStr | None = None
    matches: StrictStr | None = None
    exit_code: StrictInt | None = None


class AllCheck(_Strict):
    all: list[Check] = Field(min_length=1)


class AnyCheck(_Strict):
    any: list[Check] = Field(min_length=1)


class NotCheck(_Strict):
    not_: Check = Field(alias="not")


class ElementPredicate(_Strict):
    element: ElementCheck


class WindowPredicate(_Strict):
    window: WindowCheck


class FilePredicate(_Strict):
    file: FileCheck


class LogPredicate(_Strict):
    log: LogCheck


class ScreenPredicate(_Strict):
    screen: ScreenCheck


class OutputPredicate(_Strict):
    output: OutputCheck


class PythonCheck(_Strict):
    """``"package.module:function"``, called with the episode's view
    (:class:`~viewfinder.server.tasks.checks.TaskView`); returns a bool, a score from
    0 to 1, or ``(score, reason)``."""

    python: Annotated[StrictStr, Field(pattern=r"^[\w.]+:[\w.]+$")]


KINDS = ("all", "any", "not", "element", "window", "file", "log", "screen", "output", "python")


def _kind(value: Any) -> str | None:
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True)
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        return key if key in KINDS else None
    return None


Check = Annotated[
    Annotated[AllCheck, Tag("all")]
    | Annotated[AnyCheck, Tag("any")]
    | Annotated[NotCheck, Tag("not")]
    | Annotated[ElementPredicate, Tag("element")]
    | Annotated[WindowPredicate, Tag("window")]
    | Annotated[FilePredicate, Tag("file")]
    | Annotated[LogPredicate, Tag("log")]
    | Annotated[ScreenPredicate, Tag("screen")]
    | Annotated[OutputPredicate, Tag("output")]
    | Annotated[PythonCheck, Tag("python")],
    Discriminator(
        _kind,
        custom_error_type="check",
        custom_error_message=f"a check is an object with one key: {', '.join(KINDS)}",
    ),
]
for _model in (AllCheck, AnyCheck, NotCheck):
    _model.model_rebuild()


class Task(_Strict):
    """One task: where it runs, what the agent is told, and how it is scored."""

    id: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][\w.-]{0,99}$")]
    #: ``desktop`` (apps on a screen, tool calls) or ``code`` (Python on a display: its
    #: files go to the run's home, ``output`` and ``screen`` read its runs).
    env: StrictStr = "desktop"
    instruction: Annotated[StrictStr, Field(min_length=1, max_length=10_000)]
    apps: list[list[StrictStr]] = Field(default_factory=list, max_length=8)
    size: tuple[StrictInt, StrictInt] | None = None
    elements: StrictBool | None = None
    files: dict[Relative, StrictStr] = Field(default_factory=dict)
    max_steps: StrictInt = Field(default=20, ge=1, le=MAX_STEPS)
    check: Check
    fail: Check | None = None
    partial: StrictBool = False
    solution: list[dict[str, Any]] | None = None

    @field_validator("files")
    @classmethod
    def _files(cls, value: dict[str, str]) -> dict[str, str]:
        for path in value:
            relative_path(path)
        return value

    def reads_elements(self) -> bool:
        """Whether the checker looks at elements (the desktop then publishes them)."""
        return '"element"' in json.dumps(self.model_dump(mode="json", by_alias=True)["check"])


class Suite(_Strict):
    """A named list of tasks (a file with ``tasks``), or one task's file as a suite."""

    name: StrictStr = "suite"
    description: StrictStr = ""
    tasks: list[Task] = Field(min_length=1)


class _Schema(BaseModel):
    file: Suite | Task


def task_schema() -> dict[str, Any]:
    """The published JSON schema of a task file (one task, or a suite)."""
    schema = _Schema.model_json_schema(by_alias=True)
    schema["$defs"]["TaskFile"] = schema["properties"]["file"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "viewfinder task file",
        **{key: value for key, value in schema.items() if key != "properties" and key != "type"},
        "anyOf": schema["properties"]["file"]["anyOf"],
    }


def parse_tasks(data: Any, where: str = "the task file") -> Suite:
    """A suite from parsed JSON/TOML data; :class:`TaskFileError` naming the field."""
    model: type[BaseModel] = Suite if isinstance(data, dict) and "tasks" in data else Task
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = list(error["loc"])
        # a check's tag comes before its field of the same name: name it once
        loc = [
            part for i, part in enumerate(loc) if not (part in KINDS and loc[i + 1 :][:1] == [part])
        ]
        field = ".".join(str(part) for part in loc) or "(the file)"
        message = str(error["msg"]).removeprefix("Value error, ")
        more = len(exc.errors()) - 1
        also = f" (and {more} more)" if more else ""
        raise TaskFileError(f"{where}: {field}: {message}{also}") from None
    if isinstance(parsed, Task):
        return Suite(name=parsed.id, tasks=[parsed])
    assert isinstance(parsed, Suite)
    ids = [task.id for task in parsed.tasks]
    for index, task_id in enumerate(ids):
        if ids.index(task_id) != index:
            raise TaskFileError(f"{where}: tasks.{index}.id: {task_id!r} is given twice")
    return parsed


def load_tasks(path: str | Path) -> Suite:
    """The suite in ``path`` (``.json`` or ``.toml``): ``{task_dir}`` in app words is the
    file's folder, and screen pictures are read now, so the suite travels as data."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TaskFileError(f"cannot read tasks from {path}: {exc}") from None
    folder = str(path.resolve().parent)
    data = _resolve(data, folder, path)
    return parse_tasks(data, str(path))


def _resolve(value: Any, folder: str, path: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{task_dir}", folder)
    if isinstance(value, list):
        return [_resolve(item, folder, path) for item in value]
    if isinstance(value, dict):
        resolved = {key: _resolve(item, folder, path) for key, item in value.items()}
        picture = resolved.get("picture")
        if "region" in resolved and isinstance(picture, str) and not picture.startswith("data:"):
            try:
                raw = (Path(folder) / picture).read_bytes()
            except OSError as exc:
                raise TaskFileError(f"{path}: picture {picture!r} cannot be read: {exc}") from None
            resolved["picture"] = "data:image/png;base64," + base64.b64encode(raw).decode()
        return resolved
    return value


Kind = Literal[
    "all", "any", "not", "element", "window", "file", "log", "screen", "output", "python"
]
