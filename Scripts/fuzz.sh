#!/usr/bin/env bash
# libFuzzer targets for FakeAPNs's input parsers and device model (Fuzz/<TARGET>/, executables):
#
#   Scripts/fuzz.sh build                          builds the six targets into .build/fuzz/
#   Scripts/fuzz.sh run [SECONDS_EACH] [TARGET...]  builds if needed, fuzzes each target for
#                                                  SECONDS_EACH (default 20), two at a time on a
#                                                  2-core machine; fails naming the crash input
#   Scripts/fuzz.sh reproduce TARGET FILE          replays one input through TARGET
#
# Targets: BinaryDecoder, HTTP2Request, ProviderToken, ControlAPI, PlaintextSession, DeviceModel,
# HTTP2Connection.
#
# Each starts from its seeds in Fuzz/corpus/<TARGET>/ (read only) plus what earlier runs found in
# .build/fuzz/corpus/<TARGET>/, where new inputs go; crash inputs go to .build/fuzz/artifacts/<TARGET>/.
#
# The targets are the package's executables Fuzz<TARGET> (Package.swift's fuzzTargets), so
# they reach the engine and the daemon's module without any product for other packages. Here
# SwiftPM builds them in release with -sanitize=fuzzer,address for the Swift and C code, with
# FUZZING defined (each target's Replay.swift then leaves main to libFuzzer; any other build
# makes a program that replays the inputs named on its command line), and with -enable-testing,
# as the targets call the parsers' internal entry points (`@testable import`).
#
# Environment: FUZZ_JOBS (targets run at once; default: the number of cores),
# FUZZ_ARGS (extra libFuzzer flags, e.g. "-use_value_profile=1 -only_ascii=1"),
# FUZZ_DIR (output directory instead of .build/fuzz).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${FUZZ_DIR:-$ROOT/.build/fuzz}"
# Where SwiftPM puts the targets' executables.
BIN="$OUT/swiftpm/release"
TARGETS=(BinaryDecoder HTTP2Request ProviderToken ControlAPI PlaintextSession DeviceModel HTTP2Connection)

usage() {
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

die() {
    echo "fuzz.sh: $*" >&2
    exit 1
}

is_target() {
    local name
    for name in "${TARGETS[@]}"; do [[ "$name" == "$1" ]] && return 0; done
    return 1
}

# The largest input libFuzzer makes for each target (-max_len).
max_len() {
    case "$1" in
    BinaryDecoder) echo 4096 ;;
    HTTP2Request) echo 6144 ;;
    ProviderToken) echo 2048 ;;
    ControlAPI) echo 4096 ;;
    PlaintextSession) echo 4096 ;;
    DeviceModel) echo 4096 ;;
    HTTP2Connection) echo 4096 ;;
    esac
}

# MARK: - Build

find_tools() {
    SWIFT="$(command -v swift)" || die "swift is not on PATH (install Swift 6.3 first)"
    # The toolchain's own tools: its llvm-symbolizer, and lld (gold warns about a local symbol
    # of the address sanitizer's runtime at every link).
    TOOLBIN="$(dirname "$(readlink -f "$SWIFT")")"
    [[ -x "$TOOLBIN/ld.lld" ]] || die "the toolchain in $TOOLBIN has no ld.lld"
    command -v pkg-config >/dev/null || die "pkg-config is missing; run Scripts/install-dependencies.sh"
    local package
    for package in openssl libnghttp2 libmicrohttpd; do
        pkg-config --exists "$package" || die "$package development files are missing; run Scripts/install-dependencies.sh"
    done
}

# SwiftPM builds what changed, each target with what it needs; a build that warns fails.
# `--sanitize fuzzer` has SwiftPM build for libFuzzer (every module parsed as a library, so the
# program's main is libFuzzer's); the sanitizers go to swiftc as one flag after it, as of several
# -sanitize= flags the driver keeps the last (SwiftPM's `--sanitize fuzzer --sanitize address`
# gives one of the two, in no fixed order), and -fsanitize=address to clang for the C shims.
# One product at a time: the whole graph holds the main package's executables, which cannot be
# parsed as libraries.
build() {
    find_tools
    local started=$SECONDS
    mkdir -p "$OUT/logs"
    echo "fuzz.sh: building ${TARGETS[*]} (Fuzz/) into ${BIN#"$ROOT/"}"
    local target log
    for target in "${TARGETS[@]}"; do
        log="$OUT/logs/build-$target.log"
        if ! "$SWIFT" build --package-path "$ROOT" --scratch-path "$OUT/swiftpm" -c release \
            --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address \
            -Xswiftc -DFUZZING -Xswiftc -enable-testing -Xswiftc -warnings-as-errors \
            -Xswiftc -use-ld=lld --product "Fuzz$target" >"$log" 2>&1 || grep -q -i 'warning:' "$log"; then
            echo "fuzz.sh: building $target failed:" >&2
            cat "$log" >&2
            die "build failed"
        fi
    done
    echo "fuzz.sh: built in $((SECONDS - started)) s"
}

# MARK: - Run

# libFuzzer's environment: the toolchain's symbolizer for stack traces, and Swift's own crash
# backtracer off (libFuzzer reports the trap and saves the input; the backtracer, reading the
# stack of an instrumented process, only adds a spurious AddressSanitizer report).
fuzzer_environment() {
    if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" && -x "${TOOLBIN:-}/llvm-symbolizer" ]]; then
        export ASAN_SYMBOLIZER_PATH="$TOOLBIN/llvm-symbolizer"
    fi
    export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
}

