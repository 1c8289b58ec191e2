"""One adversarial suite against every web surface of viewfinder (the viewer and its live
view, ``serve`` code and desktop, ``mcp --http``), each a real server on loopback:
foreign Host, foreign and ``null`` Origin on HTTP and WebSocket, CORS-simple state
changes, framing, and the token in a header, never a cookie or the address.

The same attacks through a real Chromium are in test_web_surfaces_browser.py; the
guard's rules one ASGI call at a time in packages/core/tests/test_web_access.py.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.web_surfaces import (  # fixtures are used by name
    TOKEN,
    Surface,
    display,
    handshake,
    passed_the_guard,
    surface,
    with_token,
)
from viewfinder.xvfb import Display

__all__ = ["display", "surface", "with_token"]

FOREIGN_HOSTS = ("evil.example", "rebind.test:{port}", "127.0.0.1.nip.io:{port}")
FOREIGN_ORIGINS = (
    "http://evil.example",
    "null",
    "http://127.0.0.1:{other}",
    "http://localhost:{port}",
)


def _filled(template: str, surface: Surface) -> str:
    return template.format(port=surface.port, other=surface.port + 1)


def test_the_apps_own_requests_pass(surface: Surface) -> None:
    for call in (surface.read, surface.change):
        for host in (f"127.0.0.1:{surface.port}", f"localhost:{surface.port}"):
            answered = surface.send(call, host=host)
            assert passed_the_guard(answered), (host, answered.status_code, answered.text)
        same = surface.send(call, origin=surface.origin)
        assert passed_the_guard(same), (same.status_code, same.text)
    for path in surface.sockets:
        assert handshake(surface, path) == 101
        assert handshake(surface, path, origin=surface.origin) == 101


#: (header, value, the guard's answer, what its reason says)
ATTACKS = [
    *(("host", host, 421, "127.0.0.1") for host in FOREIGN_HOSTS),
    *(("origin", origin, 403, "other origins") for origin in FOREIGN_ORIGINS),
]


@pytest.mark.parametrize(("header", "value", "status", "said"), ATTACKS)
def test_a_foreign_host_or_origin_is_refused_on_http(
    surface: Surface, header: str, value: str, status: int, said: str
) -> None:
    """A foreign Host: DNS rebinding (a name of the attacker's resolving to 127.0.0.1);
    a foreign, other-port or ``null`` Origin: a page of another site."""
    for call in (surface.read, surface.change):
        refused = surface.send(call, **{header: _filled(value, surface)})
        assert refused.status_code == status, (call, refused.status_code, refused.text)
        assert said in refused.text


@pytest.mark.parametrize(("header", "value", "status", "said"), ATTACKS)
def test_a_foreign_host_or_origin_is_refused_on_websockets(
    surface: Surface, header: str, value: str, status: int, said: str
) -> None:
    """Cross-site WebSocket hijacking: a handshake carries cookies and no CORS. Every
    handshake is checked, also to a path without a socket (``mcp --http`` has none)."""
    for path in surface.sockets or (surface.page,):
        assert handshake(surface, path, **{header: _filled(value, surface)}) == status


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
     "multipart/form-data; boundary=x"],
)  # fmt: skip
def test_a_cors_simple_post_changes_nothing(surface: Surface, content_type: str) -> None:
    """A page of any origin may send these without a preflight."""
    refused = surface.send(surface.change, content_type=content_type)
    assert refused.status_code == 415, (refused.status_code, refused.text)
    refused = surface.send(surface.change, content_type=content_type, origin="null")
    assert refused.status_code == 403


def test_no_answer_may_be_framed(surface: Surface) -> None:
    """Clickjacking: no page of another site may show one of these in a frame."""
    answers = [
        surface.send(surface.read),
        surface.send(surface.read, host="evil.example"),
        surface.send(surface.read, origin="null"),
        httpx.get(surface.base + surface.page),
    ]
    for answer in answers:
        assert answer.headers.get("x-frame-options") == "DENY", answer.request.url
        assert "frame-ancestors 'none'" in answer.headers.get_list("content-security-policy")


def test_the_token_as_a_bearer_and_nowhere_a_page_cannot_keep_it(with_token: Surface) -> None:
    surface = with_token
    for call in (surface.read, surface.change):
        assert surface.send(call).status_code == 401
        assert (
            surface.send(call, headers={"Authorization": "Bearer wrong-token-x"}).status_code == 401
        )
        bearer = surface.send(call, headers={"Authorization": f"Bearer {TOKEN}"})
        assert passed_the_guard(bearer), (bearer.status_code, bearer.text)
        basic = surface.send(call, headers={"Authorization": _basic(TOKEN)})
        assert passed_the_guard(basic)
        # the right token does not make a foreign host or origin right
        assert surface.send(call, host="evil.example", headers=_bearer()).status_code == 421
        assert surface.send(call, origin="null", headers=_bearer()).status_code == 403
    for path in surface.sockets:
        assert handshake(surface, path) == 401
        assert handshake(surface, path, headers=_bearer()) == 101
        assert handshake(surface, path, headers=_bearer(), origin="http://evil.example") == 403
    cookie = {"Cookie": f"viewfinder_token_{surface.port}={TOKEN}; token={TOKEN}"}
    assert surface.send(surface.read, headers=cookie).status_code == 401


def test_the_token_is_never_a_cookie_a_page_sends_it_as_a_header(with_token: Surface) -> None:
    surface = with_token
    opened = httpx.get(f"{surface.base}{surface.page}?token={TOKEN}&keep=1")
    if not surface.pages:  # a server for scripts: only the header
        assert opened.status_code == 401
        return
    # the page's shell holds no data and sets no cookie (a cookie reaches every port)
    assert opened.status_code == 200 and "set-cookie" not in opened.headers
    assert surface.send(surface.read, headers={"Cookie": f"token={TOKEN}"}).status_code == 401
    encoded = base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("=")
    for path in surface.sockets:
        offered = {"Sec-WebSocket-Protocol": f"viewfinder-token.{encoded}"}
        assert handshake(surface, path, headers=offered) == 101
        assert handshake(surface, f"{path}&token={TOKEN}") == 401  # not in a socket's address


def test_every_app_is_built_behind_the_guard(
    surface: Surface, tmp_path: Path, display: Display
) -> None:
    """Whatever the settings, an app comes out of its factory guarded (and the servers
    refuse to serve one that is not: packages/core/tests/test_web_access.py)."""
    from viewfinder.core.web_access import is_guarded

    if surface.name == "viewer":
        from viewfinder.viewer import ViewerSettings, create_app

        built = [
            create_app(ViewerSettings(root=tmp_path)),
            create_app(ViewerSettings(live=(":1",))),
        ]
    elif surface.name.startswith("serve"):
        from viewfinder.server import ServerSettings
        from viewfinder.server import create_app as create_server

        built = [create_server(ServerSettings(env=env)) for env in ("code", "desktop")]
    else:
        from viewfinder.mcp.options import HttpOptions

        built = [_mcp_app(HttpOptions()), _mcp_app(HttpOptions(host="::1", token=TOKEN))]
    assert built and all(is_guarded(app) for app in built)


def _mcp_app(options: Any) -> object:
    from viewfinder.mcp.http import http_app, http_session_key
    from viewfinder.mcp.options import DesktopOptions
    from viewfinder.mcp.server import build_server
    from viewfinder.mcp.sessions import SessionRegistry

    registry = SessionRegistry(DesktopOptions())
    return http_app(build_server({}, registry, http_session_key), registry, options)


def _bearer() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def _basic(token: str) -> str:
    import base64

    return "Basic " + base64.b64encode(f"anyone:{token}".encode()).decode()


def test_every_server_in_the_sources_serves_only_guarded_apps() -> None:
    """Walks the sources: whatever builds a web app builds it with ``guard``, and whatever
    hands one to uvicorn passes it through ``require_guard`` (a new app cannot skip it)."""
    import re

    root = Path(__file__).resolve().parents[1]
    sources = [
        path
        for folder in ("packages", "plugins", "apps")
        for path in (root / folder).glob("*/src/viewfinder/**/*.py")
        if path.name != "testing.py"
    ]
    builds, serves = [], []
    for path in sources:
        text = path.read_text()
        if re.search(r"\b(FastAPI|Starlette)\(", text):
            builds.append(path.name)
            assert re.search(r"\bguard\(", text), f"{path} builds an app without guard()"
        if re.search(r"\buvicorn\.Config\(", text):
            serves.append(path.name)
            assert "require_guard(" in text, f"{path} serves an app without require_guard()"
    # the viewer, the server and the MCP server: found, so the walk looked where they are
    assert sorted(builds) == ["app.py", "app.py", "http.py"], builds
    assert sorted(serves) == ["app.py", "http.py", "local.py"], serves


@pytest.mark.parametrize(
    ("command", "variable"),
    [
        (["view", "--no-open", "--live", ":1"], "VIEWFINDER_VIEWER_TOKEN"),
        (["serve"], "VIEWFINDER_SERVER_TOKEN"),
        (["mcp", "--http"], "VIEWFINDER_MCP_TOKEN"),
    ],
)
@pytest.mark.parametrize(
    ("token", "said"), [("   ", "empty or only spaces"), (" short\t", "this one has 5")]
)
def test_a_token_no_client_can_send_is_refused_at_startup(
    command: list[str], variable: str, token: str, said: str
) -> None:
    """From the environment, where a stray space is easy to leave (nothing starts)."""
    from typer.testing import CliRunner

    from viewfinder.cli.app import build_app

    result = CliRunner().invoke(
        build_app(), [*command, "--host", "0.0.0.0", "--port", "1"], env={variable: token}
    )
    assert result.exit_code in (1, 2), result.output
    output = " ".join(result.output.split())
    assert said in output and "at least 8 characters" in output, output
