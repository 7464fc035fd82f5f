#!/usr/bin/env bash
# libFuzzer targets for FakeAPNs's input parsers (see Fuzz/):
#
#   Scripts/fuzz.sh build                          builds the four targets into .build/fuzz/
#   Scripts/fuzz.sh run [SECONDS_EACH] [TARGET...]  builds if needed, fuzzes each target for
#                                                  SECONDS_EACH (default 20), two at a time on a
#                                                  2-core machine; fails naming the crash input
#   Scripts/fuzz.sh reproduce TARGET FILE          replays one input through TARGET
#
# Targets: BinaryDecoder, HTTP2Request, ProviderToken, ControlAPI. Each starts from its seeds in
# Fuzz/corpus/<TARGET>/ (read only) plus what earlier runs found in .build/fuzz/corpus/<TARGET>/,
# where new inputs go; crash inputs go to .build/fuzz/artifacts/<TARGET>/.
#
# The targets are built without Package.swift: swiftc compiles the FakeAPNs sources as a module
# (-enable-testing, so a target's `@testable import FakeAPNs` sees internal types), clang the C
# shims, and each target links against them, all with -sanitize=fuzzer,address. The control API
# target is compiled into the FakeAPNsDaemon module itself, whose request types are internal.
#
# Environment: FUZZ_JOBS (targets run at once; default: the number of cores),
# FUZZ_ARGS (extra libFuzzer flags, e.g. "-use_value_profile=1 -only_ascii=1"),
# FUZZ_DIR (output directory instead of .build/fuzz).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${FUZZ_DIR:-$ROOT/.build/fuzz}"
TARGETS=(BinaryDecoder HTTP2Request ProviderToken ControlAPI)
# The C shim targets, each a directory of Sources/ with its header in include/.
SHIMS=(COpenSSLShims CNGHTTP2Shims CPOSIXShims CMicroHTTPDShims)

usage() {
    sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
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
    esac
}

# MARK: - Build

find_tools() {
    SWIFTC="$(command -v swiftc)" || die "swiftc is not on PATH (install Swift 6.3 first)"
    # The toolchain's own clang: its sanitizer runtimes are the ones swiftc links.
    TOOLBIN="$(dirname "$(readlink -f "$SWIFTC")")"
    CLANG="$TOOLBIN/clang"
    [[ -x "$CLANG" ]] || CLANG="$(command -v clang)" || die "no clang next to swiftc nor on PATH"
    command -v pkg-config >/dev/null || die "pkg-config is missing; run Scripts/install-dependencies.sh"
    local package
    for package in openssl libnghttp2 libmicrohttpd; do
        pkg-config --exists "$package" || die "$package development files are missing; run Scripts/install-dependencies.sh"
    done
}

# Every input of the build, hashed: the build is skipped when nothing changed.
build_stamp() {
    {
        "$SWIFTC" --version 2>&1
        cat "${BASH_SOURCE[0]}"
        find "$ROOT/Sources/FakeAPNs" "$ROOT/Sources/FakeAPNsDaemon" "${SHIMS[@]/#/$ROOT/Sources/}" \
            "$ROOT/Sources/COpenSSL" "$ROOT/Sources/CNGHTTP2" \
            "$ROOT/Sources/CMicroHTTPD" "$ROOT/Fuzz" -path "$ROOT/Fuzz/corpus" -prune -o -type f -print |
            LC_ALL=C sort | while IFS= read -r file; do
            echo "$file"
            cat "$file"
        done
    } | sha256sum | cut -d' ' -f1
}

is_built() {
    local target
    [[ -f "$OUT/build.stamp" && "$(cat "$OUT/build.stamp")" == "$(build_stamp)" ]] || return 1
    for target in "${TARGETS[@]}"; do [[ -x "$OUT/$target" ]] || return 1; done
}

