"""viewfinder.viewer: ``viewfinder view``, a web page of what an agent saw and did.

>>> from viewfinder.viewer import ViewerServer, ViewerSettings
>>> with ViewerServer(ViewerSettings(root=Path("session"), port=0)) as viewer:  # doctest: +SKIP
...     print(viewer.url)

Names are imported on first use: ``viewfinder --help`` imports the plugin module,
which must not pull in fastapi. See docs/viewer.md.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "ViewerSettings": "viewfinder.viewer.settings",
    "ViewerServer": "viewfinder.viewer.local",
    "create_app": "viewfinder.viewer.app",
    "Catalog": "viewfinder.viewer.artifacts.catalog",
    "ArtifactView": "viewfinder.viewer.artifacts.model",
    "Confined": "viewfinder.viewer.confine",
    "ViewerError": "viewfinder.viewer.errors",
    "RefusedPathError": "viewfinder.viewer.errors",
}

__all__ = [
    "ArtifactView",
    "Catalog",
    "Confined",
    "RefusedPathError",
    "ViewerError",
    "ViewerServer",
    "ViewerSettings",
    "create_app",
]

if TYPE_CHECKING:
    from viewfinder.viewer.app import create_app
    from viewfinder.viewer.artifacts.catalog import Catalog
    from viewfinder.viewer.artifacts.model import ArtifactView
    from viewfinder.viewer.confine import Confined
    from viewfinder.viewer.errors import RefusedPathError, ViewerError
    from viewfinder.viewer.local import ViewerServer
    from viewfinder.viewer.settings import ViewerSettings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'viewfinder.viewer' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
