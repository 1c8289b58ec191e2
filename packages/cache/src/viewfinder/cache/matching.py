"""Finding a stored region again on the screen: normalised cross-correlation.

A healing replay searches a window around a step's old point for the region it stored
(``visual_thumbnail``). The score of a place is the Pearson correlation of the template
with the window's pixels there (grey levels, -1..1): 1 where they are the same picture
up to brightness and contrast. The numerator is one FFT product (scipy.fft), the
window's local sums come from integral images: a 601x601 window (the +-300 px a
replay searches) costs about 30 ms for a 100 px region on a loaded two-core machine.
A match is **confident** only when its peak is high and clearly above
the best place elsewhere: a look-alike in the window makes it ambiguous.
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
#: :data:`PIXEL_TOLERANCE` in a channel): a button that only moved is the same pixels;
#: a look-alike with another label scores 0.96 by correlation but differs in its text.
MAX_DIFFERING_SHARE = 0.005
#: How far a channel may be off before a pixel counts as different (antialiasing).
PIXEL_TOLERANCE = 40
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

    @property
    def confident(self) -> bool:
        """A high peak, clearly above any other place, showing the same pixels
        (:data:`MIN_TEMPLATE_SCORE`, :data:`MIN_TEMPLATE_MARGIN`,
        :data:`MAX_DIFFERING_SHARE`)."""
        return (
            self.score >= MIN_TEMPLATE_SCORE
            and self.score - self.runner_up >= MIN_TEMPLATE_MARGIN
            and self.differing <= MAX_DIFFERING_SHARE
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


def find_template(image: Image.Image, template: Image.Image) -> TemplateMatch | None:
    """Where ``template`` best fits in ``image``; None when it cannot be searched for (it
    is flat, or larger than the image)."""
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
    return TemplateMatch(
        x=int(x),
        y=int(y),
        score=score,
        runner_up=float(elsewhere.max()),
        differing=differing_share(image, template, int(x), int(y)),
    )


def differing_share(image: Image.Image, template: Image.Image, x: int, y: int) -> float:
    """The share of ``template``'s pixels that differ (by more than
    :data:`PIXEL_TOLERANCE` in a channel) from ``image``'s with its corner at (x, y)."""
    patch = np.asarray(
        image.convert("RGB").crop((x, y, x + template.width, y + template.height)), np.int16
    )
    pattern = np.asarray(template.convert("RGB"), np.int16)
    off = np.abs(patch - pattern).max(axis=2) > PIXEL_TOLERANCE
    return float(off.mean())
