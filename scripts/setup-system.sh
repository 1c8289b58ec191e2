#!/usr/bin/env bash
# Install what viewfinder needs from the system, only what is missing:
# Debian packages and uv. `packages` is the one list of what the tests, the demo and the
# benchmarks run; the test run checks every program it starts against it
# (scripts/system_packages.py).
set -euo pipefail

packages=(xvfb xdotool x11-utils x11-xserver-utils chromium fonts-dejavu-core fonts-liberation imagemagick scrot libtk8.6 x11-xkb-utils bubblewrap ffmpeg dbus-daemon at-spi2-core python3 python3-gi python3-gi-cairo gir1.2-gtk-3.0 gir1.2-atspi-2.0 python3-pyqt5 gtk-3-examples)

missing=()
for pkg in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done

if ((${#missing[@]})); then
    if ! command -v apt-get >/dev/null; then
        echo "setup: missing system packages: ${missing[*]}; install them with your package manager" >&2
        exit 1
    fi
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null; then sudo="sudo"; else
            echo "setup: need root to install: ${missing[*]}" >&2; exit 1
        fi
    fi
    echo "setup: installing ${missing[*]}"
    # another apt (an unattended upgrade, a second `make setup`) may hold the lock: wait for it
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v uv >/dev/null && ! python3 -m uv --version >/dev/null 2>&1; then
    echo "setup: installing uv"
    python3 -m pip install --quiet uv
fi
