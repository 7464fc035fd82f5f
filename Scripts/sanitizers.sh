#!/usr/bin/env bash
# Runs tests under Swift's sanitizers, each in its own build folder (.build/sanitize-NAME).
#
#   Scripts/sanitizers.sh                  # thread sanitizer on the concurrency-heavy tests
#   Scripts/sanitizers.sh thread all       # thread sanitizer on the whole suite
#   Scripts/sanitizers.sh address all      # address sanitizer on the whole suite
#
# A report from the sanitizer fails the run. Under the address sanitizer the leak checker is
# off for `swift test`: swift-corelibs-xctest never frees its test cases, so everything a test
# case holds would be reported. Leaks are checked on the daemon instead: when python3 is
# installed, the sanitized fake-apns goes through a short soak (Scripts/soak.sh) and its leak
# report at exit fails the run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SANITIZER="${1:-thread}"
SCOPE="${2:-concurrency}"
case "$SANITIZER" in
    thread | address) ;;
    *) echo "sanitizers: the sanitizer is thread or address, not '$SANITIZER'" >&2; exit 64 ;;
esac
FILTER=()
case "$SCOPE" in
    concurrency)
        FILTER=(--filter 'FakeAPNsTests\.(GatewayTests|MailboxTests|AsyncPopScaleTests|ServerLifecycleTests|HTTP2Tests|RegistryAndFaultTests|HistoryAndEventsTests|FeedbackTests|LoadTests|PolicyConcurrencyTests|HTTP2GoAwayTests|QuickClientPollingTests|PlaintextListenerTests)|FakeAPNsDaemonTests\.(ControlAPITests|EventLogTests)')
        ;;
    all) ;;
    *) echo "sanitizers: the scope is concurrency or all, not '$SCOPE'" >&2; exit 64 ;;
esac

SCRATCH=".build/sanitize-$SANITIZER"
swift build --build-tests --sanitize="$SANITIZER" --scratch-path "$SCRATCH"
LOG="$SCRATCH/test-output.txt"
status=0
# Sanitizer reports go to standard error; keep them and fail on any.
TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0 second_deadlock_stack=1}" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" \
    swift test --skip-build --sanitize="$SANITIZER" --scratch-path "$SCRATCH" ${FILTER[@]+"${FILTER[@]}"} 2>&1 \
    | tee "$LOG" | grep -E "Executed|error:|WARNING: ThreadSanitizer|ERROR: AddressSanitizer|SUMMARY" || true
if grep -qE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer" "$LOG"; then
    echo "sanitizers: $SANITIZER sanitizer reported problems; see $LOG" >&2
    status=1
fi
if grep -qE "with [1-9][0-9]* failures?|error: Process .* exited" "$LOG"; then
    echo "sanitizers: tests failed under the $SANITIZER sanitizer; see $LOG" >&2
    status=1
fi
if [[ "$SANITIZER" == address ]] && command -v python3 >/dev/null; then
    echo "sanitizers: soaking the sanitized daemon for its leak report"
    if ! SOAK_BINARY="$(swift build --sanitize=address --scratch-path "$SCRATCH" --show-bin-path)/fake-apns" \
        SOAK_SECONDS="${SANITIZER_SOAK_SECONDS:-20}" SOAK_WARMUP=5 "$ROOT/Scripts/soak.sh"; then
        echo "sanitizers: the sanitized daemon failed its soak" >&2
        status=1
    fi
fi
exit "$status"
