"""Names of viewfinder.mss, imported on first use (see __init__.py)."""

from .backend import MssBackend

__all__ = ["MssBackend"]
