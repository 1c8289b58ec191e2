"""The HTTP endpoints of the wire protocol, on a real server on loopback."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from viewfinder.server import LocalServer


def test_health_schema_metadata_state(server: LocalServer) -> None:
    base = server.base_url
    health = httpx.get(f"{base}/health").json()
    assert health["status"] == "healthy"
    assert health["active_sessions"] == 0
    schema = httpx.get(f"{base}/schema").json()
    assert set(schema) == {"action", "observation", "state"}
    assert {"code", "timeout_s", "capture_screenshot", "metadata"} == set(
        schema["action"]["properties"]
    )
    assert {"stdout", "stderr", "exit_code", "screenshot", "screenshots"} <= set(
        schema["observation"]["properties"]
    )
    assert httpx.get(f"{base}/metadata").json()["name"] == "viewfinder-codeenv"
    assert httpx.get(f"{base}/state").json() == {
        "episode_id": None,
        "step_count": 0,
        "last_exit_code": 0,
    }


def test_reset_and_step_answer_in_openenv_layout(server: LocalServer) -> None:
    base = server.base_url
    reset = httpx.post(f"{base}/reset", json={}, timeout=60).json()
    assert set(reset) == {"observation", "reward", "done"}
    assert reset["observation"]["exit_code"] == 0
    step = httpx.post(
        f"{base}/step",
        json={
            "action": {"code": "import tkinter\ntkinter.Tk()\ncapture_screenshot()\nprint(6 * 7)"}
        },
        timeout=60,
    ).json()
    assert step["observation"]["stdout"] == "42\n"
    assert len(step["observation"]["screenshots"]) == 1
    assert step["done"] is False
    # stateless, as in OpenEnv: each HTTP call has an environment of its own
    again = httpx.post(f"{base}/step", json={"action": {"code": "print(x)"}}, timeout=60).json()
    assert "NameError" in again["observation"]["stderr"]
    assert httpx.get(f"{base}/health").json()["active_sessions"] == 0


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "json_invalid"),
        (b'{"action": {"code": "x"}, "surprise": 1}', "extra_forbidden"),
        (b'{"action": {"code": "x", "language": "py"}}', "extra_forbidden"),
        (b'{"action": {"code": 5}}', "string_type"),
        (b'{"action": {"code": "x", "timeout_s": "soon"}}', "float_type"),
        (b'{"action": {"code": "x", "timeout_s": "5"}}', "float_type"),
        (b'{"action": {"code": "x", "capture_screenshot": "yes"}}', "bool_type"),
        (b'{"action": {"code": "x"}, "timeout_s": -1}', "greater_than"),
        (b'{"action": {"code": "x"}, "timeout_s": 0}', "greater_than"),
        (b'{"action": {"code": "x"}, "timeout_s": 1e12}', "less_than_equal"),
        (b'{"action": {"code": "x"}, "timeout_s": 1e300}', "less_than_equal"),
        (b'{"action": {"code": "x", "timeout_s": 1e300}}', "less_than_equal"),
        (b'{"action": {"code": "x"}, "timeout_s": Infinity}', "finite_number"),
        (b'{"action": {"code": "x"}, "timeout_s": NaN}', "finite_number"),
        (b'{"action": {"code": "x", "timeout_s": -Infinity}}', "finite_number"),
        (b"{}", "missing"),
    ],
)
def test_bad_step_requests_get_422_with_the_reason(
    server: LocalServer, body: bytes, reason: str
) -> None:
    response = httpx.post(
        f"{server.base_url}/step", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert reason in {error["type"] for error in response.json()["detail"]}
    # the server goes on serving
    assert httpx.get(f"{server.base_url}/health").status_code == 200


def test_bad_reset_requests_get_422(server: LocalServer) -> None:
    response = httpx.post(f"{server.base_url}/reset", json={"seed": "x", "colour": "red"})
    assert response.status_code == 422
    assert {e["type"] for e in response.json()["detail"]} == {"int_parsing", "extra_forbidden"}


def test_capacity_over_http_is_503_capacity_reached(serve: Callable[..., LocalServer]) -> None:
    from websockets.sync.client import connect

    server = serve(max_sessions=1)
    with connect(server.base_url.replace("http", "ws") + "/ws"):
        response = httpx.post(f"{server.base_url}/step", json={"action": {"code": "1"}})
    assert response.status_code == 503
    detail = response.json()["detail"]
    assert detail["code"] == "CAPACITY_REACHED"
    assert (detail["active_sessions"], detail["max_sessions"]) == (1, 1)
