#!/usr/bin/env bash
# Checks an installed Ferry's desktop integration against the real tools:
# desktop-file-validate, appstreamcli, the D-Bus service file, and GIO offering Ferry in
# "Open With" for a spread of file types and for ferry: links.
#
#   scripts/check-desktop-integration.sh PREFIX      (after `make install PREFIX=PREFIX`)
set -euo pipefail

prefix=${1:?usage: $0 PREFIX}
prefix=$(cd "$prefix" && pwd)
app=io.github.ferryshare.Ferry
share="$prefix/share"
failures=0
pass() { printf '  ok    %s\n' "$*"; }
fail() { printf '  FAIL  %s\n' "$*"; failures=$((failures + 1)); }

echo "Desktop integration of the Ferry installed in $prefix"

desktop="$share/applications/$app.desktop"
if out=$(desktop-file-validate "$desktop" 2>&1) && [[ -z $out ]]; then
    pass "desktop-file-validate $app.desktop"
else
    fail "desktop-file-validate $app.desktop: $out"
fi

if out=$(appstreamcli validate --no-net "$share/metainfo/$app.metainfo.xml" 2>&1); then
    pass "appstreamcli validate --no-net $app.metainfo.xml"
else
    fail "appstreamcli validate --no-net $app.metainfo.xml: $out"
fi

service=$(grep -l "^Name=$app\$" "$share"/dbus-1/services/*.service 2>/dev/null || true)
exec_line=$(grep '^Exec=' "$service" 2>/dev/null || true)
if [[ $exec_line == "Exec=$prefix/bin/ferry service" && -x $prefix/bin/ferry ]]; then
    pass "D-Bus service file starts $prefix/bin/ferry service"
else
    fail "D-Bus service file for $app: expected Exec=$prefix/bin/ferry service, found '${exec_line:-no file}'"
fi

if grep -q "^Exec=$prefix/bin/ferry open %U\$" "$desktop"; then
    pass "desktop file Exec= falls back to $prefix/bin/ferry open %U"
else
    fail "desktop file Exec= does not point at $prefix/bin/ferry"
fi

# GIO reads MimeType= only through mimeinfo.cache: without update-desktop-database (which
# `make install` and the package's trigger run) it offers Ferry for nothing at all.
if [[ -f $share/applications/mimeinfo.cache ]]; then
    pass "mimeinfo.cache exists"
else
    fail "no $share/applications/mimeinfo.cache: run update-desktop-database $share/applications"
fi

# GIO, as a file manager sees it: this prefix first, and no user's own mimeapps.list in the way.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_DATA_DIRS="$share:/usr/local/share:/usr/share" XDG_DATA_HOME="$scratch/data" \
       XDG_CONFIG_HOME="$scratch/config" XDG_CONFIG_DIRS="$scratch/config-dirs"
for type in text/plain image/png image/jpeg application/pdf video/mp4 audio/ogg \
            application/zip application/x-shellscript application/octet-stream x-scheme-handler/ferry; do
    recommended=$(gio mime "$type" | sed -n '/^Recommended applications:/,$p')
    if grep -q "$app.desktop" <<<"$recommended"; then
        pass "gio mime $type recommends Ferry"
    else
        fail "gio mime $type does not recommend Ferry"
    fi
done

if ((failures)); then
    echo "$failures check(s) failed"
    exit 1
fi