build() {
    find_tools
    if is_built; then
        echo "fuzz.sh: the targets in ${OUT#"$ROOT/"} are up to date"
        return 0
    fi
    local started=$SECONDS
    local obj="$OUT/obj"
    rm -rf "$obj" "$OUT/build.stamp"
    mkdir -p "$obj/logs"

    # SwiftPM writes these module maps for the C targets; so does this script.
    local shim
    local -a shim_includes=() shim_modules=()
    for shim in "${SHIMS[@]}"; do
        mkdir -p "$obj/modules/$shim"
        printf 'module %s {\n    umbrella "%s"\n    export *\n}\n' "$shim" "$ROOT/Sources/$shim/include" \
            >"$obj/modules/$shim/module.modulemap"
        shim_includes+=(-I "$ROOT/Sources/$shim/include")
        shim_modules+=(-I "$obj/modules/$shim")
    done

    local -a cflags
    read -r -a cflags <<<"$(pkg-config --cflags openssl libnghttp2 libmicrohttpd)"
    local -a libs
    read -r -a libs <<<"$(pkg-config --libs openssl libnghttp2 libmicrohttpd)"
    # shellcheck disable=SC2054 # -sanitize=fuzzer,address is one flag
    local -a swiftflags=(
        -sanitize=fuzzer,address -O -g -swift-version 6 -package-name FakeAPNs -enable-upcoming-feature ExistentialAny
        -I "$ROOT/Sources/COpenSSL" -I "$ROOT/Sources/CNGHTTP2" -I "$ROOT/Sources/CMicroHTTPD"
        "${shim_modules[@]}" -I "$obj/modules"
    )
    local flag
    for flag in "${cflags[@]}"; do swiftflags+=(-Xcc "$flag"); done

    local -a library_sources daemon_sources
    mapfile -t library_sources < <(find "$ROOT/Sources/FakeAPNs" -name '*.swift' | LC_ALL=C sort)
    mapfile -t daemon_sources < <(find "$ROOT/Sources/FakeAPNsDaemon" -name '*.swift' | LC_ALL=C sort)

    # Each step logs to obj/logs/<step>.log; run_step prints the log of a step that fails.
    run_step() { # name command...
        local name="$1"
        shift
        if ! "$@" >"$obj/logs/$name.log" 2>&1; then
            echo "fuzz.sh: building $name failed:" >&2
            cat "$obj/logs/$name.log" >&2
            return 1
        fi
    }

    echo "fuzz.sh: building ${TARGETS[*]} into ${OUT#"$ROOT/"} (about a minute)"
    # The C shims.
    local c_objects=() file object
    for shim in "${SHIMS[@]}"; do
        for file in "$ROOT/Sources/$shim"/*.c; do
            object="$obj/$shim-$(basename "$file" .c).o"
            run_step "clang-$(basename "$object" .o)" "$CLANG" -fsanitize=fuzzer-no-link,address -O2 -g -c "$file" \
                "${shim_includes[@]}" "${cflags[@]}" -o "$object"
            c_objects+=("$object")
        done
    done

    # The library's object code (the long step) runs beside its interface, which the targets
    # and the daemon module need first.
    run_step FakeAPNs-object "$SWIFTC" "${swiftflags[@]}" -wmo -parse-as-library -enable-testing \
        -module-name FakeAPNs -c "${library_sources[@]}" -o "$obj/FakeAPNs.o" &
    local library_job=$!
    local status=0
    (
        run_step FakeAPNs-module "$SWIFTC" "${swiftflags[@]}" -wmo -parse-as-library -enable-testing \
            -module-name FakeAPNs -emit-module -emit-module-path "$obj/modules/FakeAPNs.swiftmodule" \
            "${library_sources[@]}" &&
            run_step FakeAPNsDaemon "$SWIFTC" "${swiftflags[@]}" -wmo -parse-as-library -warnings-as-errors \
                -module-name FakeAPNsDaemon -c "${daemon_sources[@]}" "$ROOT/Fuzz/ControlAPI/main.swift" \
                -o "$obj/ControlAPI.o" &&
            for target in BinaryDecoder HTTP2Request ProviderToken; do
                run_step "$target" "$SWIFTC" "${swiftflags[@]}" -wmo -parse-as-library -warnings-as-errors \
                    -module-name "Fuzz$target" -c "$ROOT/Fuzz/$target/main.swift" -o "$obj/$target.o" || exit 1
            done
    ) || status=1
    wait "$library_job" || status=1
    ((status == 0)) || die "build failed"

    local target
    for target in "${TARGETS[@]}"; do
        run_step "link-$target" "$SWIFTC" -sanitize=fuzzer,address -emit-executable \
            "$obj/$target.o" "$obj/FakeAPNs.o" "${c_objects[@]}" "${libs[@]}" -o "$OUT/$target" ||
            die "build failed"
    done
    build_stamp >"$OUT/build.stamp"
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
    "$OUT/$target" "${options[@]}" "${extra[@]}" "$corpus" "$ROOT/Fuzz/corpus/$target" >"$log" 2>&1 &
    echo $! >"$OUT/logs/$target.pid"
    wait $! || status=$?
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
    exec "$OUT/$1" -rss_limit_mb=2048 -timeout=10 "$2"
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
