"""viewfinder.server: the code env and desktop sessions over OpenEnv's wire protocol
(a desktop's tools over OpenEnv's MCP tool calls), and the code env's clients.

>>> from viewfinder.server import CodingEnv, create_app, ServerSettings
>>> app = create_app(ServerSettings(max_sessions=8))     # serve with uvicorn
>>> with CodingEnv.local() as env:                       # doctest: +SKIP
...     env.reset()
...     env.step("import tkinter; tkinter.Tk(); capture_screenshot()").observation.screenshot
"""

import lazy_loader

# Names are imported on first use: `viewfinder --help` and the plugin manager import this
# package without paying for what its modules import (the stub lists the names).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
