#!/usr/bin/env bash
# Installs what building and testing Ferry needs on Debian 12, the test virtualenv, and a real
# Synapse in a virtualenv of its own (the integration tests' homeserver).
# Idempotent and quick when everything is there: it only asks apt for missing packages, and a stamp
# in each virtualenv says it is complete.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-test"
# Synapse runs from its own virtualenv so its many pinned dependencies never meet the test
# runner's. The version and every dependency are pinned; all install from wheels (no compiler).
synapse_venv="$root/.venv-synapse"
synapse_version=1.163.2
synapse_requirements="$root/scripts/synapse-requirements.txt"

packages=(
    # build
    pkg-config libglib2.0-dev libdbus-1-dev libsqlite3-dev libsecret-1-dev libgtk-4-dev libadwaita-1-dev
    libgdk-pixbuf-2.0-dev  # ferry-thumbnail reads pictures with GdkPixbuf
    libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev  # ferry-media reads videos and sounds with GStreamer
    # GStreamer's demuxers and decoders for what phones and cameras record (MP4 and H.264, AAC, WebM,
    # Ogg, MP3), which the package recommends; plugins-ugly's x264enc and the tools make the tests' videos
    gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-libav gstreamer1.0-plugins-ugly gstreamer1.0-tools
    libstdc++-12-dev  # linked statically into the release binaries (see the Makefile)
    gettext           # xgettext, msgmerge, msgfmt: po/ and the installed catalogues
    locales           # the German, French and Hebrew locales the translation tests run under
    # the desktop parts the tests drive for real
    dbus-daemon dbus-bin libglib2.0-bin desktop-file-utils shared-mime-info xdg-utils appstream
    sqlite3 gnome-keyring xvfb at-spi2-core imagemagick curl openssl
    valgrind  # make bench-check counts a cold start's instructions with callgrind
    time      # GNU time: make bench's peak memory of a helper process
    heif-gdk-pixbuf webp-pixbuf-loader  # the loaders for what phones send (the package recommends them)
    python3-nautilus gir1.2-nautilus-4.0  # GNOME Files' extension, loaded as Nautilus loads it
    # KDE's Share menu: the Purpose plugin's build, and Purpose's own process that runs its jobs
    cmake extra-cmake-modules qtbase5-dev libkf5coreaddons-dev libkf5kio-dev libkf5purpose-dev libkf5purpose-bin
    breeze-icon-theme  # KDE's icons, in the Share menu's picture (data/screenshots/kde-share-menu.png)
    fonts-noto-color-emoji  # the emoji of a verification, in the UI tests' screenshots
    # the integration tests (pytest in a venv that sees Debian's pyatspi and gi)
    python3-venv python3-pyatspi python3-gi
    # non-local files for real: GVfs's sftp backend, and an OpenSSH server the tests run on loopback
    gvfs gvfs-backends openssh-client openssh-server
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
    # The tests start their own sshd, on loopback with a key made for them: a system-wide one that
    # installing the package switched on is not wanted, so it is switched off again.
    if [[ " ${missing[*]} " == *" openssh-server "* && -d /run/systemd/system ]]; then
        "${sudo[@]}" systemctl disable --now ssh.service ssh.socket 2>/dev/null || true
    fi
fi

# The locales the tests run Ferry in: German and French (the translations), Hebrew (a right-to-left
# layout; GTK's own catalogue is what turns it). Compiled once into the system's locale archive.
test_locales=(de_DE fr_FR he_IL)
have_locales=" $(locale -a 2>/dev/null | tr '\n' ' ') "
for name in "${test_locales[@]}"; do
    if [[ $have_locales != *" $name.utf8 "* ]]; then
        echo "deps: compiling the locale $name.UTF-8"
        sudo=()
        ((EUID == 0)) || sudo=(sudo)
        "${sudo[@]}" localedef -i "$name" -c -f UTF-8 -A /usr/share/locale/locale.alias "$name.UTF-8"
    fi
done

# --system-site-packages: the UI tests need python3-pyatspi and python3-gi from Debian.
if ! "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
    echo "deps: creating the test virtualenv $venv"
    rm -rf "$venv"
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pytest
fi
test_requirements="$root/scripts/test-requirements.txt"
test_stamp="$venv/.ferry-stamp"
test_want="$(sha256sum "$test_requirements" | cut -d' ' -f1)"
if [[ "$(cat "$test_stamp" 2>/dev/null)" != "$test_want" ]]; then
    echo "deps: installing the test runner's packages (scripts/test-requirements.txt)"
    "$venv/bin/pip" install -q --disable-pip-version-check --only-binary :all: -r "$test_requirements"
    echo "$test_want" >"$test_stamp"
fi

# The stamp names the requirements' content: editing the pins reinstalls, anything else is instant.
synapse_stamp="$synapse_venv/.ferry-stamp"
synapse_want="matrix-synapse==$synapse_version $(sha256sum "$synapse_requirements" | cut -d' ' -f1)"
if [[ ! -x $synapse_venv/bin/python || "$(cat "$synapse_stamp" 2>/dev/null)" != "$synapse_want" ]]; then
    echo "deps: creating the Synapse virtualenv $synapse_venv (matrix-synapse $synapse_version)"
    rm -rf "$synapse_venv"
    /usr/bin/python3 -m venv "$synapse_venv"
    "$synapse_venv/bin/pip" install -q --disable-pip-version-check --only-binary :all: \
        -r "$synapse_requirements" "matrix-synapse==$synapse_version"
    "$synapse_venv/bin/python" -c "import importlib.metadata as m, synapse.app.homeserver, sys
sys.exit(m.version('matrix-synapse') != '$synapse_version')"
    echo "$synapse_want" >"$synapse_stamp"
fi

# Two matrix-nio clients, each in a virtualenv of its own, read what Ferry sends into encrypted rooms
# the way clients we did not write would (Tests/integration/nioreader.py): nio 0.25 does Olm and
# Megolm with libolm (python-olm), nio 0.26 with vodozemac. Their pins clash with each other (nio
# 0.25 wants cachetools 5, 0.26 has 8), so neither shares a virtualenv with the other, the test
# runner or Synapse; and no --system-site-packages, so nothing of Debian's Python leaks in. The
# requirements pin matrix-nio itself and every dependency; the stamp works as Synapse's does.
for nio in nio25 nio26; do
    nio_venv="$root/.venv-$nio"
    nio_requirements="$root/scripts/$nio-requirements.txt"
    nio_stamp="$nio_venv/.ferry-stamp"
    nio_want="$(sha256sum "$nio_requirements" | cut -d' ' -f1)"
    if [[ ! -x $nio_venv/bin/python || "$(cat "$nio_stamp" 2>/dev/null)" != "$nio_want" ]]; then
        echo "deps: creating the matrix-nio virtualenv $nio_venv (scripts/$nio-requirements.txt)"
        rm -rf "$nio_venv"
        /usr/bin/python3 -m venv "$nio_venv"
        "$nio_venv/bin/pip" install -q --disable-pip-version-check --only-binary :all: -r "$nio_requirements"
        # Without its e2e dependencies nio still imports, and silently cannot decrypt: ask it.
        "$nio_venv/bin/python" -c "import nio.crypto, sys; sys.exit(not nio.crypto.ENCRYPTION_ENABLED)"
        echo "$nio_want" >"$nio_stamp"
    fi
done
