"""Two sessions at once: B tries every way into A, and each one fails; A works on.

Session A keeps a secret in its home and in its /tmp, has a Tk window on its display,
and the test listens on 127.0.0.1. Session B (hostile) knows every path, pid and
display number of A, as an attacker reading the docs would.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeEnvironment
from viewfinder.codeenv.worker import isolation
from viewfinder.xvfb import DisplayPool, access

A_SETUP = """
import os, tkinter as tk
open('secret.txt', 'w').write('A-home-secret')
open('/tmp/a-secret.txt', 'w').write('A-tmp-secret')
open('/dev/shm/a-secret', 'w').write('A-shm-secret')
root = tk.Tk()
root.geometry('200x100+0+0')
tk.Frame(root, background='#0000ff', width=200, height=100).pack()
root.update()
print(os.getcwd())
"""

ATTACKS = """
import json, os, socket
results = {}

def attempt(name, action):
    try:
        results[name] = f"GOT {action()!r}"[:200]
    except Exception as exc:
        results[name] = f"refused: {type(exc).__name__}"

attempt("home file", lambda: open(A_HOME + '/secret.txt').read())
attempt("home listing", lambda: os.listdir(A_HOME))
attempt("tmp file", lambda: open('/tmp/a-secret.txt').read())
attempt("shm file", lambda: open('/dev/shm/a-secret').read())
attempt("framebuffer", lambda: open(A_FRAMEBUFFER, 'rb').read(16))
attempt("framebuffer folder", lambda: os.listdir(os.path.dirname(A_FRAMEBUFFER)))
attempt("worker cmdline", lambda: open(f'/proc/{A_PID}/cmdline', 'rb').read())
attempt("server cmdline", lambda: open(f'/proc/{SERVER_PID}/cmdline', 'rb').read())
me = str(os.getpid())
# pid 1 is the sandbox's own init (bubblewrap), which ends every process of it
attempt("processes", lambda: [p for p in os.listdir('/proc') if p.isdigit() and p not in (me, '1')])

def x_socket_path():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    s.connect(f'/tmp/.X11-unix/X{A_DISPLAY}')
    return 'connected'

def x_socket_abstract():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    s.connect(f'\\0/tmp/.X11-unix/X{A_DISPLAY}')
    return 'connected'

def x_client():
    from Xlib import display
    d = display.Display(f':{A_DISPLAY}')
    return d.screen().root.get_geometry().width

attempt("X socket", x_socket_path)
attempt("X abstract socket", x_socket_abstract)
attempt("X client", x_client)

def tcp():
    s = socket.create_connection(('127.0.0.1', PORT), timeout=2)
    return s.recv(16)

