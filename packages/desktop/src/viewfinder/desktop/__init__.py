"""viewfinder.desktop: an agent's eyes and hands on a virtual screen.

>>> from viewfinder.desktop import Desktop, ComputerTool
>>> with Desktop(size=(1280, 800), apps=[["xterm"]]) as desktop:       # doctest: +SKIP
...     tool = desktop.computer(target="XGA")
...     result = tool({"action": "left_click", "coordinate": [100, 200]})

A :class:`Desktop` is an Xvfb display with the apps of a task; a :class:`ComputerTool`
performs one computer-use action (Anthropic's or OpenAI's) on it and hands back the
screen once it settled, scaled for the model. docs/desktop.md has the agent loop.
"""

import lazy_loader

# Names are imported on first use (the stub lists them), so `viewfinder --help` and the
# plugin manager do not pay for what the modules import.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
