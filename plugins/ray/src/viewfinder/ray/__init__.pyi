"""Names of viewfinder.ray, imported on first use (see __init__.py)."""

from .actor import SessionActor
from .provider import RESOURCE, RayProvider
from .session import RaySession

__all__ = ["RESOURCE", "RayProvider", "RaySession", "SessionActor"]
