"""The checker: built-in predicates over what viewfinder can see, combined with
all/any/not, or a Python function (``module:function``).

Checks run where the session's env runs (the server's process, a Ray actor), never in
the session's sandbox, and read the episode only through :class:`TaskView`: the
elements on its screen (viewfinder's element sources), its windows' titles, its
screen's pixels, and the files of the episode's folder.
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewfinder.core.errors import ViewfinderError
from viewfinder.core.providers import import_path
from viewfinder.server.tasks import model


class CheckerError(ViewfinderError):
    """A Python checker could not be imported, or returned something that is not a score."""


@dataclass(frozen=True)
class Outcome:
    """A check's score (0 to 1) and why, in a line."""

    score: float
    reason: str

    @property
    def passed(self) -> bool:
        return self.score >= 1.0


@dataclass
class TaskView:
    """What a checker may read of an episode: its folder, its screen, its elements."""

    #: The episode's folder (the task's files, what its apps write).
    folder: Path
    #: The X display the episode's apps are on (``":5"``).
    display_name: str
    #: The episode's desktop (:class:`viewfinder.desktop.Desktop`), for screenshots.
    desktop: Any = None
    #: A code task's last run: ``stdout``, ``stderr``, ``exit_code`` and its last capture
    #: (``screenshot``, base64 PNG), or None before the first run (and on a desktop).
    run: dict[str, Any] | None = None
    _tree: Any = field(default=None, repr=False)

    def path(self, relative: str) -> Path:
        """A file of the episode's folder (``..`` and absolute paths are refused)."""
        return self.folder / model.relative_path(relative)

    def text(self, relative: str) -> str | None:
        """A file's text, or None when it does not exist (or is a link out of the folder:
        what the episode's code wrote is read as the server's user)."""
        path = self.path(relative)
        try:
            if not path.resolve().is_relative_to(self.folder.resolve()):
                return None
            return path.read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def elements(self) -> list[Any]:
        """Every element on the screen now (read once per check)."""
        if self._tree is None:
            from viewfinder.core import elements

            try:
                self._tree = list(elements("atspi", display=self.display_name).walk())
            except ViewfinderError:
                self._tree = []
        return list(self._tree)

    def window_titles(self) -> list[str]:
        """The titles of the screen's windows (their clients, below any frame)."""
        from Xlib import X
        from Xlib.display import Display

        conn = Display(self.display_name)
        titles: list[str] = []
        try:
            pending = [(conn.screen().root, 0)]
            while pending and len(titles) < 500:
                window, depth = pending.pop()
                try:
                    name = window.get_full_text_property(conn.intern_atom("_NET_WM_NAME"))
                    name = name or window.get_wm_name()
                    if name and depth > 0:
                        attributes = window.get_attributes()
                        if attributes.map_state == X.IsViewable:
                            titles.append(str(name))
                    if depth < 3:
                        pending.extend((child, depth + 1) for child in window.query_tree().children)
                except Exception:  # a window closed while being read
                    continue
        finally:
            conn.close()
        return titles

    def screenshot(self, region: tuple[int, int, int, int]) -> Any:
        """The screen's ``region`` as a PIL image (a code task's: of its last run's last
        capture, None when it captured nothing)."""
        from viewfinder.core import Region

        x, y, width, height = region
        if self.desktop is None:  # a code task: its last run's last capture
            from PIL import Image

            shot = (self.run or {}).get("screenshot")
            if not shot:
                return None
            image = Image.open(io.BytesIO(base64.b64decode(shot)))
            return image.crop((x, y, x + width, y + height))
        shot = self.desktop.screenshot(Region(x=x, y=y, width=width, height=height))
        return shot.to_pil()


def evaluate(check: Any, view: TaskView, *, partial: bool = False) -> Outcome:
    """Score ``check`` on ``view``; with ``partial``, an ``all`` scores the share of its
    parts met (the task's partial credit)."""
    if isinstance(check, model.AllCheck):
        outcomes = [evaluate(part, view) for part in check.all]
        met = sum(outcome.passed for outcome in outcomes)
        failed = [outcome.reason for outcome in outcomes if not outcome.passed]
        score = met / len(outcomes) if partial else float(met == len(outcomes))
        return Outcome(
            score, f"{met} of {len(outcomes)} met" + (f"; {failed[0]}" if failed else "")
        )
    if isinstance(check, model.AnyCheck):
        outcomes = [evaluate(part, view) for part in check.any]
        best = max(outcomes, key=lambda outcome: outcome.score)
        return best if best.passed else Outcome(best.score, f"none met; {outcomes[0].reason}")
    if isinstance(check, model.NotCheck):
        inner = evaluate(check.not_, view)
        return Outcome(1.0 - inner.score, f"not ({inner.reason})")
    if isinstance(check, model.PythonCheck):
        return _python(check.python, view)
    readers: dict[str, Any] = _PREDICATES
    for kind, reader in readers.items():
        given = getattr(check, kind, None)
        if given is not None:
            passed, reason = reader(given, view)
            return Outcome(1.0 if passed else 0.0, reason)
    raise CheckerError(f"unknown check {check!r}")


