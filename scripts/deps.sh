#!/usr/bin/env bash
# Installs what building and testing Ferry needs on Debian 12, and the test virtualenv.
# Idempotent and quick when everything is there: it only asks apt for missing packages.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-test"

packages=(
    # build
    pkg-config libglib2.0-dev libdbus-1-dev libsqlite3-dev libsecret-1-dev libgtk-4-dev
    # the desktop parts the tests drive for real
    dbus-daemon dbus-bin libglib2.0-bin desktop-file-utils shared-mime-info xdg-utils appstream
    sqlite3 gnome-keyring xvfb at-spi2-core
    # the integration tests (pytest in a venv that sees Debian's pyatspi and gi)
    python3-venv python3-pyatspi python3-gi
)

installed=" $(dpkg-query -W -f='${Package}:${db:Status-Status} ' "${packages[@]}" 2>/dev/null || true)"
missing=()
for pkg in "${packages[@]}"; do
    [[ $installed == *" $pkg:installed "* ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
    echo "deps: installing ${missing[*]}"
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# --system-site-packages: the UI tests need python3-pyatspi and python3-gi from Debian.
if ! "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
    echo "deps: creating the test virtualenv $venv"
    rm -rf "$venv"
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pytest
fi
