"""viewfinder.tui: a process manager with events, an environment that owns processes,
a browser and a screen, and a Textual app to watch and drive them.

>>> from viewfinder.tui import ProcessManager
>>> async def main():                                           # doctest: +SKIP
...     async with ProcessManager() as processes:
...         await processes.spawn("python", ["-m", "http.server"], process_id="web")
...         async for event in processes.subscribe():
...             print(event)
"""

import lazy_loader

# Names are imported on first use: `viewfinder --help` and the plugin manager import this
# package without loading Textual, pydantic, the CDP client or Xlib.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