# Fuzzes one target; its output goes to logs/<target>.log, its verdict to logs/<target>.result.
fuzz_one() { # target seconds
    local target="$1" seconds="$2"
    local corpus="$OUT/corpus/$target" artifacts="$OUT/artifacts/$target/"
    local log="$OUT/logs/$target.log"
    mkdir -p "$corpus" "$artifacts"
    local -a options=(
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len="$(max_len "$target")"
        -len_control=0 -print_final_stats=1 -artifact_prefix="$artifacts"
    )
    [[ -f "$ROOT/Fuzz/$target/dictionary.txt" ]] && options+=(-dict="$ROOT/Fuzz/$target/dictionary.txt")
    local -a extra=()
    [[ -n "${FUZZ_ARGS:-}" ]] && read -r -a extra <<<"$FUZZ_ARGS"
    local status=0
    # New inputs go to the first directory; the seeds are only read.
    "$BIN/Fuzz$target" "${options[@]}" "${extra[@]}" "$corpus" "$ROOT/Fuzz/corpus/$target" >"$log" 2>&1 &
    echo $! >"$OUT/logs/$target.pid"
    wait $! || status=$?
    # A target that ran nothing, or without coverage, found nothing either.
    if ((status == 0)) && { ! grep -q -E '^Done [0-9]+ runs' "$log" || grep -q 'instrumented for coverage' "$log"; }; then
        status=1
    fi
    echo "$status" >"$OUT/logs/$target.result"
}

# Stops the fuzzers this script started (by their process ids), after an interrupt.
stop_fuzzers() {
    local file
    for file in "$OUT"/logs/*.pid; do
        [[ -f "$file" ]] && kill "$(cat "$file")" 2>/dev/null
    done
    wait
    exit 130
}

# One summary line from a finished target's log.
summarize() { # target
    local target="$1" log="$OUT/logs/$1.log"
    local status
    status="$(cat "$OUT/logs/$target.result" 2>/dev/null || echo '?')"
    local last execs runs
    last="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
    execs="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    local cov ft corp
    cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")"
    ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
    corp="$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")"
    printf '%-14s %-6s runs %-10s exec/s %-8s cov %-6s ft %-6s corpus %s\n' "$target" \
        "$([[ "$status" == 0 ]] && echo ok || echo FAIL)" "${runs:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
        "${corp:-?}"
}

run() {
    local seconds=20
    if (($# > 0)) && [[ "$1" =~ ^[0-9]+$ ]]; then
        seconds="$1"
        shift
    fi
    ((seconds > 0)) || die "SECONDS_EACH must be positive"
    local -a selected=("$@")
    ((${#selected[@]} > 0)) || selected=("${TARGETS[@]}")
    local target
    for target in "${selected[@]}"; do is_target "$target" || die "no target $target (${TARGETS[*]})"; done
    local started=$SECONDS
    build
    fuzzer_environment
    mkdir -p "$OUT/logs"
    local jobs="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}"
    ((jobs >= 1)) || jobs=1
    echo "fuzz.sh: fuzzing ${selected[*]} for $seconds s each, $jobs at a time; logs in ${OUT#"$ROOT/"}/logs"
    local running=0
    rm -f "$OUT"/logs/*.pid
    trap stop_fuzzers INT TERM
    for target in "${selected[@]}"; do
        rm -f "$OUT/logs/$target.result"
        if ((running >= jobs)); then
            wait -n || true
            running=$((running - 1))
        fi
        fuzz_one "$target" "$seconds" &
        running=$((running + 1))
    done
    wait || true
    trap - INT TERM
    rm -f "$OUT"/logs/*.pid

    local failed=0
    for target in "${selected[@]}"; do
        summarize "$target"
        if [[ "$(cat "$OUT/logs/$target.result" 2>/dev/null)" != 0 ]]; then
            failed=1
            local log="$OUT/logs/$target.log"
            local input
            input="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
            # From the first report line: the assertion's message or the sanitizer's, and the stack.
            local first
            first="$(grep -n -m1 -E 'Fatal error|ERROR: |ALARM: |SUMMARY: ' "$log" | cut -d: -f1 || true)"
            echo "---- $target failed; from $log:" >&2
            if [[ -n "$first" ]]; then
                tail -n "+$first" "$log" | grep -v -E '^#[0-9]+|^ +0x[0-9a-f]+:|Shadow' | head -40 >&2 || true
            else
                grep -v -E '^#[0-9]+' "$log" | tail -40 >&2 || true
            fi
            if [[ -n "$input" ]]; then
                echo "---- crash input: $input" >&2
                echo "     replay with: Scripts/fuzz.sh reproduce $target $input" >&2
            fi
        fi
    done
    echo "fuzz.sh: done in $((SECONDS - started)) s"
    ((failed == 0))
}

reproduce() {
    (($# == 2)) || usage
    is_target "$1" || die "no target $1 (${TARGETS[*]})"
    [[ -f "$2" ]] || die "no file $2"
    build >&2
    fuzzer_environment
    exec "$BIN/Fuzz$1" -rss_limit_mb=2048 -timeout=10 "$2"
}

case "${1:-}" in
build)
    (($# == 1)) || usage
    build
    ;;
run)
    shift
    run "$@"
    ;;
reproduce)
    shift
    reproduce "$@"
    ;;
*) usage ;;
esac
