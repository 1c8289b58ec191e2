"""Chromium showing a page of the suite in an app window at the screen's top left;
the page's console lines ``click ...`` and ``saved ...`` go to ``--log``.

    {python} chromium_page.py PAGE --log FOLDER/page.log --profile FOLDER/profile

Chromium is started with its accessibility tree on (``--force-renderer-accessibility``)
so the page's elements are read over AT-SPI, as the task's ``element`` check does.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("page")
parser.add_argument("--log", required=True)
parser.add_argument("--profile", required=True)
parser.add_argument("--size", default="640x480")
args = parser.parse_args()
width, height = args.size.split("x")
chromium = os.environ.get("VIEWFINDER_CHROMIUM") or shutil.which("chromium")
chromium = chromium or shutil.which("chromium-browser")
if chromium is None:
    sys.exit("chromium is not installed: apt-get install chromium")
command = [
    chromium,
    "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-sync",
    "--disable-background-networking", "--disable-component-update", "--mute-audio",
    "--force-renderer-accessibility", f"--user-data-dir={args.profile}",
    "--window-position=0,0", f"--window-size={width},{height}",
    "--enable-logging=stderr", "--log-level=0",
    *(["--no-sandbox"] if os.geteuid() == 0 else []),  # Chromium's sandbox refuses root
    f"--app={Path(args.page).resolve().as_uri()}",
]  # fmt: skip
CONSOLE = re.compile(r':CONSOLE[:(]\d+\)?\] "((?:click|saved) [^"]*)"')
log = open(args.log, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
assert process.stderr is not None
for line in process.stderr:
    found = CONSOLE.search(line)
    if found:
        log.write(found.group(1) + "\n")
sys.exit(process.wait())
