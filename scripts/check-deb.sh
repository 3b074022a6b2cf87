#!/usr/bin/env bash
# Proves the Debian packages work on a clean Debian 12: builds ferry and ferry-kde (scripts/build-deb.sh,
# which also lints them), installs them with apt into a fresh bookworm chroot (apt resolves the
# dependencies), then, on a session bus inside (scripts/check-deb-session.sh), shares a PNG through
# `gio open` and D-Bus activation, runs the file managers' entries on two files and KDE's Share menu on a
# PNG and a link, checks `ferry --version` and `man -w ferry`; finally purges both packages and checks
# that nothing of Ferry's is left in /usr, /etc or the desktop database.
# `make check-deb` and .ci/run call this.
#
#   scripts/check-deb.sh [--deb FERRY.deb --deb FERRY-KDE.deb] [--prepare] [--rebuild-base] [--keep]
#
#   --deb FILE       check these packages (both) instead of building them with scripts/build-deb.sh
#   --prepare        only make sure the cached base chroot exists (warms a CI cache), then stop
#   --rebuild-base   throw the cached base chroot away and bootstrap a new one
#   --keep           leave the run's chroot in place for a look afterwards (mounts are removed all the same)
#
# The minbase chroot is bootstrapped once and cached in $FERRY_CHECK_DEB_CACHE (default
# /var/cache/ferry-check-deb); every run works on a fresh copy of it, so a run never sees the last one's
# packages. Downloaded .debs are cached there too. The mirror is the one this machine's apt uses for bookworm
# (override with FERRY_DEBIAN_MIRROR). Needs root for debootstrap, mount and chroot: the package is built as
# the calling user, the rest runs through sudo when the caller is not root.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
suite=bookworm
cache=${FERRY_CHECK_DEB_CACHE:-/var/cache/ferry-check-deb}
base="$cache/$suite-minbase"
base_stamp="$base/.ferry-check-deb-base"
archives="$cache/archives"

debs=()
prepare=false
rebuild_base=false
keep=false
while (($#)); do
    case "$1" in
        --deb) debs+=("$(realpath "$2")"); shift 2 ;;
        --prepare) prepare=true; shift ;;
        --rebuild-base) rebuild_base=true; shift ;;
        --keep) keep=true; shift ;;
        -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) echo "check-deb: unknown argument: $1 (see --help)" >&2; exit 64 ;;
    esac
done

say() { printf '\n==> %s\n' "$*" >&2; }
fail() { printf 'check-deb: FAIL: %s\n' "$*" >&2; exit 1; }
started=$SECONDS