def _element(check: model.ElementCheck, view: TaskView) -> tuple[bool, str]:
    wanted = check.model_dump(exclude_defaults=True)
    for element in view.elements():
        if check.role is not None and element.role != check.role:
            continue
        if check.name is not None and element.name != check.name:
            continue
        if check.value is not None and (element.value or "") != check.value:
            continue
        if check.value_contains is not None and check.value_contains not in (element.value or ""):
            continue
        if not set(check.states) <= set(element.states):
            continue
        return True, f"element {wanted} is on the screen ({element.ref})"
    return False, f"no element {wanted} on the screen"


def _window(check: model.WindowCheck, view: TaskView) -> tuple[bool, str]:
    for title in view.window_titles():
        if check.title is not None and title != check.title:
            continue
        if check.title_contains is not None and check.title_contains not in title:
            continue
        return True, f"window {title!r} is on the screen"
    return False, f"no window titled {check.title or check.title_contains!r}"


def _file(check: model.FileCheck, view: TaskView) -> tuple[bool, str]:
    text = view.text(check.path)
    if text is None:
        return (not check.exists), f"{check.path} does not exist"
    if not check.exists:
        return False, f"{check.path} exists"
    if check.equals is not None and text != check.equals:
        return False, f"{check.path} is {text[:60]!r}, not {check.equals[:60]!r}"
    if check.contains is not None and check.contains not in text:
        return False, f"{check.path} does not contain {check.contains!r}"
    if check.matches is not None and re.search(check.matches, text, re.MULTILINE) is None:
        return False, f"{check.path} does not match {check.matches!r}"
    return True, f"{check.path} is as asked"


def _log(check: model.LogCheck, view: TaskView) -> tuple[bool, str]:
    lines = (view.text(check.path) or "").splitlines()
    for line in lines:
        if check.line is not None and line.strip() != check.line:
            continue
        if check.contains is not None and check.contains not in line:
            continue
        if check.matches is not None and re.search(check.matches, line) is None:
            continue
        return True, f"{check.path} logged {line.strip()!r}"
    wanted = check.line or check.contains or check.matches
    return False, f"{check.path} has no line {wanted!r} ({len(lines)} lines)"


def _screen(check: model.ScreenCheck, view: TaskView) -> tuple[bool, str]:
    from PIL import Image

    _, _, data = check.picture.partition("base64,")
    reference = Image.open(io.BytesIO(base64.b64decode(data)))
    seen = view.screenshot(check.region)
    if seen is None:
        return False, "the run captured no screenshot"
    distance = picture_distance(seen, reference)
    passed = distance <= check.max_distance
    return passed, f"region {list(check.region)} is {distance} bits from the picture"


def dhash(image: Any, side: int = 8) -> list[bool]:
    """A difference hash of ``image``: 64 bits, each whether a pixel of the image shrunk
    to 9x8 greys is brighter than its right neighbour (a few bits apart: looks alike)."""
    grey = image.convert("L").resize((side + 1, side))
    pixels = [int(value) for value in grey.tobytes()]
    return [
        pixels[row * (side + 1) + col] > pixels[row * (side + 1) + col + 1]
        for row in range(side)
        for col in range(side)
    ]


def colour_cells(image: Any, side: int = 8) -> list[tuple[int, ...]]:
    """The mean colour of each of ``side`` x ``side`` cells of ``image``."""
    raw = image.convert("RGB").resize((side, side)).tobytes()
    return [tuple(raw[i : i + 3]) for i in range(0, len(raw), 3)]


def picture_distance(seen: Any, reference: Any) -> int:
    """How far apart two pictures look: the bits their difference hashes differ in
    (shapes), plus the cells whose mean colour differs by more than 48 in a channel
    (colours: a hash of greys alone cannot tell a red swatch from a grey one)."""
    shapes = sum(a != b for a, b in zip(dhash(seen), dhash(reference), strict=True))
    colours = sum(
        max(abs(x - y) for x, y in zip(a, b, strict=True)) > 48
        for a, b in zip(colour_cells(seen), colour_cells(reference), strict=True)
    )
    return shapes + colours


def _output(check: model.OutputCheck, view: TaskView) -> tuple[bool, str]:
    if view.run is None:
        return False, "no code has run yet"
    text = str(view.run.get(check.stream) or "")
    code = view.run.get("exit_code")
    if check.exit_code is not None and code != check.exit_code:
        return False, f"the run exited with {code}, not {check.exit_code}"
    if check.equals is not None and text != check.equals:
        return False, f"{check.stream} is {text[:60]!r}, not {check.equals[:60]!r}"
    if check.contains is not None and check.contains not in text:
        return False, f"{check.stream} does not contain {check.contains!r}"
    if check.matches is not None and re.search(check.matches, text, re.MULTILINE) is None:
        return False, f"{check.stream} does not match {check.matches!r}"
    return True, f"{check.stream} is as asked"


def _python(path: str, view: TaskView) -> Outcome:
    try:
        function = import_path(path, "checker")
    except ImportError as exc:
        raise CheckerError(str(exc)) from None
    result = function(view)
    reason = f"{path} returned {result!r}"
    if isinstance(result, tuple) and len(result) == 2:
        result, reason = result
    if isinstance(result, bool | int | float) and 0 <= float(result) <= 1:
        return Outcome(float(result), str(reason))
    raise CheckerError(
        f"checker {path} returned {result!r}: give a bool, a score 0..1, or (score, reason)"
    )


_PREDICATES = {
    "element": _element,
    "window": _window,
    "file": _file,
    "log": _log,
    "screen": _screen,
    "output": _output,
}
