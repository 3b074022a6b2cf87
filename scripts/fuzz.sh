#!/usr/bin/env bash
# make fuzz: runs each parser's fuzz target (libFuzzer with AddressSanitizer) for a set time and
# prints one line per target. New coverage is kept in build/fuzz/corpus/TARGET (the committed
# seeds in Tests/fuzz/corpus are read, never written); an input that crashes a parser is left in
# build/fuzz/artifacts/TARGET and fails the run. Targets run FUZZ_JOBS at a time.
#
#   scripts/fuzz.sh BINARY SECONDS JOBS TARGET...
set -uo pipefail
cd "$(dirname "$0")/.."
binary=$1 seconds=$2 jobs=$3
shift 3
work=build/fuzz
mkdir -p "$work"

run_one() {
    local target=$1
    mkdir -p "$work/corpus/$target" "$work/artifacts/$target"
    local log="$work/$target.log"
    FERRY_FUZZ_TARGET=$target "$binary" "$work/corpus/$target" "Tests/fuzz/corpus/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$work/artifacts/$target/" -print_final_stats=1 >"$log" 2>&1
    local status=$?
    local runs coverage crashes
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    crashes=$(find "$work/artifacts/$target" -type f | wc -l)
    printf '%-17s %5s s  %11s runs  coverage %5s  corpus %5s  crashes %s%s\n' "$target" "$seconds" "${runs:-0}" \
        "${coverage:-0}" "$(find "$work/corpus/$target" -type f | wc -l)" "$crashes" \
        "$([[ $status -ne 0 || $crashes -ne 0 ]] && echo "  (see $log)")"
    [[ $status -eq 0 && $crashes -eq 0 ]]
}
export -f run_one
export work binary seconds

printf '%s\n' "$@" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}
