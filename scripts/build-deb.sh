#!/usr/bin/env bash
# Builds the Debian packages dist/ferry_<version>_<arch>.deb and dist/ferry-kde_<version>_<arch>.deb (the
# KDE Purpose plugin) from the current work tree and checks them (scripts/check-deb-contents.sh: lintian,
# the file list, the validators). `make deb` calls this. Prints the packages' paths, one per line, ferry's
# first, on standard output; progress and findings go to standard error. Fails when a check fails,
# lintian's warnings included.
#
# The build happens in a copy of the tree under build/deb/ (git-ignored), with packaging/debian as its
# debian/ directory, so the work tree stays clean. The copy keeps its SwiftPM build directory between runs,
# so a second package build is incremental. Whatever the build needs and this machine lacks (dpkg-dev,
# debhelper, lintian, the validators, the Build-Depends) is installed with apt, through sudo when not
# root. The Swift toolchain is taken from PATH.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
say() { printf '==> %s\n' "$*" >&2; }
fail() { printf 'build-deb: %s\n' "$*" >&2; exit 1; }
as_root() { if ((EUID == 0)); then "$@"; else sudo "$@"; fi; }
apt_updated=false
apt_get() { # apt_get COMMAND ARGS…: the package lists are refreshed once, before the first install
    $apt_updated || { as_root apt-get update -q >&2; apt_updated=true; }
    as_root env DEBIAN_FRONTEND=noninteractive apt-get "$@" -y -q --no-install-recommends >&2
}

command -v swift >/dev/null || fail "no swift on PATH (the package build uses the swift.org toolchain)"
need=()
command -v dpkg-buildpackage >/dev/null || need+=(dpkg-dev)
command -v dh >/dev/null || need+=(debhelper)
command -v lintian >/dev/null || need+=(lintian)
command -v desktop-file-validate >/dev/null || need+=(desktop-file-utils)
command -v appstreamcli >/dev/null || need+=(appstream)
((${#need[@]} == 0)) || { say "installing ${need[*]}"; apt_get install "${need[@]}"; }

version=$(dpkg-parsechangelog -l "$repo/packaging/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
work="$repo/build/deb"
src="$work/ferry-$version"
debs=("ferry_${version}_${arch}.deb" "ferry-kde_${version}_${arch}.deb")

# A fresh copy of every file git would see (tracked or new, not ignored), keeping the copy's .build.
say "copying the work tree to ${src#"$repo"/}"
mkdir -p "$src"
find "$src" -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf {} +
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e "$f" || -L "$f" ]] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -C "$src" -xf -
# The dependency versions the developer builds with (Package.resolved is not tracked).
[[ -f "$repo/Package.resolved" ]] && cp -p "$repo/Package.resolved" "$src/"
rm -rf "$src/debian"
cp -a "$repo/packaging/debian" "$src/debian"

if ! (cd "$src" && dpkg-checkbuilddeps) 2>/dev/null; then
    say "installing the Build-Depends"
    apt_get build-dep "$src"
fi

say "building ${debs[*]}"
rm -f "$work"/ferry_* "$work"/ferry-dbgsym_* "$work"/ferry-kde_* "$work"/ferry-kde-dbgsym_*
(cd "$src" && dpkg-buildpackage -b -us -uc) >&2

# debian/copyright names each SwiftPM package whose code is linked into the installed programs (ferry,
# ferry-ui) by its checkout (Files: .build/checkouts/<name>/*), so that a new dependency cannot slip in
# without its licence. The links' object lists tell which packages those are: a Swift module's
# output-file-map.json and a C object's .d file name the sources each object came from.
say "checking that debian/copyright covers the packages linked into the programs"
release="$src/.build/release"
programs=$(awk '$1 == "program" { print $2 }' "$src/data/install-files.list")
linked=$(
    for program in $programs; do cat "$release/$program.product/Objects.LinkFileList"; done |
        sed -E 's|/[^/]+\.swift\.o$|/output-file-map.json|; t; s|\.o$|.d|' |
        sort -u | xargs cat | grep -aoE '/\.build/checkouts/[^/" ]+/' | cut -d/ -f4 | sort -u
)
listed=$(grep -oE '^(Files: +| +)\.build/checkouts/[^/]+/' "$src/debian/copyright" | sed -E 's|.*checkouts/||; s|/$||' |
    sort -u)
[[ -n "$linked" ]] || fail "no SwiftPM package found in the programs' links (has the build layout changed?)"
missing=$(comm -23 <(echo "$linked") <(echo "$listed"))
extra=$(comm -13 <(echo "$linked") <(echo "$listed"))
[[ -z "$missing" ]] || fail "linked into $(echo $programs) but not in packaging/debian/copyright: $(echo $missing)"
[[ -z "$extra" ]] || fail "in packaging/debian/copyright but not linked into $(echo $programs): $(echo $extra)"

mkdir -p "$repo/dist"
built=()
for deb in "${debs[@]}"; do
    cp "$work/$deb" "$repo/dist/$deb"
    say "built dist/$deb ($(du -h "$repo/dist/$deb" | cut -f1))"
    built+=("$repo/dist/$deb")
done

say "checking ${debs[*]}"
# The copy's own check, so that the packages are held to the install list they were built from, even
# when the work tree has changed since.
"$src/scripts/check-deb-contents.sh" "${built[@]}" || fail "the packages fail their checks (above)"
printf '%s\n' "${built[@]}"
