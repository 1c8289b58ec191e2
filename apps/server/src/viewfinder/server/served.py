"""What a server serves: whichever environment a plugin registered, behind the same routes.

Environments register through the ``viewfinder_register_envs`` hook (the code env and
the desktop env as well, from :mod:`viewfinder.server.plugin`); ``viewfinder serve
--env NAME`` serves the one named. The routes, the session registry and the WebSocket
loop do not know which one runs; they ask the server's :class:`ServedEnv`
(``app.state.served``) what a session runs (:meth:`ServedEnv.spec`, which the session
provider builds), to parse its WebSocket messages and to answer them.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

if TYPE_CHECKING:
    from viewfinder.core.providers import EnvSpec
    from viewfinder.server.settings import ServerSettings


class ServedEnv(Protocol):
    """The environment a server serves (``viewfinder serve --env``)."""

    #: The name it is registered under (``"code"``, ``"desktop"``, a plugin's).
    name: str
    #: The WebSocket messages a session takes, by ``type``.
    messages: Mapping[str, type[BaseModel]]

    def spec(self) -> EnvSpec:
        """What each session runs, for the session provider to build where it runs."""
        ...

    def answer(self, env: Any, message: BaseModel) -> str:
        """The reply to a ``reset``, ``step`` or ``state`` message as JSON text (blocking:
        run it on the session thread pool)."""
        ...

    def schema(self) -> dict[str, Any]:
        """JSON schemas of the action, the observation and the state (``GET /schema``)."""
        ...

    def metadata(self) -> dict[str, Any]:
        """Name and description (``GET /metadata``, OpenEnv's ``EnvironmentMetadata``)."""
        ...

    # Optional: ``routers()``, the env's own HTTP routers (without it the server gives
    # ``POST /reset`` and ``POST /step`` answering through :meth:`answer`);
    # ``deduplicates``: :meth:`answer` takes ``deduplicated=True`` (``/ws?screenshot=``);
    # ``parse_action(value)``: an action as the env takes it, for an ``EnvPool``.

    def fresh_state(self) -> dict[str, Any]:
        """The state of an environment before its first reset (``GET /state``)."""
        ...


def version_of(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def environment_metadata(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "readme_content": None,
        "version": version_of(name),
        "author": None,
        "documentation_url": None,
    }


def served_env(settings: ServerSettings) -> ServedEnv:
    """The environment ``settings.env`` names, as its plugin made it
    (:class:`~viewfinder.core.envs.UnknownEnvError` lists the registered ones)."""
    from viewfinder.core.envs import env_entry

    served: ServedEnv = env_entry(settings.env).factory(settings)
    return served


def env_routers(served: ServedEnv) -> list[Any]:
    """The HTTP routers of ``served`` besides the common ones: its own
    (``served.routers()``), or ``POST /reset`` and ``POST /step`` over its messages."""
    own = getattr(served, "routers", None)
    if callable(own):
        return list(own())
    from viewfinder.server.routes import generic

    return [generic.router]
