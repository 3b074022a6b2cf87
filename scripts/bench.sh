#!/usr/bin/env bash
# `make bench`: Ferry's performance figures, measured against a release build installed into a
# throwaway prefix, on private session buses. Prints figures and targets; never fails on time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/build/bench-prefix"
cd "$root"
scripts/deps.sh
make --no-print-directory install PREFIX="$prefix" CONFIG=release >/dev/null
# The cold-start reference, a bare Swift GApplication, is built by the same release build.
bare="$(swift build -c release --show-bin-path)/bare-gapplication"
.venv-test/bin/python Tests/bench/bench_service.py "$prefix" "$bare"
scripts/bench-references.sh install
.venv-test/bin/python Tests/bench/bench_sender.py "$prefix"
.venv-test/bin/python Tests/bench/bench_encryption.py "$prefix"
.venv-test/bin/python Tests/bench/bench_pictures.py "$prefix"
.venv-test/bin/python Tests/bench/bench_ui.py "$prefix"
