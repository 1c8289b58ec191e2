"""A pygame window, captured after the frame is flipped onto the display.

pygame draws to its window on ``pygame.display.flip()``, as on any screen; capture
after it. Magenta background, a cyan square at (40, 40)-(160, 160) in a 320x240 window;
the capture is of the window only.
"""

import pygame

pygame.init()
screen = pygame.display.set_mode((320, 240))
pygame.display.set_caption("viewfinder pygame")
screen.fill((255, 0, 255))
pygame.draw.rect(screen, (0, 255, 255), pygame.Rect(40, 40, 120, 120))
pygame.display.flip()

window = pygame.display.get_wm_info()["window"]  # the X window id
png = capture_screenshot(window=window)  # noqa: F821 - provided by the code env
print(f"captured {len(png)} base64 characters")
pygame.quit()
