"""Healing a replay: finding a step's target again where the screen changed.

When a step's region no longer matches (after settling), a replay that may heal looks
for the step's target before it gives up, in this order (docs/cache.md, healing):

1. **By element**: the block names the element it acted on (``visual_element``: role,
   name, path) and an accessibility tree can be read on the display. Exactly one
   visible, enabled element with that role, name and path: act at its box, moved by
   the shift of its centre (the click keeps its place inside the element when it still
   fits). None, or several: not healed; when the tree holds the recorded application,
   it is the authority, and no picture search overrides it (a look-alike elsewhere
   must not be clicked).
2. **By template**: the block stores its region's pixels (``visual_thumbnail``) and
   named no element an agent acts on (a canvas-drawn button), or no tree covers its
   application. The region is searched for within +-300 px of the old point by
   normalised cross-correlation (:mod:`viewfinder.cache.matching`); a confident
   match (a high, unique peak showing the recorded pixels square by square, searched
   at full size: a shrunk thumbnail of an older file blurs a changed glyph away, so it
   never heals) whose region hashes within the threshold there (never looser than the
   default 10) is acted on.
3. Otherwise nothing is healed: the replay stops with ``NEEDS_AGENT``.

Whatever is found, the replay checks the new point before acting
(:mod:`viewfinder.cache.targets`): the window in front there must be the recorded
application's and the element under it the recorded one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from PIL import Image

from viewfinder.cache.checks import (
    DEFAULT_THRESHOLD,
    LiveScreen,
    StepCheck,
    VisualChecker,
    check_point,
)
from viewfinder.cache.matching import find_template
from viewfinder.cache.models import HealRecord, ToolUseBlock
from viewfinder.cache.thumbnails import decode_thumbnail
from viewfinder.core.element import INTERACTIVE_ROLES, Element, ElementAnchor, ElementTree
from viewfinder.core.errors import ViewfinderError
from viewfinder.core.geometry import Point, Region

if TYPE_CHECKING:
    from viewfinder.cache.targets import LiveTargets

log = logging.getLogger(__name__)

#: How far from the old point the stored region is searched for, each way, in pixels.
SEARCH_REACH = 300


@dataclass(frozen=True)
class Heal:
    """Where a step acts instead of its recorded point, found by ``method``."""

    method: Literal["element", "template"]
    old: Point
    new: Point
    #: the template match's peak score
    score: float | None = None
    #: the element found, as messages name it (``push button 'Save'``)
    element: str | None = None

    @property
    def shift(self) -> tuple[int, int]:
        return self.new.x - self.old.x, self.new.y - self.old.y

    def record(self, step_index: int) -> HealRecord:
        """The entry of the file's heal history (``metadata.heals``)."""
        return HealRecord.model_validate(
            {
                "timestamp": datetime.now(UTC),
                "step_index": step_index,
                "method": self.method,
                "from": [self.old.x, self.old.y],
                "to": [self.new.x, self.new.y],
                "shift": list(self.shift),
                "score": round(self.score, 4) if self.score is not None else None,
                "element": self.element,
            }
        )

    def describe(self) -> str:
        how = f"element {self.element}" if self.method == "element" else f"score {self.score:.3f}"
        dx, dy = self.shift
        return (
            f"healed by {self.method} ({how}): ({self.old.x}, {self.old.y}) -> "
            f"({self.new.x}, {self.new.y}), shift ({dx:+d}, {dy:+d})"
        )


def shifted(block: ToolUseBlock, dx: int, dy: int) -> ToolUseBlock:
    """``block`` acting ``(dx, dy)`` away: its coordinate, a drag's both points, and the
    point a typing step is checked at (``visual_point``)."""
    tool_input = dict(block.input)
    for key in ("coordinate", "start_coordinate"):
        value = tool_input.get(key)
        if isinstance(value, list | tuple) and len(value) == 2:
            tool_input[key] = [int(value[0]) + dx, int(value[1]) + dy]
    if "x" in tool_input and "y" in tool_input and "coordinate" not in tool_input:
        tool_input["x"], tool_input["y"] = int(tool_input["x"]) + dx, int(tool_input["y"]) + dy
    update: dict[str, Any] = {"input": tool_input}
    if block.visual_point is not None and len(block.visual_point) == 2:
        update["visual_point"] = [block.visual_point[0] + dx, block.visual_point[1] + dy]
    return block.model_copy(update=update)


def names_a_target(anchor: ElementAnchor) -> bool:
    """True when ``anchor`` is an element an agent acts on, or has a name: what a tree
    can find again. An unnamed canvas or panel is no target: its box holds anything."""
    return anchor.role in INTERACTIVE_ROLES or bool(anchor.name)


