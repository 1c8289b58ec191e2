"""Finding a stored region again on the screen: normalised cross-correlation.

A healing replay searches a window around a step's old point for the region it stored
(``visual_thumbnail``). The score of a place is the Pearson correlation of the template
with the window's pixels there (grey levels, -1..1): 1 where they are the same picture
up to brightness and contrast. The numerator is one FFT product (scipy.fft), the
window's local sums come from integral images: a 601x601 window (the +-300 px a
replay searches) costs about 30 ms for a 100 px region on a loaded two-core machine.

A match is **confident** only when its peak is high, clearly above the best place
elsewhere (a look-alike in the window makes it ambiguous), and the place shows the
recorded pixels: a pixel differs when a channel is off by more than
:data:`PIXEL_TOLERANCE`, and no :data:`WINDOW` x :data:`WINDOW` square of the region may
hold more than :data:`MAX_WINDOW_DIFFERING` differing pixels. Correlation alone cannot
tell a changed character: a label is a few per cent of a region. Measured on a Tk
button (tests/pay_form.py: DejaVu Sans 13 px, white on blue, 96x32) in its 100 px
region, the button shown 120 px lower (pixels off by more than 24; the biggest
8-connected clusters; the most in one 8x8 square):

=============================  =======  =========  ===============  =======
the button 120 px lower         score    differ     clusters         densest
=============================  =======  =========  ===============  =======
the same, same background       1.0000   0          none             0
one glyph: 'Pay $18'            0.9979   34         28, 3, 3         32
one glyph: 'Pay $16'            0.9980   29         24, 5            28
relabelled 'Buy $10'            0.9923   82         51, 31           47
relabelled 'Open'               0.9622   285        210, 41, 34      48
recoloured (red)                1.0000   3002       3002             64
a darker blue (32 per channel)  1.0000   2888       2851, 22, 7      64
right half covered by a panel   0.8512   2200       2200             64
=============================  =======  =========  ===============  =======

Under the 0.5 % share of before (50 pixels off by more than 40) 'Pay $18', at 21, was
clicked, and so was the darker blue (no pixel off by more than 40). Across every pair
of 'Pay $1X' (X a digit or one of ``lIO.,ijceoas``) at 12, 13 and 14 px the least a
one-character change made was 3 differing pixels in one square ('.' against ',' at 12
px; 'l' against 'i': 4; digits: 23 or more); at a tolerance of 40 it was 2 ('l'
against 'I').

A region searched for at a smaller scale (a thumbnail stored smaller than its region,
matched on a window shrunk alike) cannot tell them apart: the resampling blurs a glyph
and puts every edge off by a fraction of a pixel. At 64 px the same button moved
differed in 234 pixels (19 in one square), 'Pay $18' in 235 (21). A shrunk search is
never confident (``scale``); thumbnails are stored at their region's size by default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

#: Lowest peak score a confident match has.
MIN_TEMPLATE_SCORE = 0.9
#: How far the peak must stand above the best place outside its neighbourhood.
MIN_TEMPLATE_MARGIN = 0.15
#: Largest share of the region's pixels that may differ at the match (by more than
#: :data:`PIXEL_TOLERANCE` in a channel): a button that only moved is the same pixels.
MAX_DIFFERING_SHARE = 0.005
#: How far a channel may be off before a pixel counts as different. A region that moved
#: on the same background is identical; 24 still counts the faint antialiased pixels
#: a changed glyph makes ('l' against 'I' at 13 px: 9 pixels in a square, at 40 only 2).
PIXEL_TOLERANCE = 24
#: Side of the squares the differing pixels are counted in: about a glyph at 12-14 px.
WINDOW = 8
#: Most differing pixels any :data:`WINDOW` square may hold: a stray pixel, never the
#: 3 or more the smallest one-character change made (module docstring).
MAX_WINDOW_DIFFERING = 1
#: Templates whose grey levels vary less than this (standard deviation, of 255) are
#: flat: every flat place of the screen matches them equally.
MIN_TEMPLATE_CONTRAST = 2.0


@dataclass(frozen=True)
class TemplateMatch:
    """The best place of a template in an image, and how sure that is."""

    #: top-left corner of the best place, in the searched image's pixels
    x: int
    y: int
    score: float
    #: the best score outside the peak's neighbourhood (half a template each way)
    runner_up: float
    #: share of the template's pixels that differ from the image's at the peak
    differing: float = 0.0
    #: the most differing pixels in any :data:`WINDOW` square of the template's place
    densest: int = 0
    #: the factor the image and template were shrunk by before the search
    scale: float = 1.0

    @property
    def confident(self) -> bool:
        """A high peak, clearly above any other place, showing the same pixels at the
        recorded scale (:data:`MIN_TEMPLATE_SCORE`, :data:`MIN_TEMPLATE_MARGIN`,
        :data:`MAX_DIFFERING_SHARE`, :data:`MAX_WINDOW_DIFFERING`)."""
        return (
            self.scale == 1
            and self.score >= MIN_TEMPLATE_SCORE
            and self.score - self.runner_up >= MIN_TEMPLATE_MARGIN
            and self.differing <= MAX_DIFFERING_SHARE
            and self.densest <= MAX_WINDOW_DIFFERING
        )


def grey(image: Image.Image) -> np.ndarray:
    """The image's grey levels (ITU-R 601 luma, as Pillow's ``L``) as float64."""
    return np.asarray(image.convert("L"), dtype=np.float64)


def correlation_map(image: np.ndarray, template: np.ndarray) -> np.ndarray:
    """The normalised cross-correlation of ``template`` at every place it fits in
    ``image`` (shape ``(H - h + 1, W - w + 1)``); 0 where the image is flat."""
    h, w = template.shape
    centred = template - template.mean()
    norm = float(np.sqrt((centred * centred).sum()))
    numerator = _correlate(image, centred)
    sums = _window_sums(image, h, w)
    squares = _window_sums(image * image, h, w)
    variance = np.maximum(squares - sums * sums / (h * w), 0.0)
    denominator = np.sqrt(variance) * norm
    scores = np.zeros_like(numerator)
    # below one grey level of spread over the window, the image there is flat
    flat = denominator <= norm * np.sqrt(h * w) * 1.0
    np.divide(numerator, denominator, out=scores, where=~flat)
    return np.clip(scores, -1.0, 1.0)


def _correlate(image: np.ndarray, template: np.ndarray) -> np.ndarray:
    """``sum(image[y + i, x + j] * template[i, j])`` at every place the template fits,
    as one FFT product (scipy.fft, which the hashes load anyway: scipy.signal would
    cost seconds to import)."""
    from scipy import fft

    h, w = template.shape
    height, width = image.shape
    shape = (fft.next_fast_len(height + h - 1, True), fft.next_fast_len(width + w - 1, True))
    product = fft.rfft2(image, shape) * fft.rfft2(template[::-1, ::-1], shape)
    full = fft.irfft2(product, shape)
    return full[h - 1 : height, w - 1 : width]


def _window_sums(values: np.ndarray, h: int, w: int) -> np.ndarray:
    table = np.zeros((values.shape[0] + 1, values.shape[1] + 1))
    table[1:, 1:] = values.cumsum(axis=0).cumsum(axis=1)
    return table[h:, w:] - table[:-h, w:] - table[h:, :-w] + table[:-h, :-w]


def find_template(
    image: Image.Image, template: Image.Image, *, scale: float = 1.0
) -> TemplateMatch | None:
    """Where ``template`` best fits in ``image``; None when it cannot be searched for (it
    is flat, or larger than the image).

    ``scale`` is the factor both were shrunk by (a thumbnail stored smaller than its
    region, searched for on a window shrunk alike): such a match is never confident.
    """
    if template.width > image.width or template.height > image.height:
        return None
    pattern = grey(template)
    if float(pattern.std()) < MIN_TEMPLATE_CONTRAST:
        return None
    scores = correlation_map(grey(image), pattern)
    y, x = np.unravel_index(int(np.argmax(scores)), scores.shape)
    score = float(scores[y, x])
    # the peak's own neighbourhood (a template shifted by less than half its size still
    # overlaps itself) is not a second place
    reach_y, reach_x = max(template.height // 2, 1), max(template.width // 2, 1)
    elsewhere = scores.copy()
    elsewhere[max(y - reach_y + 1, 0) : y + reach_y, max(x - reach_x + 1, 0) : x + reach_x] = -1.0
    off = differing_pixels(image, template, int(x), int(y))
    return TemplateMatch(
        x=int(x),
        y=int(y),
        score=score,
        runner_up=float(elsewhere.max()),
        differing=float(off.mean()),
        densest=densest(off),
        scale=scale,
    )


def differing_pixels(image: Image.Image, template: Image.Image, x: int, y: int) -> np.ndarray:
    """Which of ``template``'s pixels differ (by more than :data:`PIXEL_TOLERANCE` in a
    channel) from ``image``'s with its corner at (x, y), as a boolean array."""
    patch = np.asarray(
        image.convert("RGB").crop((x, y, x + template.width, y + template.height)), np.int16
    )
    pattern = np.asarray(template.convert("RGB"), np.int16)
    return np.asarray(np.abs(patch - pattern).max(axis=2) > PIXEL_TOLERANCE)


def differing_share(image: Image.Image, template: Image.Image, x: int, y: int) -> float:
    """The share of ``template``'s pixels that differ from ``image``'s with its corner
    at (x, y) (:func:`differing_pixels`)."""
    return float(differing_pixels(image, template, x, y).mean())


def densest(off: np.ndarray) -> int:
    """The most ``True`` pixels of ``off`` in any :data:`WINDOW` square (smaller where
    ``off`` is): a changed glyph is a compact cluster, a moved region none at all."""
    h, w = min(WINDOW, off.shape[0]), min(WINDOW, off.shape[1])
    if h == 0 or w == 0:
        return 0
    return round(float(_window_sums(off.astype(np.float64), h, w).max()))
