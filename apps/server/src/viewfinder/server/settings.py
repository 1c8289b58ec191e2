"""Settings of the server: which environment it serves, where it listens, who may use
it, its limits."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from viewfinder.codeenv import CodeEnvConfig
from viewfinder.core.web_access import checked_token, is_loopback
from viewfinder.server.desktop_task import DesktopTask
from viewfinder.server.errors import InsecureBindError

TOKEN_ENV = "VIEWFINDER_SERVER_TOKEN"
#: What the server does when its cluster's head is gone (``viewfinder serve --on-head-lost``).
HEAD_LOST_ACTIONS = ("stay", "exit")


@dataclass(frozen=True)
class ServerSettings:
    """How the server runs.

    - ``env``: what each session is: the name of a registered environment
      (``viewfinder_register_envs``): ``"code"`` (a code env, OpenEnv's coding env
      protocol), ``"desktop"`` (a desktop behind OpenEnv's tool calls; see
      :mod:`viewfinder.server.desktop_env`), or a plugin's.
    - ``host`` / ``port``: where it listens; 127.0.0.1 by default. Any other address
      needs a ``token``, which every request and WebSocket must then carry
      (``Authorization: Bearer TOKEN``, or HTTP basic auth with the token as password,
      which is what a URL like ``http://user:TOKEN@host:8000`` sends).
    - ``max_sessions``: sessions (WebSockets plus one-shot HTTP requests) at once;
      one more gets ``CAPACITY_REACHED``.
    - ``idle_timeout_s``: a session without a message for this long is closed.
    - ``reap_interval_s``: how often idle sessions are looked for.
    - ``pool_size``: warm displays kept ready; ``display_width`` / ``display_height``.
    - ``codeenv``: the sandbox and step limits of every session (a desktop session's
      ``run_code`` sandbox too).
    - ``desktop``: the task of a desktop reset that names none (apps, screen size,
      scaling); ``allow_any_app`` lets a reset start programs besides ``desktop.apps``
      (they run as the server's user: only for clients trusted with that).
    """

    env: str = "code"

    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    max_sessions: int = 16
    idle_timeout_s: float = 600.0
    reap_interval_s: float | None = None
    pool_size: int = 2
    display_width: int = 1280
    display_height: int = 800
    codeenv: CodeEnvConfig = field(default_factory=CodeEnvConfig)
    desktop: DesktopTask = field(default_factory=DesktopTask)
    allow_any_app: bool = False
    provider: str = "local"
    provider_options: Mapping[str, Any] = field(default_factory=dict)
    on_head_lost: Literal["stay", "exit"] = "stay"

    def __post_init__(self) -> None:
        if not isinstance(self.provider, str) or not self.provider.strip():
            raise ValueError(f"provider must be a provider's name, got {self.provider!r}")
        if not isinstance(self.env, str) or not self.env.strip():
            raise ValueError(f"env must be a registered environment's name, got {self.env!r}")
        if self.on_head_lost not in HEAD_LOST_ACTIONS:
            raise ValueError(f"on_head_lost must be stay or exit, got {self.on_head_lost!r}")
        if self.max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {self.max_sessions}")
        if self.idle_timeout_s <= 0:
            raise ValueError(f"idle_timeout_s must be positive, got {self.idle_timeout_s}")
        if self.pool_size < 1:
            raise ValueError(f"pool_size must be at least 1, got {self.pool_size}")
        object.__setattr__(self, "token", checked_token(self.token))  # InvalidTokenError
        if not is_loopback(self.host) and not self.token:
            raise InsecureBindError(
                f"listening on {self.host} lets other machines run code here; give a token "
                f"(--token or ${TOKEN_ENV}) that every client must send, or listen on 127.0.0.1"
            )

    @property
    def reap_every_s(self) -> float:
        """How often the reaper looks for idle sessions."""
        if self.reap_interval_s is not None:
            return self.reap_interval_s
        return min(max(self.idle_timeout_s / 4, 0.05), 5.0)

    def provider_settings(self) -> dict[str, Any]:
        """The options the provider is opened with: the server's own ``local`` provider
        gets the display pool's size and the display size, then ``provider_options``."""
        options: dict[str, Any] = {}
        if self.provider == "local":
            options = {
                "pool_size": self.pool_size,
                "width": self.display_width,
                "height": self.display_height,
            }
        return {**options, **self.provider_options}

    def with_changes(self, **changes: Any) -> ServerSettings:
        return replace(self, **changes)

    @classmethod
    def from_env(cls, **overrides: Any) -> ServerSettings:
        """Settings with the token from ``$VIEWFINDER_SERVER_TOKEN`` unless given."""
        if overrides.get("token") is None and os.environ.get(TOKEN_ENV):
            overrides["token"] = os.environ[TOKEN_ENV]
        return cls(**{key: value for key, value in overrides.items() if value is not None})
