"""Dependencies the routes take, as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from viewfinder.server.served import ServedEnv
from viewfinder.server.sessions import SessionRegistry
from viewfinder.server.settings import ServerSettings


def get_registry(connection: HTTPConnection) -> SessionRegistry:
    registry: SessionRegistry = connection.app.state.registry
    return registry


def get_settings(connection: HTTPConnection) -> ServerSettings:
    settings: ServerSettings = connection.app.state.settings
    return settings


def get_served(connection: HTTPConnection) -> ServedEnv:
    served: ServedEnv = connection.app.state.served
    return served


#: The server's sessions (works for HTTP routes and WebSockets alike).
Registry = Annotated[SessionRegistry, Depends(get_registry)]
#: The server's settings.
Settings = Annotated[ServerSettings, Depends(get_settings)]
#: The environment the server serves (code env or desktop).
Served = Annotated[ServedEnv, Depends(get_served)]
