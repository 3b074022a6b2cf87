#!/usr/bin/env bash
# Redraws data/screenshots/gnome-files-menu.png: GNOME Files (the real Nautilus, not a mock) on Xvfb,
# two files selected, its context menu open with Ferry's "Share with Ferry…" in it, as a person sees
# it. Needs nautilus, xdotool, xcompmgr (popovers are drawn with transparency), Xvfb and ImageMagick,
# which `make deps` does not install: this is run by hand when the menu changes.
#
#   scripts/screenshot-gnome-files.sh PREFIX     PREFIX: a `make install` of Ferry (e.g. build/check-prefix)
set -euo pipefail

prefix=$(realpath "${1:?usage: $0 PREFIX}")
root=$(cd "$(dirname "$0")/.." && pwd)
for tool in nautilus xdotool xcompmgr Xvfb convert dbus-run-session; do
    command -v "$tool" >/dev/null || { echo "screenshot-gnome-files: $tool is not installed" >&2; exit 69; }
done
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; sleep 1; rm -rf "$work"' EXIT  # GNOME Files' helpers write a moment longer
mkdir -p "$work/home/Pictures" "$work/run"
chmod 700 "$work/run"
convert -size 640x427 gradient:'#9fd3f0-#1d4e7a' "$work/home/Pictures/Harbour at dawn.jpg"
printf 'Ferry timetable, winter\n' > "$work/home/Pictures/Timetable.txt"

# Xvfb picks a free display number itself and says which (-displayfd), so no other X server is drawn.
exec {display_fd}<> <(:)
Xvfb -displayfd "$display_fd" -screen 0 1000x660x24 -nolisten tcp >/dev/null 2>&1 &
read -r -t 10 number <&"$display_fd" || { echo "screenshot-gnome-files: Xvfb did not start" >&2; exit 1; }
export DISPLAY=:$number
xcompmgr -c >/dev/null 2>&1 &
# The session bus (started by dbus-run-session with this environment) must know Ferry's service:
# the extension offers its entry only then. English, as the README is.
export XDG_DATA_DIRS=$prefix/share:/usr/local/share:/usr/share HOME=$work/home XDG_RUNTIME_DIR=$work/run \
    XDG_CONFIG_HOME=$work/home/.config XDG_CACHE_HOME=$work/home/.cache XDG_DATA_HOME=$work/home/.local/share \
    GSK_RENDERER=cairo LANG=C.UTF-8 LANGUAGE=en
dbus-run-session -- bash -c '
    set -euo pipefail
    nautilus --new-window "$HOME/Pictures" >/dev/null 2>&1 &
    sleep 6
    window=$(xdotool search --name Pictures | head -1)
    [[ -n $window ]] || { echo "screenshot-gnome-files: no GNOME Files window" >&2; exit 1; }
    xdotool windowmove "$window" 0 0 windowsize "$window" 1000 660
    sleep 1
    xdotool mousemove 337 130 click 1 && sleep 0.5
    xdotool mousemove 477 130 keydown ctrl click 1 keyup ctrl && sleep 0.5
    xdotool mousemove 477 130 click 3 && sleep 2
    import -window root "'"$work"'/shot.png"
    kill %1' 2>/dev/null || { echo "screenshot-gnome-files: the picture could not be taken" >&2; exit 1; }
cp "$work/shot.png" "$root/data/screenshots/gnome-files-menu.png"
echo "wrote data/screenshots/gnome-files-menu.png"
