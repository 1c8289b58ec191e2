"""Why a step did not match: the stored region, the live one, their difference, the distance.

Written on a mismatch when replay is given a report folder: ``step-N.png`` (the three
pictures side by side, with the distance) and ``step-N.html`` (the same with the hashes
and settings). The stored picture exists when the file was built with debug thumbnails.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw

from viewfinder.cache.checks import StepCheck
from viewfinder.cache.thumbnails import DEFAULT_THUMBNAIL_SIZE, region_thumbnail

#: Side of each panel in the side-by-side picture.
PANEL = 192
_LABEL_HEIGHT = 18
_FOOTER_HEIGHT = 22
_GAP = 8
_BACKGROUND = (255, 255, 255)
_INK = (20, 20, 20)


@dataclass(frozen=True)
class MismatchReport:
    """The files of one mismatch report."""

    html: Path
    image: Path


def difference(stored: Image.Image, live: Image.Image) -> Image.Image:
    """Where two thumbnails differ, brightened so small changes show (black: identical)."""
    live = live.resize(stored.size, Image.Resampling.LANCZOS) if live.size != stored.size else live
    diff = ImageChops.difference(stored.convert("RGB"), live.convert("RGB"))
    return diff.point(lambda value: min(255, value * 4))


def _panel(image: Image.Image | None, note: str) -> Image.Image:
    panel = Image.new("RGB", (PANEL, PANEL), (235, 235, 235))
    if image is None:
        ImageDraw.Draw(panel).text((8, PANEL // 2 - 6), note, fill=_INK)
        return panel
    scale = min(PANEL / image.width, PANEL / image.height)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    # nearest neighbour: a thumbnail's pixels stay visible as blocks, not blurred
    shown = image.convert("RGB").resize(size, Image.Resampling.NEAREST)
    panel.paste(shown, ((PANEL - size[0]) // 2, (PANEL - size[1]) // 2))
    return panel


def side_by_side(stored: Image.Image | None, live: Image.Image, check: StepCheck) -> Image.Image:
    """Stored | live | difference, labelled, with the distance underneath."""
    diff = difference(stored, live) if stored is not None else None
    panels = [
        ("stored (recording)", _panel(stored, "no thumbnail stored")),
        ("live (now)", _panel(live, "")),
        ("difference x4", _panel(diff, "needs a stored thumbnail")),
    ]
    width = len(panels) * PANEL + (len(panels) + 1) * _GAP
    height = _LABEL_HEIGHT + PANEL + _FOOTER_HEIGHT + 2 * _GAP
    sheet = Image.new("RGB", (width, height), _BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    for number, (label, panel) in enumerate(panels):
        left = _GAP + number * (PANEL + _GAP)
        draw.text((left, _GAP), label, fill=_INK)
        sheet.paste(panel, (left, _GAP + _LABEL_HEIGHT))
    verdict = "match" if check.passed else "MISMATCH"
    draw.text(
        (_GAP, _GAP + _LABEL_HEIGHT + PANEL + 6),
        f"step {check.index} {check.action}: distance {check.distance} "
        f"(threshold {check.threshold}) {verdict}",
        fill=(180, 0, 0) if not check.passed else (0, 120, 0),
    )
    return sheet


def _data_url(image: Image.Image) -> str:
    out = io.BytesIO()
    image.save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def write_mismatch_report(
    folder: str | Path,
    check: StepCheck,
    live_region: Image.Image,
    stored: Image.Image | None,
    *,
    method: str,
    thumbnail_size: int = DEFAULT_THUMBNAIL_SIZE,
) -> MismatchReport:
    """Write ``step-N.png`` and ``step-N.html`` into ``folder``; return their paths.

    ``live_region`` is the captured region (full size); it is shrunk like the stored
    thumbnail (to ``thumbnail_size``, or to the stored thumbnail's size) to compare.
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    size = max(stored.size) if stored is not None else thumbnail_size
    live = region_thumbnail(live_region, None, size)
    sheet = side_by_side(stored, live, check)
    image_path = target / f"step-{check.index}.png"
    sheet.save(image_path, "PNG")
    region = (
        f"x={check.region.x} y={check.region.y} {check.region.width}x{check.region.height}"
        if check.region is not None
        else "the whole screen"
    )
    rows = [
        ("step", str(check.index)),
        ("action", check.action),
        ("region", region),
        ("method", method),
        ("stored hash", check.stored_hash),
        ("live hash", check.live_hash),
        ("distance", f"{check.distance} bits"),
        ("threshold", f"{check.threshold} bits"),
        ("result", "match" if check.passed else "mismatch: replay stopped before this step"),
    ]
    table = "\n".join(
        f"<tr><th>{html.escape(name)}</th><td><code>{html.escape(value)}</code></td></tr>"
        for name, value in rows
    )
    pictures = [("stored (recording)", stored), ("live (now)", live)]
    if stored is not None:
        pictures.append(("difference x4", difference(stored, live)))
    figures = "\n".join(
        f'<figure><img src="{_data_url(picture)}" width="{PANEL}" '
        f'style="image-rendering: pixelated"><figcaption>{html.escape(name)}</figcaption></figure>'
        for name, picture in pictures
        if picture is not None
    )
    if stored is None:
        figures += (
            "<p>No stored thumbnail: the cache was built with <code>--no-thumbnails</code>; "
            "build it without that option to see the region as it was recorded.</p>"
        )
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>viewfinder cache: step {check.index}</title>
<style>body{{font-family:sans-serif;margin:2em}} th{{text-align:left;padding-right:1em}}
figure{{display:inline-block;margin:0 1em 1em 0}}</style></head>
<body><h1>Step {check.index}: distance {check.distance} (threshold {check.threshold})</h1>
<table>{table}</table>
<div>{figures}</div>
<p><img src="{image_path.name}" alt="side by side"></p>
</body></html>
"""
    html_path = target / f"step-{check.index}.html"
    html_path.write_text(page, encoding="utf-8")
    return MismatchReport(html=html_path, image=image_path)
