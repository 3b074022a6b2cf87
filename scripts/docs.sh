#!/usr/bin/env bash
# `make docs`: the DocC documentation of the modules whose public API is documented symbol by
# symbol (FerryCore, the rules; FerryContract, the D-Bus contract as Swift sees it; FerryCrypto,
# Olm and Megolm), built into build/docs/<Module>.doccarchive. Fails when one of their public
# symbols has no documentation comment. The symbol graphs come from a build of their own (.build-docs), so the usual build's
# flags and objects are left alone.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
scratch="$root/.build-docs"
graphs="$scratch/symbol-graphs"
modules=(FerryCore FerryContract FerryCrypto)

# The graphs are kept between runs: a module the build finds up to date is not compiled again
# and writes no new graph, so its last one is still its current one. Without them, start over.
for module in "${modules[@]}"; do
    [[ -f $graphs/$module.symbols.json ]] || rm -rf "$scratch"
done
mkdir -p "$scratch" "$graphs" "$root/build/docs"
# FerryContract brings FerryCore with it; FerryCrypto stands alone.
for target in FerryContract FerryCrypto; do
    swift build --package-path "$root" --scratch-path "$scratch" --target "$target" \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" >"$scratch/build.log" 2>&1 \
        || { tail -n 40 "$scratch/build.log"; exit 1; }
done
python3 "$root/scripts/undocumented-symbols.py" "$graphs" "${modules[@]}"

for module in "${modules[@]}"; do
    own="$scratch/graphs-$module"
    rm -rf "$own"
    mkdir -p "$own"
    cp "$graphs/$module.symbols.json" "$own/"
    cp "$graphs/$module"@*.symbols.json "$own/" 2>/dev/null || true
    catalog=("$root/Sources/$module/$module.docc")
    [[ -d ${catalog[0]} ]] || catalog=()
    docc convert "${catalog[@]}" --additional-symbol-graph-dir "$own" \
        --fallback-display-name "$module" --fallback-bundle-identifier "io.github.ferryshare.$module" \
        --output-path "$root/build/docs/$module.doccarchive" --transform-for-static-hosting >"$scratch/docc-$module.log" 2>&1 \
        || { cat "$scratch/docc-$module.log"; exit 1; }
    echo "docs: build/docs/$module.doccarchive"
done
