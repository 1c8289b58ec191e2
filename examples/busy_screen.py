"""A busy screen: a window over the whole display showing a photo-like picture (smooth
colour fields under fine grain noise, the hardest case for PNG), with a blue marker
rectangle at (100, 100)-(300, 200) in screen pixels. The MCP tests and
``benchmarks/mcp.py`` start it on a 1920x1080 desktop to see what clients get of real
screens, not of flat test cards.

    python examples/busy_screen.py          # fills the display it runs on, until closed
    python examples/busy_screen.py --tick   # and changes a corner 10 times a second

``--tick`` keeps the screen changing (as a clock or a video would), so a tool that
serves an unchanged screen from a cache does the full work of a new frame each time.
"""

from __future__ import annotations

import io
import random
import sys
import tkinter as tk

from PIL import Image, ImageDraw, ImageFilter

#: The marker, in screen pixels: x0, y0, x1, y1, and its colour.
MARKER = (100, 100, 300, 200)
MARKER_RGB = (0, 0, 255)


def picture(width: int, height: int, seed: int = 7) -> Image.Image:
    """Colour fields blurred into each other, with grain on top, and the marker."""
    rng = random.Random(seed)
    fields = Image.new("RGB", (width // 16 + 1, height // 16 + 1))
    fields.putdata(
        [tuple(rng.randrange(256) for _ in range(3)) for _ in range(fields.width * fields.height)]
    )
    smooth = fields.resize((width, height), Image.Resampling.BICUBIC).filter(
        ImageFilter.GaussianBlur(3)
    )
    grain = Image.effect_noise((width, height), 40).convert("RGB")
    image = Image.blend(smooth, grain, 0.25)
    ImageDraw.Draw(image).rectangle(
        (MARKER[0], MARKER[1], MARKER[2] - 1, MARKER[3] - 1), fill=MARKER_RGB
    )
    return image


def main() -> None:
    root = tk.Tk()
    width, height = root.winfo_screenwidth(), root.winfo_screenheight()
    root.overrideredirect(True)
    root.geometry(f"{width}x{height}+0+0")
    buffer = io.BytesIO()
    picture(width, height).save(buffer, format="PPM")
    photo = tk.PhotoImage(data=buffer.getvalue(), format="PPM")
    tk.Label(root, image=photo, borderwidth=0).place(x=0, y=0)
    if "--tick" in sys.argv[1:]:
        corner = tk.Frame(root, width=32, height=32)
        corner.place(x=width - 32, y=height - 32)
        colours = ["#ff0000", "#00ff00"]

        def tick(step: int = 0) -> None:
            corner.configure(bg=colours[step % 2])
            root.after(100, tick, step + 1)

        tick()
    root.mainloop()


if __name__ == "__main__":
    main()
