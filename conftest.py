"""Checks that hold for the whole test suite, whichever folders run."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.core.testing import processes_marked, wait_until

#: Every process the test run starts inherits this variable, however it is started.
RUN_MARKER = "VIEWFINDER_TEST_RUN"
WATCHED = ("Xvfb", "chromium", "chrome", "chrome_crashpad_handler")


@pytest.fixture(scope="session", autouse=True)
def no_display_or_browser_outlives_the_tests() -> Iterator[None]:
    """After the suite, no Xvfb or Chromium started by it may still run."""
    marker = uuid.uuid4().hex
    os.environ[RUN_MARKER] = marker
    try:
        yield
    finally:
        # Browsers and displays stopped by the last tests may take a moment to exit.
        try:
            wait_until(
                lambda: not processes_marked(RUN_MARKER, marker, WATCHED),
                "the displays and browsers started by the tests to exit",
                timeout=20,
            )
        finally:
            os.environ.pop(RUN_MARKER, None)


@pytest.fixture(scope="session", autouse=True)
def state_kept_out_of_the_users_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """What viewfinder keeps between runs (the browser's current page, the TUI's history)
    goes to a folder of the test run, never the real ~/.local/state."""
    state = tmp_path_factory.mktemp("xdg-state")
    before = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(state)
    try:
        yield state
    finally:
        if before is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = before


# -- every program the run starts comes from a package `make setup` installs ------------

_started_programs: set[str] = set()
_SHELLS = {"sh", "bash", "dash"}
#: Words a shell command line may start with before the program it runs.
_SHELL_WORDS = {"exec", "env", "command", "nohup"}


def _record_program(event: str, args: tuple[object, ...]) -> None:
    if event not in ("subprocess.Popen", "os.exec", "os.posix_spawn"):
        return
    executable, argv = args[0], args[1]
    try:
        words = [os.fsdecode(word) for word in argv] if isinstance(argv, list | tuple) else []
        if isinstance(argv, str | bytes):
            words = [os.fsdecode(argv)]
        program = os.fsdecode(executable) if executable else (words[0] if words else "")
        if not program:
            return
        _started_programs.add(program)
        # `sh -c "prog ..."`: the program the shell runs counts too
        if os.path.basename(program) in _SHELLS and len(words) > 2 and words[1] == "-c":
            first = words[2].split()
            while first and (first[0] in _SHELL_WORDS or "=" in first[0]):
                first = first[1:]
            if first:
                _started_programs.add(first[0])
    except Exception:  # an audit hook must never break the call it watches
        pass


sys.addaudithook(_record_program)


def pytest_testnodedown(node: Any, error: object) -> None:
    """Under pytest-xdist: a worker hands the programs its tests started to the controller."""
    _started_programs.update(getattr(node, "workeroutput", {}).get("started_programs", ()))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when it started a program that a fresh machine would not have."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: the controller checks
        workeroutput["started_programs"] = sorted(_started_programs)
        return
    if not _started_programs or not shutil.which("dpkg-query"):
        return
    checker = _load_script("system_packages")
    gaps = checker.gaps(_started_programs)
    if gaps:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = "\n  ".join(str(gap) for gap in gaps)
        message = f"programs the tests started that `make setup` does not install:\n  {lines}"
        if reporter is not None:
            reporter.write_line(message, red=True)
        else:  # pragma: no cover - without the terminal reporter
            print(message, file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- how pytest-xdist shares the files out (`make test` runs two workers) --------------

#: Files whose tests must run on one worker, one after another, and not beside each other:
#: each of these starts a Ray cluster of several nodes, and two at once would share the
#: machine's cores with each other as well as with the other worker's tests.
ONE_WORKER_GROUPS = {
    "ray clusters": (
        "plugins/ray/tests/",
        "apps/server/tests/test_providers.py",
        "apps/server/tests/test_env_pool.py",
        "apps/server/tests/test_ray_head_loss.py",
    ),
}


#: The longest of those units (minutes, where most files take seconds): handed out
#: first, so that no worker is left running one of them alone at the end.
LONGEST_FIRST = (
    "ray clusters",
    "tests/test_docs_commands.py",
    "apps/server/tests/test_openenv_mcp_client.py",
    "tests/test_wheels.py",
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``--dist loadfile``: whole files go to a worker (so module fixtures such as a
    display or a browser start once), the files of a group in :data:`ONE_WORKER_GROUPS`
    all go to the same one, and the units in :data:`LONGEST_FIRST` go out first."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):  # type: ignore[misc]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            for group, prefixes in ONE_WORKER_GROUPS.items():
                if nodeid.startswith(prefixes):
                    return group
            return str(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the queue is complete by the first assignment
                self.ordered = True
                for scope in reversed(LONGEST_FIRST):
                    if scope in self.workqueue:
                        self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return Scheduling(config, log)


def _load_script(name: str) -> Any:
    path = Path(__file__).parent / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"viewfinder_scripts_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
