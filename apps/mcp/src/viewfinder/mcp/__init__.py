"""viewfinder.mcp: every tool of viewfinder's registry for any MCP client.

>>> from viewfinder.core import tool_registry
>>> from viewfinder.mcp import DesktopOptions, serve_stdio
>>> serve_stdio(tool_registry(), DesktopOptions(size=(1280, 800)))   # doctest: +SKIP

``viewfinder mcp`` runs :func:`serve_stdio` (or :func:`serve_http` with ``--http``);
:func:`build_server` gives the SDK's low-level server for other transports. docs/mcp.md
has the walk-through.
"""

import lazy_loader

# Names are imported on first use: the plugin manager imports this package (for
# plugin.py) on every `viewfinder` command, and the MCP SDK takes seconds to import.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
