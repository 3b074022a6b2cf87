#!/bin/bash
# The part of check-deb.sh that runs inside the chroot, as an ordinary user with a clean environment:
# a private session bus; `gio open` on a PNG, which must reach Ferry through the desktop database the
# package's triggers built and D-Bus activation; the file managers' entries run as their file managers
# would, on two files at once (GNOME Files' extension through Nautilus's introspection API); KDE's Share
# menu through Purpose; `ferry --version`; the bash completion; `man -w ferry`. Everything comes from the installed
# package: nothing here knows where Ferry lives except through the files it installed.
#
#   check-deb-session.sh EXPECTED-VERSION
set -euo pipefail

expected_version=${1:?usage: $0 EXPECTED-VERSION}
app=io.github.ferryshare.Ferry
fail() { echo "check-deb-session: FAIL: $*" >&2; exit 1; }
ok() { echo "  ok    $*"; }

export XDG_RUNTIME_DIR="/tmp/xdg-runtime-$(id -u)"
export XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share" XDG_STATE_HOME="$HOME/.local/state"
export XDG_DATA_DIRS=/usr/local/share:/usr/share XDG_CONFIG_DIRS=/etc/xdg
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
mkdir -p "$XDG_CONFIG_HOME"

# A plain dbus-daemon, as on a desktop without systemd: it starts Ferry through the service file's Exec=.
bus=$(dbus-daemon --session --fork --print-address=1 --print-pid=1)
export DBUS_SESSION_BUS_ADDRESS=${bus%%$'\n'*}
bus_pid=${bus##*$'\n'}
trap 'kill "$bus_pid" 2>/dev/null || true' EXIT
echo "session bus $DBUS_SESSION_BUS_ADDRESS (pid $bus_pid)"

samples="$HOME/samples"
mkdir -p "$samples"
# A 1×1 RGB PNG, and a second file for the multiple selection.
base64 -d >"$samples/pier.png" <<<'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNQSFgAAAHEASFiX4r9AAAAAElFTkSuQmCC'
echo 'Ferries leave at nine.' >"$samples/timetable.txt"

# --- "Open With": the desktop-file-utils trigger registered Ferry for image/png -------------------
grep -q "^image/png=.*$app.desktop" /usr/share/applications/mimeinfo.cache ||
    fail "the desktop database does not offer Ferry for image/png (the desktop-file-utils trigger did not run?)"
handlers=$(gio mime image/png)
[[ $handlers == *"$app.desktop"* ]] || fail "GIO does not offer Ferry for image/png: $handlers"
ok "the desktop database offers Ferry for image/png"
# What a person does in "Open With" when choosing Ferry for good.
gio mime image/png "$app.desktop" >/dev/null

owner() {
    gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
        --method org.freedesktop.DBus.NameHasOwner "$app"
}
[[ $(owner) == "(false,)" ]] || fail "Ferry was running before gio open"

gio open "$samples/pier.png"

# gio open returns once the Open call is sent; the service commits the share before it replies.
for ((tries = 0; ; tries++)); do
    shares=$(ferry shares --json 2>&1) && [[ $shares == *pier.png* ]] && break
    ((tries < 50)) || fail "no share of pier.png recorded: $shares"
    sleep 0.2
done
grep -Eq '"source" *: *"open"' <<<"$shares" ||
    fail "the share did not arrive through org.freedesktop.Application.Open: $shares"
ok "gio open pier.png: a share recorded through D-Bus activation"
echo "$shares"

# --- The file managers' entries, run the way their file managers run them -------------------------
# Each entry's Exec= line, with its field code (%U: URIs, %F: paths) standing for two selected files.
share_through() { # share_through ENTRY → prints the new share's id
    local word args=()
    read -ra words <<<"$(sed -n 's/^Exec=//p' "$1" | head -n 1)"
    for word in "${words[@]}"; do
        case $word in
            %U) args+=("file://$samples/pier.png" "file://$samples/timetable.txt") ;;
            %F) args+=("$samples/pier.png" "$samples/timetable.txt") ;;
            %*) fail "$1: unexpected field code $word" ;;
            *) args+=("$word") ;;
        esac
    done
    "${args[@]}"
}
for entry in /usr/share/Thunar/sendto/$app.desktop /usr/share/nemo/actions/$app.nemo_action \
    /usr/share/kio/servicemenus/$app.desktop; do
    [[ -f $entry ]] || fail "$entry is not installed"
    id=$(share_through "$entry") || fail "$entry: its Exec= line failed"
    share=$(ferry show "$id" --json)
    [[ $share == *'"pier.png"'* && $share == *'"timetable.txt"'* ]] &&
        grep -Eq '"action" *: *"send-multiple"' <<<"$share" ||
        fail "$entry: the share does not hold both files: $share"
    ok "$entry shares two selected files as one share"
