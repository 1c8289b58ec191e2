"""A matplotlib plot, captured while its window is on the display.

``plt.show()`` does not block in the code env: it shows the figure and returns, so the
code can capture it. The axes are filled with a solid colour to make the plot easy to
check in tests: the figure window is at (0, 0), 400x300 pixels (dpi 100).
"""

import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
fig.canvas.manager.set_window_title("viewfinder plot")
ax.set_facecolor("#ffd700")
ax.plot([0, 1, 2, 3, 4], [0, 1, 4, 9, 16], color="#0000ff", linewidth=3)
ax.set_title("squares")
plt.show()

png = capture_screenshot(window=fig)  # noqa: F821 - provided by the code env
print(f"backend {plt.get_backend()}, captured {len(png)} base64 characters")
