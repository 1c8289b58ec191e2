"""viewfinder.xvfb: Xvfb virtual displays, shared-memory capture and XTest input.

>>> from viewfinder.xvfb import Display
>>> with Display(1280, 800) as display:             # doctest: +SKIP
...     display.input.click(100, 100)
...     display.backend().capture().save("frame.png")
"""

import lazy_loader

# Names are imported on first use: `viewfinder --help` and the plugin manager import this
# package without paying for what its modules import (the stub lists the names).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