# The packages are built by the caller (it needs their Swift toolchain and SwiftPM cache), and so is the
# tests' purpose-driver that runs KDE's Share menu in the chroot; only then root. Under sudo (this
# script's own run below, or a person's) root builds nothing in the caller's tree: all must be there.
if ! $prepare; then
    driver=$repo/build/kde-purpose/purpose-driver
    if ((EUID == 0)) && [[ -n ${SUDO_USER-} ]]; then
        ((${#debs[@]})) && [[ -x $driver ]] ||
            fail "run make check-deb as yourself: it builds as you, then asks sudo for the chroot"
    else
        if ((${#debs[@]} == 0)); then
            say "building the packages"
            built=$("$here/build-deb.sh")
            mapfile -t debs <<<"$built"
        fi
        say "building the tests' purpose-driver"
        "$here/build-kde-plugin.sh" --with-driver >&2
        [[ -x $driver ]] ||
            fail "no build/kde-purpose/purpose-driver to run KDE's Share menu with (its build dependencies: make deps)"
    fi
fi
if ((EUID != 0)); then
    args=()
    for deb in "${debs[@]}"; do args+=(--deb "$deb"); done
    $prepare && args+=(--prepare)
    $rebuild_base && args+=(--rebuild-base)
    $keep && args+=(--keep)
    exec sudo FERRY_CHECK_DEB_CACHE="$cache" ${FERRY_DEBIAN_MIRROR:+FERRY_DEBIAN_MIRROR="$FERRY_DEBIAN_MIRROR"} \
        "$0" "${args[@]}"
fi

need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[[ -e /usr/share/keyrings/debian-archive-keyring.gpg ]] || need+=(debian-archive-keyring)
command -v readelf >/dev/null || need+=(binutils)
if ((${#need[@]})); then
    say "installing ${need[*]}"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# The repository URI this machine's apt uses for a suite, so the chroot downloads from the same place.
apt_uri() {
    apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
        awk -v suite="$1" '$2 == suite { print $1; exit }' | sed 's:/*$::'
}
mirror=${FERRY_DEBIAN_MIRROR:-$(apt_uri "$suite")}
mirror=${mirror:-http://deb.debian.org/debian}
security=$(apt_uri "$suite-security")
security=${security:-${mirror%/debian}/debian-security}

make_base() {
    local tmp="$base.new"
    say "bootstrapping a $suite minbase chroot from $mirror (cached in $cache)"
    rm -rf "$tmp"
    mkdir -p "$cache"
    debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >&2 ||
        { cat "$tmp/debootstrap/debootstrap.log" >&2 2>/dev/null; fail "debootstrap failed"; }
    cat >"$tmp/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF
    # Package scripts must not start daemons inside the chroot.
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod 755 "$tmp/usr/sbin/policy-rc.d"
    # An ordinary desktop user, whose session the check runs in.
    chroot "$tmp" /usr/sbin/groupadd --gid 1000 tester
    chroot "$tmp" /usr/sbin/useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash tester
    rm -rf "$tmp/var/cache/apt/archives/"*.deb
    touch "$tmp/.ferry-check-deb-base"
    rm -rf "$base"
    mv "$tmp" "$base"
}

if $rebuild_base || [[ ! -e "$base_stamp" ]]; then
    t=$SECONDS
    make_base
    say "base chroot ready in $((SECONDS - t)) s"
else
    say "using the cached base chroot $base"
fi
$prepare && exit 0

((${#debs[@]} == 2)) || fail "two packages to check (ferry and ferry-kde), not ${#debs[@]}"
for deb in "${debs[@]}"; do [[ -f "$deb" ]] || fail "no package at '$deb'"; done
deb=${debs[0]}
mkdir -p "$archives/partial"
run=$(mktemp -d "$cache/run.XXXXXX")
root="$run/root"

# Everything mounted into the chroot, innermost last; teardown unmounts in reverse and deletes the copy only
# when nothing is mounted under it any more.
mounts=()
mount_into() { # mount_into TARGET mount-args…
    local target="$root$1"; shift
    mount "$@" "$target"
    mounts+=("$target")
}
chroot_processes() {
    local p
    for p in /proc/[0-9]*; do
        [[ "$(readlink "$p/root" 2>/dev/null)" == "$root" ]] && echo "${p#/proc/}"
    done
    return 0
}
teardown() {
    local status=$? i pids
    set +e
    pids=$(chroot_processes)
    [[ -n "$pids" ]] && kill $pids 2>/dev/null && sleep 0.5
    pids=$(chroot_processes)
    [[ -n "$pids" ]] && kill -9 $pids 2>/dev/null && sleep 0.2
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        umount "${mounts[i]}" || umount -l "${mounts[i]}"
    done
    if grep -q " $root[/ ]" /proc/mounts; then
        echo "check-deb: something is still mounted under $root; not deleting it" >&2
    elif $keep; then
        echo "check-deb: the chroot is kept at $root" >&2
    else
        rm -rf "$run"
    fi
    exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

say "copying the base chroot"
t=$SECONDS
cp -a "$base" "$root"
mount_into /proc -t proc proc
mount_into /dev --bind /dev
mount_into /dev/pts --bind /dev/pts
mount_into /var/cache/apt/archives --bind "$archives"
echo "copied in $((SECONDS - t)) s" >&2

in_chroot() { # runs a command in the chroot with a clean environment, as root
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# The desktop a person installs Ferry on already has these: GIO's tools, a session bus daemon, man, and
# the desktop database and MIME tools whose triggers must pick Ferry up when it is installed.
say "installing the desktop tools the check drives Ferry with"
t=$SECONDS
in_chroot apt-get update -q >&2
in_chroot apt-get install -y -q --no-install-recommends libglib2.0-bin dbus-daemon man-db \
    desktop-file-utils shared-mime-info >&2
echo "installed in $((SECONDS - t)) s" >&2

say "installing $(basename -a "${debs[@]}" | tr '\n' ' ')with apt"
t=$SECONDS
cp "${debs[@]}" "$root/tmp/"
in_chroot apt-get install -y -q $(printf '/tmp/%s ' $(basename -a "${debs[@]}")) >&2
for package in ferry ferry-kde; do
    [[ $(in_chroot dpkg-query -W -f '${db:Status-Status}' $package) == installed ]] || fail "$package is not installed"
done
echo "installed in $((SECONDS - t)) s" >&2

say "every shared library the installed executables and the plugin need is there"
missing=$(in_chroot sh -c 'for f in $(dpkg -L ferry ferry-kde); do
        [ -f "$f" ] && { [ -x "$f" ] || [ "${f%.so}" != "$f" ]; } && ldd "$f" 2>/dev/null; done' |
    grep 'not found' || true)
[[ -z "$missing" ]] || fail "missing libraries: $missing"

# The translations: a catalogue per language of po/LINGUAS, and the desktop entry that "Open With"
# shows translated from them.
say "the package carries the translations"
for lang in $(grep -v -e '^#' -e '^$' "$here/../po/LINGUAS"); do
    mo=/usr/share/locale/$lang/LC_MESSAGES/ferry.mo
    in_chroot dpkg -L ferry | grep -qx "$mo" || fail "$mo is not in the package"
    # GNU .mo files start with the magic number 0x950412de (either byte order).
    magic=$(od -An -tx1 -N4 "$root$mo" | tr -d ' ')
    [[ $magic == de120495 || $magic == 950412de ]] || fail "$mo is not a GNU message catalogue ($magic)"
    grep -q "^Name\[$lang\]=" "$root/usr/share/applications/io.github.ferryshare.Ferry.desktop" ||
        fail "the desktop entry has no Name[$lang]"
done

# The release link's choices (Makefile, RELEASE_LINK_FLAGS) are what keep the idle service small: the
# Swift runtime's libstdc++ linked in (the shared one was 1.4 MB of resident tables) and no exported
# symbol table (2 MB read at every start). A toolchain or flag change that loses them fails here.
say "the packaged executables link libstdc++ statically and export no symbols"
for exe in usr/bin/ferry usr/libexec/ferry/ferry-ui usr/libexec/ferry/ferry-thumbnail usr/libexec/ferry/ferry-media; do
    [[ -f "$root/$exe" ]] || fail "/$exe is not in the package"
    if readelf -d "$root/$exe" | grep -q 'NEEDED.*libstdc++'; then fail "/$exe needs the shared libstdc++"; fi
    exported=$(readelf --dyn-syms -W "$root/$exe" | awk 'NR > 3 && $7 != "UND"' | wc -l)
    ((exported <= 16)) || fail "/$exe exports $exported dynamic symbols (the release link exports none of its own)"
done

# A desktop with a systemd user session starts Ferry as the unit the D-Bus service file names.
say "the systemd user unit named by the D-Bus service file is installed and valid"
unit=$(sed -n 's/^SystemdService=//p' "$root/usr/share/dbus-1/services/io.github.ferryshare.Ferry.service")
[[ -n "$unit" && -f "$root/usr/lib/systemd/user/$unit" ]] ||
    fail "the D-Bus service file names SystemdService='$unit', which is not in /usr/lib/systemd/user"
in_chroot systemd-analyze verify "/usr/lib/systemd/user/$unit" >&2 || fail "systemd-analyze verify $unit failed"
grep -qx 'BusName=io.github.ferryshare.Ferry' "$root/usr/lib/systemd/user/$unit" ||
    fail "$unit does not wait for the bus name io.github.ferryshare.Ferry"

say "a session: gio open, the file managers' entries, ferry --version, man"
install -m 0755 "$here/check-deb-session.sh" "$root/tmp/check-deb-session.sh"
install -m 0644 "$here/../Tests/integration/nautilusdriver.py" "$root/tmp/nautilusdriver.py"
install -m 0755 "$here/../build/kde-purpose/purpose-driver" "$root/tmp/purpose-driver"
chroot --userspec=1000:1000 "$root" /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
    HOME=/home/tester USER=tester /tmp/check-deb-session.sh "$(dpkg-deb -f "$deb" Version)" ||
    fail "the session check failed"

say "purging the packages"
pids=$(chroot_processes)
[[ -z "$pids" ]] || { kill $pids 2>/dev/null; sleep 0.5; }
in_chroot apt-get purge -y -q ferry ferry-kde >&2
left=$(in_chroot find /usr /etc -iname '*ferry*')
[[ -z "$left" ]] || fail "left in /usr or /etc after purge: $left"
if [[ -f "$root/usr/share/applications/mimeinfo.cache" ]] &&
    grep -q ferryshare "$root/usr/share/applications/mimeinfo.cache"; then
    fail "the desktop database still offers Ferry after purge"
fi
for package in ferry ferry-kde; do
    in_chroot dpkg -s $package >/dev/null 2>&1 && fail "dpkg still knows $package after purge"
done

say "check-deb passed in $((SECONDS - started)) s"
