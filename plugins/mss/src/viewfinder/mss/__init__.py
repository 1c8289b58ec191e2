"""viewfinder.mss: capture the screen this process runs on, through mss.

>>> from viewfinder.mss import MssBackend
>>> with MssBackend(monitor=1) as backend:          # doctest: +SKIP
...     shot = backend.capture()
"""

import lazy_loader

# Names are imported on first use: `viewfinder --help` and the plugin manager import this
# package without paying for what its modules import (the stub lists the names).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
