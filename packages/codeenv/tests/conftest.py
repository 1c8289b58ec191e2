"""Fixtures for the code env tests: a real display pool, real workers, and leak checks."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

from viewfinder.codeenv import CodeEnvConfig, CodeEnvironment
from viewfinder.codeenv.font_cache import shared_font_cache
from viewfinder.core.testing import child_processes
from viewfinder.xvfb import DisplayPool

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "codeenv"


@pytest.fixture(scope="session", autouse=True)
def no_process_left() -> Iterator[None]:
    """After all tests, no Xvfb or worker started by them may still run."""
    before = child_processes("Xvfb") | child_processes("python")
    yield
    shared_font_cache().wait()  # its one-off build runs in a subprocess of ours
    left = (child_processes("Xvfb") | child_processes("python")) - before
    assert not left, f"the tests left processes running: {sorted(left)}"


@pytest.fixture(scope="session")
def pool() -> Iterator[DisplayPool]:
    """Two warm 640x480 displays shared by every test of the package."""
    with DisplayPool(size=2, width=640, height=480) as displays:
        yield displays


@pytest.fixture
def make_env(pool: DisplayPool) -> Iterator[Callable[..., CodeEnvironment]]:
    """Build reset environments on the pool; afterwards check each left nothing behind."""
    made: list[CodeEnvironment] = []

    def make(**settings: object) -> CodeEnvironment:
        env = CodeEnvironment(CodeEnvConfig(**settings), displays=pool)  # type: ignore[arg-type]
        made.append(env)
        env.reset()
        return env

    yield make
    for env in made:
        worker = env.worker
        uid = worker.uid if worker is not None else None
        pid = worker.pid if worker is not None else None
        home = worker.home if worker is not None else None
        env.close()
        assert_worker_gone(pid, uid, home)
    assert pool.stats().in_use == 0


@pytest.fixture
def env(make_env: Callable[..., CodeEnvironment]) -> CodeEnvironment:
    """One reset environment with a 20 s step timeout."""
    return make_env(timeout_s=20)


def assert_worker_gone(pid: int | None, uid: int | None, home: Path | None) -> None:
    from viewfinder.codeenv import process_tree

    if pid is not None:
        assert not Path(f"/proc/{pid}").exists() or _is_zombie(pid), f"worker {pid} still runs"
    if uid is not None:
        assert process_tree.living(uid=uid) == [], f"processes of sandbox user {uid} remain"
    if home is not None:
        assert not home.exists(), f"the worker's home {home} was not removed"


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.fixture
def worker_gone() -> Callable[[int | None, int | None, Path | None], None]:
    """``worker_gone(pid, uid, home)`` asserts no process or directory of a worker is left."""
    return assert_worker_gone


@pytest.fixture
def png() -> Callable[[str], Image.Image]:
    """``png(b64)``: decode a capture, checking it is base64 of a PNG, into an RGB image."""

    def decode(b64: str) -> Image.Image:
        data = base64.b64decode(b64, validate=True)
        assert data.startswith(b"\x89PNG\r\n\x1a\n"), "a capture must be a PNG"
        return Image.open(io.BytesIO(data)).convert("RGB")

    return decode


@pytest.fixture
def example() -> Callable[[str], str]:
    """``example(name)``: the source of ``examples/codeenv/<name>``."""
    return lambda name: (EXAMPLES / name).read_text()
