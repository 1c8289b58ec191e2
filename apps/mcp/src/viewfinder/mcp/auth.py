"""Who may use the HTTP transport, and where the token comes from.

The check is :class:`viewfinder.core.web_access.WebGuard` (shared with the server and
the viewer; it replaces the SDK's own Host/Origin check, which let any loopback port's
page in): other hosts, other origins, non-JSON bodies and framing are refused and,
with a token, no request reaches the MCP endpoint without it, sent as
``Authorization: Bearer TOKEN`` (what MCP clients send from their config's ``headers``)
or as HTTP basic auth with the token as the password; compared in constant time. A
refusal is a JSON-RPC error, which MCP clients show.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from viewfinder.core.web_access import WebAccess
from viewfinder.mcp.options import TOKEN_ENV, HttpOptions, McpOptionError

HINT = (
    "missing or wrong token: send 'Authorization: Bearer TOKEN' (the token viewfinder mcp "
    "was started with)"
)


def _json_rpc_error(hint: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": hint}}


def mcp_access(options: HttpOptions) -> WebAccess:
    """Who may use the HTTP transport of ``options`` (refusals are JSON-RPC errors)."""
    return WebAccess(
        host=options.host,
        token=options.token,
        hint=HINT,
        body=_json_rpc_error,
        name="viewfinder_mcp",
    )


def read_token(given: str | None, token_file: Path | None) -> str | None:
    """The token from ``--token-file``, ``--token`` or ``$VIEWFINDER_MCP_TOKEN``."""
    if given is not None and token_file is not None:
        raise McpOptionError("--token", "give --token or --token-file, not both")
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise McpOptionError("--token-file", f"cannot read {token_file}: {exc}") from None
        if not lines or not lines[0].strip():
            raise McpOptionError("--token-file", f"{token_file} is empty")
        return lines[0].strip()
    if given is not None:
        return given
    return os.environ.get(TOKEN_ENV) or None