def is_enabled(element: Element) -> bool:
    """True unless the source says the element cannot be acted on now."""
    states = element.states
    if "disabled" in states:
        return False
    # AT-SPI marks an element that takes input "enabled" and "sensitive"; a greyed-out
    # one has neither
    if "showing" in states or "visible" in states:
        return "enabled" in states or "sensitive" in states
    return True


class Healer:
    """Finds the targets of one replay's mismatching steps; made once per replay.

    ``targets`` reads the display's accessibility tree (None, or a display without one:
    no element healing). Whatever is found, the replay checks the new point once more
    before acting there (:meth:`LiveTargets.refusal`).
    """

    def __init__(
        self, checker: VisualChecker, screen: LiveScreen, targets: LiveTargets | None
    ) -> None:
        self.checker = checker
        self.screen = screen
        self.targets = targets

    def find(self, index: int, block: ToolUseBlock, check: StepCheck) -> Heal | None:
        """Where step ``index`` (whose check failed) can act instead; None when no place
        is certain, or the search itself failed (a broken thumbnail, a capture error):
        a replay that cannot heal stops as it would without healing."""
        try:
            return self._find(index, block, check)
        except (ViewfinderError, ValueError, OSError) as exc:
            log.warning("heal: step %d cannot be healed: %s", index, exc)
            return None

    def _find(self, index: int, block: ToolUseBlock, check: StepCheck) -> Heal | None:
        point = check_point(block)
        if point is None or check.region is None:
            return None
        anchor = block.visual_element
        if anchor is not None and names_a_target(anchor):
            tree = self._tree()
            if tree is not None and _covers(tree, anchor):
                return self._by_element(index, anchor, point, tree)
        return self._by_template(index, block, point, check.region)

    def _by_element(
        self, index: int, anchor: ElementAnchor, point: Point, tree: ElementTree
    ) -> Heal | None:
        found = tree.locate(anchor)
        if len(found) != 1:
            log.info("heal: step %d: %d elements %s", index, len(found), anchor.describe())
            return None
        element = found[0]
        if not is_enabled(element) or element.box is None:
            log.info("heal: step %d: %s cannot be acted on now", index, anchor.describe())
            return None
        box = element.box
        new = box.center
        if anchor.box is not None:
            moved = Point(
                x=point.x + box.center.x - anchor.box.center.x,
                y=point.y + box.center.y - anchor.box.center.y,
            )
            if box.x <= moved.x < box.right and box.y <= moved.y < box.bottom:
                new = moved
        if not self._on_screen(new):
            return None
        return Heal("element", point, new, element=anchor.describe())

    def _by_template(
        self, index: int, block: ToolUseBlock, point: Point, region: Region
    ) -> Heal | None:
        if not block.visual_thumbnail:
            return None
        template = decode_thumbnail(block.visual_thumbnail, step=index)
        width, height = self.screen.size
        left, top = max(point.x - SEARCH_REACH, 0), max(point.y - SEARCH_REACH, 0)
        right = min(point.x + SEARCH_REACH + 1, width)
        bottom = min(point.y + SEARCH_REACH + 1, height)
        window = Region(x=left, y=top, width=right - left, height=bottom - top)
        live = self.screen.image(window, {"purpose": "cache-healing", "step": index})
        # a thumbnail smaller than its region (an older file's) is matched on a window
        # shrunk by the same factor
        scale = template.width / region.width
        if scale != 1:
            size = (max(round(live.width * scale), 1), max(round(live.height * scale), 1))
            live = live.resize(size, Image.Resampling.LANCZOS)
        match = find_template(live, template, scale=scale)
        if match is None or not match.confident:
            log.info("heal: step %d: no confident match (%s)", index, match)
            return None
        new = Point(
            x=window.x + round(match.x / scale) + point.x - region.x,
            y=window.y + round(match.y / scale) + point.y - region.y,
        )
        if not self._on_screen(new):
            return None
        moved = shifted(block, new.x - point.x, new.y - point.y)
        there, _ = self.checker.check(index, moved, self.screen)
        # a threshold loosened for this replay does not loosen what healing accepts
        if there.distance > min(there.threshold, DEFAULT_THRESHOLD) or not there.passed:
            log.info("heal: step %d: the match at %s does not hash alike", index, new)
            return None
        return Heal("template", point, new, score=match.score)

    def _on_screen(self, point: Point) -> bool:
        width, height = self.screen.size
        return 0 <= point.x < width and 0 <= point.y < height

    def _tree(self) -> ElementTree | None:
        return self.targets.tree() if self.targets is not None else None


def _covers(tree: ElementTree, anchor: ElementAnchor) -> bool:
    # The tree speaks for the recorded element only when it holds its application: an
    # app that exposes nothing (Tk) leaves the picture search to decide.
    if not anchor.path:
        return tree.count() > 0
    return any((root.role, root.name) == anchor.path[0] for root in tree.roots)
