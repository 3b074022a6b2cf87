#!/usr/bin/env bash
# Checks the built Ferry packages without installing them: lintian (no error, no warning), ferry holds
# exactly the files of data/install-files.list (the list `make install` uses) but the plugins, ferry-kde
# exactly its plugins, each plus Debian's own documentation, the desktop files (the application's,
# Thunar's entry, the autostart entry) pass desktop-file-validate, the metainfo passes `appstreamcli validate --no-net`, and there are no
# maintainer scripts (triggers do that work).
# scripts/build-deb.sh runs this on every package it builds; the tools come from there.
#
#   scripts/check-deb-contents.sh FERRY.deb FERRY-KDE.deb
set -euo pipefail

(($# == 2)) || { echo "usage: $0 FERRY.deb FERRY-KDE.deb" >&2; exit 64; }
deb=$(realpath "$1")
kde_deb=$(realpath "$2")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app=io.github.ferryshare.Ferry
failures=0
pass() { printf '  ok    %s\n' "$*" >&2; }
fail() { printf '  FAIL  %s\n' "$*" >&2; failures=$((failures + 1)); }

tree=$(mktemp -d)
kde_tree=$(mktemp -d)
trap 'rm -rf "$tree" "$kde_tree"' EXIT
dpkg-deb -x "$deb" "$tree"
dpkg-deb -e "$deb" "$tree/DEBIAN"
dpkg-deb -x "$kde_deb" "$kde_tree"
dpkg-deb -e "$kde_deb" "$kde_tree/DEBIAN"

status=0
out=$(lintian --fail-on error,warning "$deb" "$kde_deb" 2>&1) || status=$?
# lintian says this whenever it runs as root (as in CI); it is not about the package.
out=$(grep -v '^running with root privileges is not recommended!$' <<<"$out" || true)
if ((status == 0)); then
    pass "lintian: no errors, no warnings${out:+ (other findings below)}"
else
    fail "lintian reports errors or warnings (below)"
fi
[[ -z $out ]] || printf '%s\n' "$out" | sed 's/^/        /' >&2

# Man pages are compressed by dh_compress; Debian adds its copyright, changelog and lintian overrides.
listed=$("$repo/scripts/install-files.sh" --prefix /usr --list --kinds | sed 's|^\([a-z]* /usr/share/man/.*\)$|\1.gz|')
expected=$(awk '$1 != "plugin" { print $2 }' <<<"$listed"
    printf '%s\n' /usr/share/doc/ferry/copyright /usr/share/doc/ferry/changelog.gz /usr/share/lintian/overrides/ferry)
kde_expected=$(awk '$1 == "plugin" { print $2 }' <<<"$listed"
    printf '%s\n' /usr/share/doc/ferry-kde/copyright /usr/share/doc/ferry-kde/changelog.gz)
# Everything a package installs, wherever it goes (the autostart entry lives under /etc).
files_of() { (cd "$1" && find . -path ./DEBIAN -prune -o ! -type d -print | sed 's|^\.||'); }
if diff=$(diff <(sort <<<"$expected") <(files_of "$tree" | sort)); then
    pass "ferry holds exactly the files of data/install-files.list but the plugins"
else
    fail "ferry's files differ from data/install-files.list (< list only, > package only): $diff"
fi
if diff=$(diff <(sort <<<"$kde_expected") <(files_of "$kde_tree" | sort)); then
    pass "ferry-kde holds exactly the plugins of data/install-files.list"
else
    fail "ferry-kde's files differ from the plugins of data/install-files.list (< list only, > package only): $diff"
fi

# The autostart entry is validated too when the package has one.
autostart=$(cd "$tree" && find etc/xdg/autostart -name '*.desktop' 2>/dev/null || true)
for file in "usr/share/applications/$app.desktop" "usr/share/Thunar/sendto/$app.desktop" $autostart; do
    if out=$(desktop-file-validate "$tree/$file" 2>&1) && [[ -z $out ]]; then
        pass "desktop-file-validate /$file"
    else
        fail "desktop-file-validate /$file: $out"
    fi
done
if out=$(appstreamcli validate --no-net "$tree/usr/share/metainfo/$app.metainfo.xml" 2>&1); then
    pass "appstreamcli validate --no-net $app.metainfo.xml"
else
    fail "appstreamcli validate --no-net $app.metainfo.xml: $out"
fi

# The desktop database, MIME, icon and man caches are updated by the triggers of the packages that own
# them, so Ferry needs no maintainer script; having none also proves none reaches into a home directory.
scripts=$(cd "$tree/DEBIAN" && ls preinst postinst prerm postrm 2>/dev/null; cd "$kde_tree/DEBIAN" &&
    ls preinst postinst prerm postrm 2>/dev/null || true)
if [[ -z $scripts ]]; then
    pass "no maintainer scripts: the caches are the triggers' work"
else
    fail "maintainer scripts appeared (" $scripts "): check that they are needed and leave home directories alone"
fi

((failures == 0)) || { echo "check-deb-contents: $failures check(s) failed" >&2; exit 1; }
