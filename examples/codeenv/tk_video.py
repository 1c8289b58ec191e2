"""Record a Tk animation to a video: start_recording() ... stop_recording().

A 320x240 window changes its background four times while a white square slides
across it; everything between the two calls is in the video. Run it with
``viewfinder exec examples/codeenv/tk_video.py --out out`` (the video is
out/video-001.mp4) or as a step of a code env (``observation.videos``). It prints one
JSON line: when each colour was shown (seconds since the epoch), how long the recording
ran, and what stop_recording() said of the file.
"""

import json
import time
import tkinter as tk

COLOURS = ["#ff0000", "#00c000", "#0000ff", "#ffff00"]
#: Seconds each colour stays on the screen.
PHASE_S = 0.6
#: The square's speed, in pixels a second.
SPEED = 200

root = tk.Tk()
root.geometry("320x240+0+0")
canvas = tk.Canvas(root, width=320, height=240, highlightthickness=0, bg="#808080")
canvas.pack()
square = canvas.create_rectangle(0, 90, 40, 130, fill="white", width=0)
root.update()

asked = time.time()
start_recording()  # noqa: F821 - provided by the code env
started = time.time()
phases = []
for colour in COLOURS:
    canvas.configure(bg=colour)
    canvas.coords(square, 0, 90, 40, 130)
    root.update()
    phases.append({"colour": colour, "at": time.time()})
    begun = time.monotonic()
    while (now := time.monotonic()) < begun + PHASE_S:
        # placed by the clock, not moved a step a frame: 200 px a second however often
        # a busy machine lets the loop run
        x = round(SPEED * (now - begun))
        canvas.coords(square, x, 90, x + 40, 130)
        root.update()
        time.sleep(0.02)
stopped = time.time()
video = stop_recording()  # noqa: F821
done = time.time()
print(
    json.dumps(
        {
            "phases": phases,
            "recorded_s": stopped - started,  # start_recording() returned .. stop called
            "outer_s": done - asked,  # start_recording() called .. stop returned
            "video": video,
        }
    )
)
