#!/usr/bin/env bash
# The reference clients Ferry's benchmarks are compared with (issue: "one `ferry text`, until the
# server's 200, ≤ 0.1 × the time matrix-commander takes for the same message").
#
#   scripts/bench-references.sh install
#       matrix-commander (PyPI) into .venv-bench; quick when it is there.
#   scripts/bench-references.sh matrix-commander-send HOMESERVER_URL USER PASSWORD ROOM [RUNS]
#       Signs in once (not timed), then times RUNS (default 5) one-text sends, each a fresh
#       `matrix-commander -m` process as a person would run it: wall time until it exits after
#       the send. Prints one line per run and, last, `matrix-commander-send-seconds MEDIAN`.
#
# Facts found here: matrix-nio 0.26 uses vodozemac (a wheel), so no libolm is needed; python-magic
# needs Debian's libmagic1. matrix-commander 8.0.6 refuses room ids without a server part (room
# version 12, Synapse's default): give it the room's alias, or a room made with room_version "11".
# Each send also does /directory (for an alias) and a /sync after the PUT; ~0.5 s of the ~0.55 s
# is Python starting and importing (`matrix-commander --version` alone takes about as long).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-bench"
pins=(matrix-commander==8.0.6 matrix-nio==0.26.0 vodozemac==0.10.0)

install() {
    if ! dpkg-query -W -f='${db:Status-Status}' libmagic1 2>/dev/null | grep -qx installed; then
        echo "bench-references: installing libmagic1" >&2
        sudo=()
        ((EUID == 0)) || sudo=(sudo)
        "${sudo[@]}" apt-get update -q >&2
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends libmagic1 >&2
    fi
    if [[ "$(cat "$venv/.ferry-stamp" 2>/dev/null)" != "${pins[*]}" ]]; then
        echo "bench-references: creating $venv (${pins[*]})" >&2
        rm -rf "$venv"
        /usr/bin/python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >&2
        "$venv/bin/matrix-commander" --version >/dev/null
        echo "${pins[*]}" >"$venv/.ferry-stamp"
    fi
}

matrix_commander_send() {
    local url=$1 user=$2 password=$3 room=$4 runs=${5:-5}
    if [[ $room == '!'* && $room != *:* ]]; then
        echo "bench-references: matrix-commander rejects room ids without a server part ($room);" \
             "pass the room's alias or a room of version 11" >&2
        return 64
    fi
    install
    local work
    work=$(mktemp -d)
    trap 'rm -rf "$work"' RETURN
    local mc=("$venv/bin/matrix-commander" -c "$work/credentials.json" -s "$work/store")
    (cd "$work" && "${mc[@]}" --login password --homeserver "$url" --user-login "$user" \
        --password "$password" --device ferry-bench --room-default "$room" </dev/null >"$work/login.log" 2>&1) || {
        cat "$work/login.log" >&2
        return 1
    }
    local times=() start end i
    for ((i = 1; i <= runs; i++)); do
        start=$(date +%s.%N)
        (cd "$work" && "${mc[@]}" -r "$room" -m "matrix-commander reference $i $start" </dev/null >"$work/send.log" 2>&1) || {
            cat "$work/send.log" >&2
            return 1
        }
        end=$(date +%s.%N)
        grep -q "This message was sent" "$work/send.log" || { cat "$work/send.log" >&2; return 1; }
        times+=("$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')")
        printf 'run %d: %.3f s\n' "$i" "${times[-1]}"
    done
    printf 'matrix-commander-send-seconds %.3f\n' \
        "$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')"
}

case ${1:-} in
    install) install ;;
    matrix-commander-send) shift; (($# >= 4)) || { sed -n 2,12p "$0" >&2; exit 64; }; matrix_commander_send "$@" ;;
    *) sed -n 2,17p "$0" >&2; exit 64 ;;
esac
