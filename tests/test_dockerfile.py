"""The server's image installs what a session needs at run time.

No Docker engine runs where the tests run, so the image is not built here: this reads
the Dockerfile's `apt-get install` and checks it against the Debian packages that own
the programs a served session starts (the X server, bubblewrap for the sandbox, ffmpeg
for videos), as this machine's dpkg names them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# what `viewfinder serve` starts for a session: its display, its sandbox, its videos
RUNTIME_PROGRAMS = ("Xvfb", "bwrap", "ffmpeg")


def apt_packages(dockerfile: str) -> set[str]:
    """The packages of every `apt-get install` in ``dockerfile`` (continued lines joined)."""
    joined = dockerfile.replace("\\\n", " ")
    packages: set[str] = set()
    for match in re.finditer(r"apt-get install ([^&\n]*)", joined):
        packages |= {word for word in shlex.split(match.group(1)) if not word.startswith("-")}
    return packages


def owning_package(program: str) -> str:
    path = shutil.which(program)
    assert path is not None, f"{program} is not installed; run `make setup`"
    found = subprocess.run(
        ["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True, check=True
    )
    return found.stdout.split(":", 1)[0]


def test_the_reader_finds_every_package_of_a_continued_install() -> None:
    text = (
        "RUN apt-get update \\\n && apt-get install -y --no-install-recommends \\\n"
        " a b \\\n c && rm x"
    )
    assert apt_packages(text) == {"a", "b", "c"}


@pytest.mark.parametrize("program", RUNTIME_PROGRAMS)
def test_the_image_installs_the_package_of_each_program_a_session_starts(program: str) -> None:
    installed = apt_packages((ROOT / "Dockerfile").read_text())
    assert owning_package(program) in installed, (program, sorted(installed))


def test_the_image_starts_the_server_under_an_init_that_reaps_orphans() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "tini" in apt_packages(text)
    assert re.search(r'^ENTRYPOINT \["tini", "--"\]', text, re.MULTILINE)
