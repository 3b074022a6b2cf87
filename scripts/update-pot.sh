#!/usr/bin/env bash
# Extracts every translatable string into po/ferry.pot, and merges it into each po/LANG.po.
#
#   scripts/update-pot.sh            refresh po/ferry.pot and the translations (make pot)
#   scripts/update-pot.sh --pot FILE write the template to FILE only (the tests compare it)
#
# Swift sources (po/POTFILES) are read as C: Ferry's translatable strings are plain literals in
# tr("…"), trn("…", "…", n) and trc("context", "…") calls, with {name} placeholders instead of
# interpolation, so the C scanner reads them exactly. The desktop entries go through xgettext's
# Desktop scanner and the AppStream metainfo through the ITS rules AppStream installs.
# Locations carry the file only, not the line: the template changes when a string does.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pot=po/ferry.pot
merge=true
if [[ ${1-} == --pot ]]; then pot=${2:?}; merge=false; fi

version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/FerryCore/Version.swift)
common=(--from-code=UTF-8 --add-location=file --sort-by-file --package-name=Ferry --package-version="$version"
        --msgid-bugs-address=https://github.com/ferryshare/ferry/issues --copyright-holder="The Ferry developers")

grep -v -e '^#' -e '^$' po/POTFILES > "$pot.files"
grep -E '\.swift$' "$pot.files" > "$pot.swift" || true
grep -E '\.desktop\.in$|\.nemo_action\.in$' "$pot.files" > "$pot.desktop" || true
grep -E '\.xml$' "$pot.files" > "$pot.xml" || true

xgettext "${common[@]}" --language=C --add-comments=TRANSLATORS: \
    --keyword= --keyword=tr --keyword=trn:1,2 --keyword=trc:1c,2 --keyword=trNoop \
    --flag=tr:1:python-brace-format --flag=trn:1:python-brace-format --flag=trn:2:python-brace-format \
    --flag=trc:2:python-brace-format \
    --files-from="$pot.swift" --output="$pot"
xgettext "${common[@]}" --join-existing --language=Desktop --files-from="$pot.desktop" --output="$pot"
xgettext "${common[@]}" --join-existing --files-from="$pot.xml" --output="$pot"
rm -f "$pot.files" "$pot.swift" "$pot.desktop" "$pot.xml"

if $merge; then
    for lang in $(grep -v '^#' po/LINGUAS); do
        msgmerge --quiet --update --backup=none "po/$lang.po" "$pot"
    done
    echo "po/ferry.pot: $(grep -c '^msgid ' "$pot") strings (the first is the header)"
fi
