#!/usr/bin/env bash
# Rewrites the MimeType= line of data/io.github.ferryshare.Ferry.desktop.in from the
# installed shared-mime-info database, so that Ferry is offered for every kind of file.
# Why a full list and not a few supertypes: see the comment at the top of that file.
#
#   scripts/update-mime-types.sh            rewrite the line
#   scripts/update-mime-types.sh --check    exit 1 if the line differs from what would be written
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
desktop="$root/data/io.github.ferryshare.Ferry.desktop.in"
types_file="${MIME_TYPES_FILE:-/usr/share/mime/types}"

[[ -r $types_file ]] || { echo "update-mime-types: $types_file not found (install shared-mime-info)" >&2; exit 1; }

# Left out: inode/* (folders, devices: Ferry shares files), x-content/* (what a mounted
# volume holds, for autorun), multipart/* and message/* other than message/rfc822 (MIME
# message parts, not files people keep; desktop-file-validate warns about them), x-epoc/*
# (a deprecated media type the validator warns about).
list=$(grep -v -E '^(inode|x-content|multipart|x-epoc)/' "$types_file" \
        | grep -v -E '^message/' ; echo message/rfc822)
line="MimeType=$(printf '%s\n' $list | LC_ALL=C sort -u | tr '\n' ';')x-scheme-handler/ferry;"

current=$(grep '^MimeType=' "$desktop")
if [[ ${1:-} == --check ]]; then
    [[ $current == "$line" ]] && exit 0
    echo "update-mime-types: the MimeType list differs from $types_file; run scripts/update-mime-types.sh" >&2
    exit 1
fi
tmp=$(mktemp "$desktop.XXXXXX")
awk -v line="$line" '/^MimeType=/ { print line; next } { print }' "$desktop" > "$tmp"
mv "$tmp" "$desktop"
echo "update-mime-types: $(tr -cd ';' <<<"$line" | wc -c) types written to ${desktop#$root/}"
