"""Which Debian package a program comes from, and whether `make setup` installs it.

`scripts/setup-system.sh` holds the one list of Debian packages that `make setup`
installs (its ``packages=(...)`` line). Every program that the tests, the demo and the
benchmarks start must come from one of them, or from a package they depend on: a
program installed by hand on one machine makes CI green there and `make test` red on
a fresh one. The root conftest records every program the test run starts and checks
it here at the end of the run; tests/test_system_packages.py checks the programs named
in the demo's and the benchmarks' sources.

    python scripts/system_packages.py xsetroot import chromium
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUP_SCRIPT = ROOT / "scripts" / "setup-system.sh"

#: Programs that are not system packages' business: the workspace's environment and
#: files, and scripts the tests write to temporary folders. The interpreter is checked
#: by path below. Anything else that no Debian package installed counts as hand-installed.
_OWN_FOLDERS = [sys.prefix, str(ROOT), "/tmp", "/dev/shm", os.path.realpath(tempfile.gettempdir())]
_OWN_PREFIXES = tuple(dict.fromkeys(folder + os.sep for folder in _OWN_FOLDERS))
#: Programs that the setup script installs without apt.
_OTHER_INSTALLS = {"uv"}  # `python3 -m pip install uv` in scripts/setup-system.sh
#: Programs the tests only probe for: they check the behaviour both with and without
#: them (``docker``: ``CodingEnv.from_docker_image`` explains a missing engine).
_PROBED = {"docker"}
_INTERPRETERS = {
    os.path.realpath(sys.executable),
    os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
}


def setup_packages(script: Path = SETUP_SCRIPT) -> list[str]:
    """The Debian packages that ``make setup`` installs, read from the setup script."""
    match = re.search(r"^packages=\((.*)\)", script.read_text(), re.MULTILINE)
    if match is None:
        raise ValueError(f"{script} has no packages=(...) line")
    return match.group(1).split()


@functools.cache
def _depends(package: str) -> frozenset[str]:
    """The packages ``package`` depends on (one level), as apt installs them with it."""
    result = subprocess.run(
        ["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package],
        capture_output=True,
        text=True,
        check=False,
    )
    names = set()
    for alternative in re.split(r"[,|]", result.stdout):
        words = alternative.split()
        if words:
            names.add(words[0].split(":")[0])
    return frozenset(names)


def provided_packages(packages: Iterable[str]) -> set[str]:
    """``packages`` and the packages they depend on."""
    found = set(packages)
    for package in list(found):
        found |= _depends(package)
    return found


@functools.cache
def _essential(package: str) -> bool:
    """Debian's essential packages (coreutils, bash...) are on every Debian system."""
    result = subprocess.run(
        ["dpkg-query", "-W", "-f=${Essential} ${Priority}", package],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.split()[:1] == ["yes"] or "required" in result.stdout.split()


@functools.cache
def owning_package(path: str) -> str | None:
    """The Debian package that installed ``path``, or None."""
    # With merged /usr, /bin/x is /usr/bin/x on disk and dpkg may know either name.
    names = [path, os.path.realpath(path)]
    names += [name.removeprefix("/usr") for name in names if name.startswith("/usr/bin/")]
    for name in dict.fromkeys(names):
        result = subprocess.run(
            ["dpkg-query", "-S", name], capture_output=True, text=True, check=False
        )
        for line in result.stdout.splitlines():
            if not line.startswith("diversion by"):
                return line.split(":")[0].split(",")[0].strip()
    return None


@dataclass(frozen=True)
class Gap:
    """A program started that ``make setup`` would not install on a fresh machine."""

    program: str
    path: str | None
    package: str | None

    def __str__(self) -> str:
        if self.path is None:
            return f"{self.program}: not installed; add the Debian package providing it"
        if self.package is None:
            return (
                f"{self.program} ({self.path}): installed by hand, not by a Debian package; "
                "make the tests use a packaged program"
            )
        return (
            f"{self.program} ({self.path}) comes from Debian package {self.package!r}, "
            f"which scripts/setup-system.sh does not install; add it to packages=(...)"
        )


def gaps(programs: Iterable[str], packages: Iterable[str] | None = None) -> list[Gap]:
    """The programs among ``programs`` (names or paths) that a fresh machine would lack."""
    provided = provided_packages(setup_packages() if packages is None else packages)
    found = []
    for program in sorted(set(programs)):
        if os.path.basename(program) in _OTHER_INSTALLS | _PROBED:
            continue
        # a script a test wrote to a temporary folder may be gone by now
        if os.path.isabs(program) and program.startswith(_OWN_PREFIXES):
            continue
        path = program if os.path.isabs(program) else shutil.which(program)
        if path is None:  # the workspace's own commands, when its bin folder is not on PATH
            path = shutil.which(program, path=os.path.join(sys.prefix, "bin"))
        if path is None or not os.path.exists(path):
            found.append(Gap(program, None, None))
            continue
        resolved = os.path.realpath(path)
        if resolved in _INTERPRETERS or resolved.startswith(_OWN_PREFIXES):
            continue
        if path.startswith(_OWN_PREFIXES):
            continue
        package = owning_package(path)
        if package is not None and (package in provided or _essential(package)):
            continue
        if package is None or package not in provided:
            found.append(Gap(os.path.basename(program), path, package))
    return found


def main(argv: list[str]) -> int:
    problems = gaps(argv)
    for gap in problems:
        print(gap)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