attempt("loopback listener", tcp)
print(json.dumps(results))
"""


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that answers whoever connects."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    yield server.getsockname()[1]
    server.close()


def _attack(b: CodeEnvironment, a: CodeEnvironment, home: str, port: int) -> dict[str, str]:
    assert a.worker is not None and a.display is not None
    prelude = (
        f"A_HOME = {home!r}\nA_FRAMEBUFFER = {str(a.display.framebuffer_path)!r}\n"
        f"A_PID = {a.worker.pid}\nSERVER_PID = {os.getpid()}\n"
        f"A_DISPLAY = {a.display.number}\nPORT = {port}\n"
    )
    observation = b.step(CodeAction(code=prelude + ATTACKS, timeout_s=60))
    assert observation.exit_code == 0, observation.stderr
    results: dict[str, str] = json.loads(observation.stdout.strip().splitlines()[-1])
    return results


def test_a_session_cannot_reach_another(
    make_env: Callable[..., CodeEnvironment],
    listener: int,
    png: Callable[[str], Image.Image],
) -> None:
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    a, b = make_env(), make_env()
    setup = a.step(CodeAction(code=A_SETUP, timeout_s=60))
    assert setup.exit_code == 0, setup.stderr
    home = setup.stdout.strip()

    results = _attack(b, a, home, listener)

    assert results.pop("processes") == "GOT []"  # it sees no process but its own
    leaks = {name: result for name, result in results.items() if not result.startswith("refused")}
    assert leaks == {}, leaks
    # A works on: its own files, window and capture
    after = a.step(
        CodeAction(
            code="print(open('secret.txt').read(), open('/tmp/a-secret.txt').read())\n"
            "shot = capture_screenshot()",
            timeout_s=60,
        )
    )
    assert after.stdout == "A-home-secret A-tmp-secret\n", after.stderr
    assert png(after.screenshots[-1]).getpixel((100, 50))[:3] == (0, 0, 255)


def test_with_the_host_network_a_session_reaches_loopback(
    make_env: Callable[..., CodeEnvironment], listener: int
) -> None:
    env = make_env(session_network="host")
    observation = env.step(
        CodeAction(
            code=f"import socket\nsocket.create_connection(('127.0.0.1', {listener}), timeout=5)\n"
            "print('connected')",
            timeout_s=30,
        )
    )
    assert observation.stdout == "connected\n", observation.stderr
    assert env.worker is not None
    assert env.worker.ready_info["isolation"]["network"] == "host"


def test_the_private_tmp_is_bounded(make_env: Callable[..., CodeEnvironment]) -> None:
    env = make_env(tmp_size_mb=8)
    observation = env.step(
        CodeAction(
            code="import os\n"
            "try:\n"
            "    with open('/tmp/fill', 'wb') as out:\n"
            "        for _ in range(16):\n"
            "            out.write(os.urandom(1 << 20))\n"
            "except OSError as exc:\n"
            "    print('refused:', exc.errno == 28)\n"
            "print(os.path.getsize('/tmp/fill') <= 8 << 20)",
            timeout_s=30,
        )
    )
    assert observation.stdout == "refused: True\nTrue\n", observation.stderr
    # and what it wrote is gone from the machine's /tmp with nothing to clean up
    assert not os.path.exists("/tmp/fill")


def test_isolation_is_reported(env: CodeEnvironment) -> None:
    assert env.worker is not None
    isolation = env.worker.ready_info["isolation"]
    assert isolation["processes_hidden"] is True and isolation["via"] == "bubblewrap"
    assert isolation["network"] == "none"
    assert isolation["private_tmp_bytes"] == 512 * 1024 * 1024
    assert env.worker.ready_info["kept_read_access"] is False


def _as_user(uid: int, display: str) -> subprocess.CompletedProcess[str]:
    """``xsetroot`` run as ``uid`` against ``display``: whether that user may connect."""

    def become() -> None:
        os.setgid(uid)
        os.setuid(uid)

    return subprocess.run(
        ["xsetroot", "-display", display, "-name", "probe"],
        capture_output=True, text=True, timeout=30, preexec_fn=become,
    )  # fmt: skip


def test_a_display_lent_again_admits_only_its_new_session(
    png: Callable[[str], Image.Image],
) -> None:
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    with DisplayPool(size=1, width=640, height=480) as pool:
        first = CodeEnvironment(CodeEnvConfig(width=640, height=480), displays=pool)
        first.reset()
        painted = first.step(CodeAction(code=A_SETUP, timeout_s=60))
        assert painted.exit_code == 0, painted.stderr
        assert first.worker is not None and first.display is not None
        old_uid, name = first.worker.uid, first.display.name
        assert old_uid is not None
        assert _as_user(old_uid, name).returncode == 0  # its session may connect
        first.close()

        second = CodeEnvironment(CodeEnvConfig(width=640, height=480), displays=pool)
        try:
            second.reset()
            assert second.display is not None and second.display.name == name  # lent again
            assert second.worker is not None and second.worker.uid is not None
            new_uid = second.worker.uid
            assert new_uid != old_uid
            refused = _as_user(old_uid, name)
            assert refused.returncode != 0 and "Authorization required" in refused.stderr
            assert _as_user(new_uid, name).returncode == 0
            assert _as_user(new_uid + 1, name).returncode != 0  # nor anyone else
            assert sorted(access.admitted(name)) == sorted(
                [f"SI:localuser:#{new_uid}", "SI:localuser:#0"]
            )
            shot = second.step(CodeAction(code="shot = capture_screenshot()", timeout_s=30))
            assert shot.exit_code == 0, shot.stderr
            # nothing of the first session's blue window is on the screen
            assert png(shot.screenshots[-1]).getpixel((100, 50))[:3] != (0, 0, 255)
        finally:
            second.close()
        assert access.admitted(name) == ["SI:localuser:#0"]  # back in the pool: owner only


def test_an_installation_under_tmp_is_reachable_by_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a checkout cloned under /tmp (as CI does) has its venv there: bound into the
    # private /tmp, through folders the session's user may enter
    assert str(tmp_path).startswith("/tmp/")
    installed = tmp_path / "clone" / ".venv" / "lib"
    installed.mkdir(parents=True)
    (installed / "module.py").write_text("found = True\n")
    for folder in (tmp_path, tmp_path / "clone", tmp_path / "clone" / ".venv", installed):
        folder.chmod(0o755)
    (installed / "module.py").chmod(0o644)
    monkeypatch.setattr(isolation, "_interpreter_paths", lambda: [str(installed)])
    words, report = isolation.command({"tmp_bytes": 1 << 20})

    # bwrap runs as root, the session as a user of its own inside (as a worker does)
    as_session = ["setpriv", "--reuid", "64999", "--regid", "64999", "--clear-groups"]
    done = subprocess.run(
        [*words, *as_session, "cat", str(installed / "module.py")],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.stdout == "found = True\n", done.stderr
    assert report["via"] == "bubblewrap"