done
[[ -x /usr/share/kio/servicemenus/$app.desktop ]] || fail "the KDE service menu is not executable; KIO would ignore it"
ok "the KDE service menu is executable"

# GNOME Files: the nautilus-python extension, loaded as Nautilus loads it (python3-nautilus came as
# the package's Recommends), asked for a two-file selection's entries, and its entry activated.
extension=/usr/share/nautilus-python/extensions/ferry_share.py
[[ -f $extension ]] || fail "$extension is not installed"
entries=$(python3 /tmp/nautilusdriver.py "$extension" "file://$samples/pier.png" "file://$samples/timetable.txt") ||
    fail "the GNOME Files extension did not load"
[[ $entries == *'"Share with Ferry…"'* ]] || fail "the GNOME Files extension offers no entry: $entries"
count_shares() { ferry shares --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }
before=$(count_shares) || fail "ferry shares --json failed"
python3 /tmp/nautilusdriver.py "$extension" --activate "file://$samples/pier.png" "file://$samples/timetable.txt" \
    >/dev/null || fail "the GNOME Files entry could not be activated"
after=$(count_shares) || fail "ferry shares --json failed"
((after == before + 1)) || fail "activating the GNOME Files entry made $((after - before)) shares, not one"
share=$(ferry shares --json | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)[0]))') ||
    fail "ferry shares --json failed"
[[ $share == *'"pier.png"'* && $share == *'"timetable.txt"'* ]] &&
    grep -Eq '"action" *: *"send-multiple"' <<<"$share" ||
    fail "GNOME Files' entry: the share does not hold both files: $share"
ok "GNOME Files' \"Share with Ferry…\" shares two selected files as one share"

# KDE's Share menu: ferry-kde's Purpose plugin, found and run by Purpose's own model and jobs (the
# tests' purpose-driver does what Spectacle's and Okular's menu do), on a PNG and on a browser's link.
export QT_QPA_PLATFORM=offscreen
purpose() { timeout 60 /tmp/purpose-driver "$@"; }
# The share a job made: the one whose id its result gives, as `ferry shares --json` shows it.
share_of() {
    ferry shares --json | python3 -c '
import json, sys
result = json.loads(sys.argv[1].splitlines()[-1])
[share] = [s for s in json.load(sys.stdin) if s["id"] == result["output"]["ferryShareId"]]
print(json.dumps(share))' "$1"
}
png_input="{\"urls\": [\"file://$samples/pier.png\"], \"mimeType\": \"image/png\"}"
offered=$(purpose list Export "$png_input") || fail "Purpose could not list its alternatives"
[[ $offered == *'"id":"ferryplugin"'* && $offered == *'"name":"Ferry"'* ]] ||
    fail "KDE's Share menu does not offer Ferry for a PNG: $offered"
before=$(count_shares) || fail "ferry shares --json failed"
result=$(purpose run Export "$png_input" ferryplugin) || fail "Ferry's entry in KDE's Share menu failed: $result"
after=$(count_shares) || fail "ferry shares --json failed"
((after == before + 1)) || fail "KDE's Share menu made $((after - before)) shares, not one"
share=$(share_of "$result") || fail "KDE's Share menu: no share with the id its job gave: $result"
[[ $share == *'"name": "pier.png"'* ]] || fail "KDE's Share menu: the share is not the PNG: $share"
result=$(purpose run ShareUrl \
    '{"urls": ["https://example.org/pier"], "title": "The pier", "mimeType": "text/html"}' ferryplugin) ||
    fail "Ferry's entry in KDE's Share menu failed on a link: $result"
share=$(share_of "$result") || fail "KDE's Share menu: no share with the id its job gave: $result"
[[ $share == *'"text": "https://example.org/pier"'* && $share == *'"subject": "The pier"'* ]] ||
    fail "KDE's Share menu: the share is not the link with its title: $share"
ok "KDE's Share menu offers Ferry and shares a PNG and a link through it"

# --- The command line and its manual ---------------------------------------------------------------
version=$(ferry --version)
[[ $version == "ferry $expected_version" ]] || fail "ferry --version says '$version', the package is $expected_version"
ok "ferry --version: $version"
bash -c 'source /usr/share/bash-completion/completions/ferry && complete -p ferry' >/dev/null ||
    fail "the bash completion does not load"
ok "the bash completion loads"
page=$(man -w ferry) || fail "man -w ferry finds no manual page"
ok "man -w ferry: $page"
page=$(man -w ferry-ui) || fail "man -w ferry-ui finds no manual page"
ok "man -w ferry-ui: $page"
