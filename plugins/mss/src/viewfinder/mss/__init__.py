"""viewfinder.mss: capture the screen this process runs on, through mss.

>>> from viewfinder.mss import MssBackend
>>> with MssBackend(monitor=1) as backend:          # doctest: +SKIP
...     shot = backend.capture()
"""

from viewfinder.mss.backend import MssBackend

__all__ = ["MssBackend"]
