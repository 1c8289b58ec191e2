"""viewfinder.core: models, hooks, the plugin manager and the capture facade.

>>> from viewfinder.core import capture
>>> shot = capture("xvfb", display=":99")          # doctest: +SKIP
>>> shot.save("frame.png")                          # doctest: +SKIP
"""

import lazy_loader

# Names are imported on first use: `viewfinder --help` and the plugin manager import this
# package without paying for what its modules import (the stub lists the names).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
