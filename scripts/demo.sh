#!/usr/bin/env bash
# Ferry in two minutes: installs Ferry into a throwaway prefix, starts a private session bus and
# a throwaway Matrix homeserver (Synapse, on 127.0.0.1), shares a picture, a text and a link
# through the same clients a desktop uses while signed out, signs in, and shows the room's
# timeline as the homeserver has it. Nothing outside a temporary directory is touched.
# KEEP=1 keeps that directory afterwards.
# With a display, the share dialog opens for the picture: pick the room and press Send within
# DIALOG_SECONDS (120 by default), or the command line does it. Every command shown with a "$" is
# what the demo runs, quoted as a shell needs it: paste it (with KEEP=1) and it works the same.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
config=${CONFIG:-debug}

if [[ -t 1 ]]; then bold=$'\e[1m' dim=$'\e[2m' green=$'\e[32m' reset=$'\e[0m'; else bold= dim= green= reset=; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$reset"; }
note() { printf '    %s\n' "$*"; }
show() { printf '%s    $ %s%s\n' "$dim" "$*" "$reset"; }
# A word as a shell reads it back: as it is when it holds only characters no shell treats specially,
# else in single quotes ("#room:server" would start a comment, "!room" or "*" would be expanded).
shell_word() {
    if [[ $1 =~ ^[A-Za-z0-9_@%+=:,./-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}
command_line() {
    local line= word
    for word in "$@"; do line+="${line:+ }$(shell_word "$word")"; done
    printf '%s' "$line"
}
# Shows a command and runs exactly the text shown, so what a person pastes is what ran.
run() { run_shell "$(command_line "$@")"; }
run_shell() { show "$1"; (eval "$1") 2>&1 | sed 's/^/      /'; }

# What a newcomer need not read (package installs, the build) goes to a log, a line each on screen.
log="$root/build/demo.log"
mkdir -p "$root/build"
: >"$log"
quietly() {
    local what=$1 start=$SECONDS
    shift
    printf '\n### %s\n$ %s\n' "$what" "$*" >>"$log"
    if "$@" 2>&1 | counting "$what"; then
        note "$what: done in $((SECONDS - start)) s (its output is in ${log#"$root/"})"
    else
        note "$what: failed. The end of ${log#"$root/"}:"
        tail -n 40 "$log" | sed 's/^/      /'
        exit 1
    fi
}
# Copies a step's output to the log and shows how far it is: the Swift build counts its steps
# ("[312/1075] Compiling …"), on a terminal as one line that counts up, elsewhere a line every 10 %.
counting() {
    local line shown=-1 tenth
    while IFS= read -r line; do
        printf '%s\n' "$line" >>"$log"
        [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]] || continue
        local done=${BASH_REMATCH[1]} all=${BASH_REMATCH[2]}
        ((all >= 20)) || continue  # nothing to build: the few steps of checking that are no news
        if [[ -t 1 ]]; then
            printf '\r    %s: building, step %s of %s ' "$1" "$done" "$all"
        else
            tenth=$((done * 10 / all))
            ((tenth > shown)) && { shown=$tenth; note "$1: building, step $done of $all"; }
        fi
    done
    [[ -t 1 ]] && printf '\r\e[K'
    return 0
}

work=$(mktemp -d "${TMPDIR:-/tmp}/ferry-demo.XXXXXX")
prefix="$work/prefix"
bus_pid=
server_pid=
cleanup() {
    [[ -n $bus_pid ]] && kill "$bus_pid" 2>/dev/null || true
    if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    if [[ ${KEEP:-} == 1 ]]; then echo "Kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

step "Getting ready"
note "The first time on a 2-core machine this takes 10 to 15 minutes: Debian packages (with sudo"
note "when you are not root), virtualenvs for Synapse and the tests in this checkout, then a debug"
note "build of Ferry. Later runs start in seconds."
quietly "Debian packages and the Synapse virtualenv (once)" "$root/scripts/deps.sh"
quietly "Building Ferry ($config) and installing it into a temporary prefix" \
    make -C "$root" --no-print-directory install PREFIX="$prefix" CONFIG="$config"
note "$prefix has bin/ferry, the desktop file, the D-Bus service file and the icons;"
note "the desktop file says Exec=$prefix/bin/ferry open %U."

step "Starting a private session bus that knows about this Ferry"
# The bus daemon passes its own environment to the services it starts, so everything Ferry
# should see (where to keep its state, where to find its D-Bus service file) is set first.
export HOME="$work/home"
export XDG_STATE_HOME="$HOME/.local/state" XDG_CONFIG_HOME="$HOME/.config" \
       XDG_DATA_HOME="$HOME/.local/share" XDG_CACHE_HOME="$HOME/.cache"
export XDG_DATA_DIRS="$prefix/share:/usr/local/share:/usr/share"
mkdir -p "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
# The service gets no display: only the picture's step below opens the dialog, on purpose.
dialog_display=${DISPLAY:-} dialog_wayland=${WAYLAND_DISPLAY:-}
unset XDG_CURRENT_DESKTOP DISPLAY WAYLAND_DISPLAY
address=$(dbus-daemon --session --fork --print-address=1 --print-pid=3 3>"$work/bus.pid")
bus_pid=$(<"$work/bus.pid")
export DBUS_SESSION_BUS_ADDRESS=$address
note "Bus $address (pid $bus_pid). Ferry is not running: the bus starts it on the first call."
note "Its state goes to $XDG_STATE_HOME/ferry/."

step "Starting a throwaway Matrix homeserver on 127.0.0.1"
python3 "$root/Tests/integration/homeserver.py" serve "$work/synapse" --info-file "$work/server.json" \
    >>"$log" 2>&1 &
server_pid=$!
for _ in $(seq 600); do [[ -f $work/server.json ]] && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if [[ ! -f $work/server.json ]]; then tail -n 40 "$log"; exit 1; fi
info() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/server.json" "$1"; }
server_url=$(info base_url) room=$(info room_alias) demo_user=$(info user_id)
note "Synapse at $server_url, with the user $demo_user and the room $room."

step "Making Ferry the default application for PNG pictures"
run xdg-mime default io.github.ferryshare.Ferry.desktop image/png
run xdg-mime query default image/png

export PATH="$prefix/bin:$PATH"
count_shares() { ferry shares --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }
# gio open hands the file to Ferry with a D-Bus call and returns at once; wait for the share.
wait_for_shares() {
    for _ in $(seq 100); do
        (($(count_shares) >= $1)) && return 0
        sleep 0.1
    done
    echo "Ferry did not receive it within 10 seconds." >&2
    return 1
}

step "Sharing a picture the way a file manager does"
mkdir -p "$HOME/Pictures"
picture="$HOME/Pictures/harbour.png"
python3 - "$picture" <<'PY'
import struct, sys, zlib
w, h = 64, 48
rows = b"".join(b"\x00" + bytes(v for x in range(w) for v in (40 + x * 2, 110 + y * 2, 220)) for y in range(h))
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
note "A 64×48 picture: $picture"
run gio open "$picture"
wait_for_shares 1
note "GIO found Ferry as the default for image/png, saw DBusActivatable=true, and called"
note "org.freedesktop.Application.Open on the bus, which started ${prefix}/bin/ferry service."

step "Sharing a text from the command line, to the room"
text="The 8:15 ferry is cancelled, take the 9:00 one."
run ferry text "$text" --to "$room"
note "ferry printed the new share's id on standard output, the sentence after it on standard error."

step "Sharing a link through a ferry: URI"
link="ferry:share?title=Timetable&text=Winter%20timetable&url=https%3A%2F%2Fexample.org%2Fferries&to=%23${room#\#}"
run gio open "$link"
wait_for_shares 3
note "Any program can do this: xdg-open and browsers hand ferry: links to Ferry the same way."

step "What Ferry holds now"
run ferry shares
note "Nobody is signed in yet, so every share waits in awaiting-sign-in; after sign-in they"
note "move on by themselves. Each one is already on disk: the picture was copied into Ferry's spool."
picture_share=$(ferry shares --json | python3 -c 'import json, sys; print([s["id"] for s in json.load(sys.stdin) if s["source"] == "open" and s["items"][0]["kind"] == "file"][0])')
step "The picture's share in detail"
run ferry show "$picture_share"

step "The files behind it"
run_shell 'cd "$XDG_STATE_HOME" && find ferry -type f | sort'
staged=$(find "$XDG_STATE_HOME/ferry/spool" -type f | head -n 1)
note "The outbox is SQLite; ${staged#"$XDG_STATE_HOME/"} is Ferry's own copy of the picture."
run cmp "$picture" "$staged"
note "Identical (cmp printed nothing). Delete the original and the share is unaffected:"
run rm "$picture"
run ferry show --json "$(basename "$(dirname "$staged")")"

step "Signing in"
# The password goes through a private file, so the command shown is the one that runs and the
# screen never shows the password.
(umask 077 && info password >"$work/password")
login=$(command_line ferry login --homeserver "$server_url" --user "$demo_user" --password-stdin)
run_shell "$login <$(shell_word "$work/password")"
note "The token went to the Secret Service if one runs, else to a file only you can read:"
run ferry status
note "The text named its room: it is on its way by itself."
for _ in $(seq 100); do
    sent=$(ferry shares --json | python3 -c 'import json, sys; print(sum(s["state"] == "sent" for s in json.load(sys.stdin)))')
    ((sent >= 1)) && break
    sleep 0.1
done
run ferry shares
note "The link only suggested its room: a link never sends anything without you. The picture"
note "named none (a file manager does not). Both wait for a destination."

step "Choosing where the picture and the link go"
link_share=$(ferry shares --json | python3 -c 'import json, sys; print([s["id"] for s in json.load(sys.stdin) if s["source"] == "uri"][0])')
run ferry destinations
share_state() { ferry show --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])'; }
if [[ -n $dialog_display || -n $dialog_wayland ]]; then
    dialog_seconds=${DIALOG_SECONDS:-120}
    note "Ferry's share dialog opens for the picture, as after Open With → Ferry: tick $(info room_name),"
    note "Next, add a message if you like, and Share. In $dialog_seconds s the command line does it instead."
    dialog=("$prefix/libexec/ferry/ferry-ui" --share "$picture_share")
    show "$(command_line "${dialog[@]}") &"
    DISPLAY=$dialog_display WAYLAND_DISPLAY=$dialog_wayland "${dialog[@]}" >>"$log" 2>&1 &
    dialog_pid=$!
    deadline=$((SECONDS + dialog_seconds))
    while ((SECONDS < deadline)) && kill -0 "$dialog_pid" 2>/dev/null \
        && [[ $(share_state "$picture_share") == awaiting-destination ]]; do
        sleep 0.3
    done
    if [[ $(share_state "$picture_share") == awaiting-destination ]]; then
        kill "$dialog_pid" 2>/dev/null || true
        note "The dialog was closed or its time ran out, so the command line chooses instead:"
        run ferry complete "$picture_share" --to "$room" --message "The harbour this morning"
    else
        note "You sent it from the dialog; the dialog closes once it is on its way."
        wait "$dialog_pid" 2>/dev/null || true
    fi
else
    note "No display here, so the command line chooses. On a desktop the share dialog does this (with the"
    note "link's room already ticked): data/screenshots/share-dialog-page1.png shows that step."
    run ferry complete "$picture_share" --to "$room" --message "The harbour this morning"
fi
run ferry complete "$link_share" --to "$room"

step "Sending a file while signed in waits until the homeserver has it"
printf 'Timetable\n08:15 cancelled\n09:00 on time\n' > "$HOME/timetable.txt"
run ferry send "$HOME/timetable.txt" --to "$room"

step "The room's timeline, as the homeserver has it (read with its own HTTP API, not Ferry's word)"
python3 - "$work/server.json" <<'PY' | sed 's/^/      /'
import json, sys, urllib.parse, urllib.request
info = json.load(open(sys.argv[1]))
url = (f"{info['base_url']}/_matrix/client/v3/rooms/{urllib.parse.quote(info['room_id'], safe='')}"
       "/messages?dir=f&limit=100")
request = urllib.request.Request(url, headers={"Authorization": f"Bearer {info['access_token']}"})
for event in json.load(urllib.request.urlopen(request))["chunk"]:
    if event["type"] != "m.room.message":
        continue
    content = event["content"]
    extra = ""
    if "url" in content:
        i = content.get("info", {})
        size = f", {i['w']}×{i['h']}" if "w" in i else ""
        extra = f"  [{i.get('mimetype')}, {i.get('size')} bytes{size}, {content['url']}]"
    print(f"{content['msgtype']:8} {content['body']!r}{extra}")
PY

printf '\n%sThat was Ferry.%s The bus and the homeserver are stopped and the temporary files removed on exit.\n' "$green" "$reset"
note "Next: make check runs every test; README.md shows the D-Bus API and the command line."
