"""A separate X client process with one window; the pool tests kill it through X.

``python x_client.py X Y W H`` maps an override-redirect window there, prints its id,
then waits for events until its connection is closed (which ends it).
"""

import sys

import Xlib.display
from Xlib import X

x, y, width, height = (int(arg) for arg in sys.argv[1:5])
conn = Xlib.display.Display()
screen = conn.screen()
window = screen.root.create_window(
    x,
    y,
    width,
    height,
    0,
    screen.root_depth,
    X.InputOutput,
    X.CopyFromParent,
    background_pixel=0x00FF00,
    override_redirect=True,
    event_mask=X.StructureNotifyMask,
)
window.map()
conn.sync()
print(window.id, flush=True)
while True:
    conn.next_event()  # raises when the server closes our connection
