#!/usr/bin/env bash
# Benchmark, each figure a ratio against a reference measured in the same run:
#  1. binary ingest: how fast FakeAPNs's binary gateway decodes and queues notifications sent
#     over one TLS connection, next to the bare TLS transfer of the same bytes (openssl
#     s_server);
#  2. HTTP/2: requests per second with h2load against the provider API, next to nghttpd
#     serving an empty answer for the same requests.
#
#   Scripts/bench.sh                 # 1,000,000 notifications, 3 runs of each
#   BENCH_RUNS=5 BENCH_COUNT=200000 Scripts/bench.sh
#
# Environment:
#   BENCH_COUNT        notifications per run (default 1000000)
#   BENCH_RUNS         runs of each side; the best and the median are reported (default 3)
#   BENCH_TIMEOUT      seconds one run may take before it counts as failed (default 120)
#   BENCH_SENDERS      which senders to measure with, comma-separated (default s_client,python)
#   BENCH_SCRATCH_PATH SwiftPM build folder (default: the package's .build); set it, e.g. to
#                      /tmp/bench-build, when another build holds the package's lock
#   BENCH_SKIP_BUILD   1: use the fake-apns-bench already built
#   BENCH_HTTP2        0: skip the HTTP/2 part (default 1)
#   BENCH_HTTP2_REQUESTS, BENCH_HTTP2_CLIENTS, BENCH_HTTP2_STREAMS
#                      h2load's -n, -c, -m (default 200000, 4, 100)
#
# Both receivers are fed by the same sender, one TLS connection each run:
#  - s_client: `openssl s_client -brief -nocommands -no_ign_eof`, its standard input a pipe the
#    driver fills from the cached notification file (sendfile) and keeps open, so s_client
#    never closes early. Timed from starting s_client (its start-up, ~tens of ms, included).
#    s_client moves 8 KiB per select/read/SSL_write round, which capped it near 3 million
#    frames/s on a 2-CPU VM: the bare-TLS figure with it measures s_client as much as TLS.
#  - python: a small python3 ssl client (same OpenSSL) that loads the file, then connects and
#    writes it in 1 MiB sendall calls. Timed from the moment it is told to connect. It is
#    the closer measure of what bare TLS on loopback can carry.
# FakeAPNs is timed until fake-apns-bench exits, having popped and checked every notification
# (identifiers 1...N, in order); s_server (stdout to /dev/null, -naccept 1) until it exits,
# which it does once the sender, its input closed after the whole file, closes the
# connection. An untimed run per sender first checks, by counting s_server's output, that
# the reference really receives every byte. Every side uses OpenSSL's defaults, so the same
# TLS version and cipher suite, which the report prints as negotiated.
#
# Exits 1 when FakeAPNs did not receive every notification or a run failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

COUNT="${BENCH_COUNT:-1000000}"
RUNS="${BENCH_RUNS:-3}"
TIMEOUT="${BENCH_TIMEOUT:-120}"
SENDERS="${BENCH_SENDERS:-s_client,python}"
SCRATCH=()
if [[ -n "${BENCH_SCRATCH_PATH:-}" ]]; then
    SCRATCH=(--scratch-path "$BENCH_SCRATCH_PATH")
fi

[[ "$COUNT" =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_COUNT must be a positive integer" >&2; exit 2; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_RUNS must be a positive integer" >&2; exit 2; }
[[ "$SENDERS" =~ ^(s_client|python)(,(s_client|python))*$ ]] || {
    echo "bench: BENCH_SENDERS is a comma-separated list of s_client and python" >&2; exit 2; }
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_TIMEOUT must be a positive integer" >&2; exit 2; }
command -v openssl >/dev/null || { echo "bench: openssl is needed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench: python3 is needed" >&2; exit 2; }

# 1. Build.
if [[ "${BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    echo "Building fake-apns-bench (release)..." >&2
    swift build -c release --product fake-apns-bench ${SCRATCH[@]+"${SCRATCH[@]}"} >&2
fi
BIN_DIR="$(swift build -c release ${SCRATCH[@]+"${SCRATCH[@]}"} --show-bin-path)"
BENCH_BIN="$BIN_DIR/fake-apns-bench"
[[ -x "$BENCH_BIN" ]] || { echo "bench: $BENCH_BIN is missing; build it first" >&2; exit 2; }

# 2. The notification file, generated once per count.
DATA_DIR="$ROOT/.build/bench"
DATA_FILE="$DATA_DIR/enhanced-v1-$COUNT.bin"
mkdir -p "$DATA_DIR"
if [[ ! -s "$DATA_FILE" ]]; then
    echo "Generating $COUNT enhanced notifications into $DATA_FILE..." >&2
    python3 - "$COUNT" "$DATA_FILE.tmp" <<'PY'
import struct, sys

count, path = int(sys.argv[1]), sys.argv[2]
PAYLOAD_SIZE = 100
token_prefix = bytes(range(0xA0, 0xA0 + 28))          # 28 fixed bytes + 4 from the number
header = struct.Struct(">BIIH32sH")                   # command, identifier, expiry, token length, token, payload length
expiry = 2_000_000_000
parts = []
for number in range(1, count + 1):
    text = '{"aps":{"alert":"Benchmark notification %07d","badge":1,"sound":"default"},"id":%d' % (number, number)
    pad = PAYLOAD_SIZE - len(text) - len(',"pad":""}')
    payload = (text + ',"pad":"' + "x" * max(pad, 0) + '"}').encode()
    parts.append(header.pack(1, number, expiry, 32, token_prefix + struct.pack(">I", number), len(payload)))
    parts.append(payload)
with open(path, "wb") as out:
    out.write(b"".join(parts))
PY
    mv "$DATA_FILE.tmp" "$DATA_FILE"
fi

# 3. Machine.
CPU_MODEL="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)"
echo "FakeAPNs ingest benchmark"
echo "  date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "  machine:  $(nproc) CPUs, ${CPU_MODEL:-unknown CPU}, $(uname -sr)"
echo "  openssl:  $(openssl version)"
echo "  swift:    $(swift --version 2>/dev/null | head -n1)"
echo "  input:    $COUNT enhanced (command 1) notifications, 32-byte tokens, 100-byte payloads," \
    "$(stat -c %s "$DATA_FILE") bytes"
echo "  runs:     $RUNS of each, interleaved"

# 4. Runs.
BINARY_STATUS=0
python3 - "$BENCH_BIN" "$DATA_FILE" "$COUNT" "$RUNS" "$TIMEOUT" "$ROOT/TestCerts" "$SENDERS" <<'PY' || BINARY_STATUS=$?
import fcntl, json, os, socket, statistics, subprocess, sys, tempfile, threading, time

bench_bin, data_file, count, runs, timeout, certs, senders = sys.argv[1:8]
count, runs, timeout = int(count), int(runs), float(timeout)
senders = senders.split(",")
file_size = os.path.getsize(data_file)
ca_file = os.path.join(certs, "ca.pem")
F_SETPIPE_SZ = 1031

# The python sender: loads the file, says "ready", waits for "go", connects, sends it all
# with large writes, says "sent", then keeps the connection open until its input ends, and
# closes it cleanly (close_notify, reading what the server sent, so no reset loses data).
PYTHON_SENDER = r'''
import socket, ssl, sys
port, path, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(path, "rb") as source:
    data = source.read()
context = ssl.create_default_context(cafile=ca)
print("ready", flush=True)
sys.stdin.readline()
with socket.create_connection(("127.0.0.1", port)) as raw:
    with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        view = memoryview(data)
        chunk = 1 << 20
        for offset in range(0, len(view), chunk):
            tls.sendall(view[offset:offset + chunk])
        print("sent", flush=True)
        print("Protocol version: %s\nCiphersuite: %s" % (tls.version(), tls.cipher()[0]), file=sys.stderr, flush=True)
        sys.stdin.read()
        tls.settimeout(10)
        try:
            tls.unwrap()
        except (OSError, ValueError):
            pass
'''


class RunFailed(Exception):
    pass


class Sender:
    """One sender process on one TLS connection to 127.0.0.1:port. `started` is when timing
    begins; `wait_sent` returns once every byte was handed to it; `finish` ends its input, after
    which it closes the connection."""

    def __init__(self, kind, port, stderr_file):
        self.kind, self.stderr_file, self.failure = kind, stderr_file, []
        if kind == "s_client":
            self.started = time.perf_counter()
            self.process = subprocess.Popen(
                ["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-brief", "-nocommands",
                 "-no_ign_eof", "-CAfile", ca_file],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr_file)
            try:
                fcntl.fcntl(self.process.stdin.fileno(), F_SETPIPE_SZ, 1 << 20)
            except OSError:
                pass
            self.thread = threading.Thread(target=self._feed, daemon=True)
            self.thread.start()
        else:
            self.process = subprocess.Popen(
                [sys.executable, "-c", PYTHON_SENDER, str(port), data_file, ca_file],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_file)
            if self.process.stdout.readline().strip() != b"ready":
                raise RunFailed("the python sender did not start: %s" % self.tls_text())
            self.started = time.perf_counter()
            self.process.stdin.write(b"go\n")
            self.process.stdin.flush()
            self.thread = threading.Thread(target=self._await_sent, daemon=True)
            self.thread.start()

    def _feed(self):
        try:
            with open(data_file, "rb") as source:
                offset = 0
                while offset < file_size:
                    sent = os.sendfile(self.process.stdin.fileno(), source.fileno(), offset, file_size - offset)
                    if sent == 0:
                        raise RunFailed("sendfile wrote nothing at offset %d" % offset)
                    offset += sent
        except Exception as error:  # a broken pipe when s_client died; reported by the caller
            self.failure.append(error)

    def _await_sent(self):
        if self.process.stdout.readline().strip() != b"sent":
            self.failure.append(RunFailed("the python sender stopped before sending everything"))

    def wait_sent(self, seconds):
        self.thread.join(seconds)
        if self.thread.is_alive() or self.failure:
            raise RunFailed("sending failed (%s): %s %s" % (
                self.kind, self.failure[0] if self.failure else "timeout", self.tls_text().strip()))

    def finish(self):
        try:
            self.process.stdin.close()
        except OSError:
            pass

    def stop(self):
        self.finish()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            stop(self.process)

    def tls_text(self):
        self.stderr_file.seek(0)
        return self.stderr_file.read().decode(errors="replace")

    def tls(self):
        fields = {}
        for line in self.tls_text().splitlines():
            key, colon, value = line.partition(":")
            if colon:
                fields[key.strip()] = value.strip()
        return "%s %s" % (fields.get("Protocol version", "?"), fields.get("Ciphersuite", "?"))


def stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_fakeapns(kind):
    server = subprocess.Popen(
        [bench_bin, "--count", str(count), "--timeout", str(int(timeout))],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sender = None
    with tempfile.TemporaryFile() as sender_err:
        try:
            line = server.stdout.readline().decode().strip()
            if not line.isdigit():
                server.wait(10)
                raise RunFailed("fake-apns-bench printed no port: %r %s" % (line, server.stderr.read().decode()))
            sender = Sender(kind, int(line), sender_err)
            try:
                output, errors = server.communicate(timeout=timeout + 10)
            except subprocess.TimeoutExpired:
                raise RunFailed("fake-apns-bench did not finish within %.0f s" % (timeout + 10))
            elapsed = time.perf_counter() - sender.started
            if server.returncode != 0:
                raise RunFailed("fake-apns-bench exited %d: %s\nsender (%s): %s" % (
                    server.returncode, errors.decode().strip(), kind, sender.tls_text().strip()))
            report = json.loads(output.decode().strip().splitlines()[-1])
            if report.get("received") != count:
                raise RunFailed("FakeAPNs received %s of %d notifications" % (report.get("received"), count))
            sender.wait_sent(10)
            sender.stop()
            return elapsed, report, sender.tls()
        finally:
            stop(server)
            if sender is not None:
                sender.finish()
                stop(sender.process)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port):
    """Whether something listens on 127.0.0.1:port, read from /proc (connecting would use up
    s_server's one accept)."""
    wanted = "0100007F:%04X" % port
    with open("/proc/net/tcp") as table:
        for row in table.readlines()[1:]:
            fields = row.split()
            if fields[1] == wanted and fields[3] == "0A":
                return True
    return False


def run_s_server(kind, count_bytes=False):
    port = free_port()
    # s_server closes the connection when its own input ends: give it a pipe never written.
    server = subprocess.Popen(
        ["openssl", "s_server", "-accept", "127.0.0.1:%d" % port,
         "-cert", os.path.join(certs, "server.pem"), "-key", os.path.join(certs, "server.key"),
         "-quiet", "-naccept", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE if count_bytes else subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    sender = None
    received = [0]
    counter = None
    if count_bytes:
        def drain():
            while True:
                chunk = server.stdout.read1(1 << 20)
                if not chunk:
                    return
                received[0] += len(chunk)
        counter = threading.Thread(target=drain, daemon=True)
        counter.start()
    with tempfile.TemporaryFile() as sender_err:
        try:
            deadline = time.monotonic() + 10
            while not listening(port):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RunFailed("s_server did not listen on %d: %s" % (port, server.stderr.read().decode()))
                time.sleep(0.01)
            sender = Sender(kind, port, sender_err)
            sender.wait_sent(timeout)
            sender.finish()   # the sender sends what is left, then closes; s_server then exits
            try:
                server.wait(timeout)
            except subprocess.TimeoutExpired:
                raise RunFailed("s_server did not finish within %.0f s" % timeout)
            elapsed = time.perf_counter() - sender.started
            sender.stop()
            if counter is not None:
                counter.join(10)
                if received[0] != file_size:
                    raise RunFailed("s_server received %d of %d bytes from %s" % (received[0], file_size, kind))
            return elapsed, sender.tls()
        finally:
            try:
                server.stdin.close()
            except OSError:
                pass
            stop(server)
            if sender is not None:
                sender.finish()
                stop(sender.process)


def rate(value):
    return "{:,.0f}".format(value)


failed = False
results = {}   # sender -> (FakeAPNs times, s_server times)
tls_seen = set()
try:
    for kind in senders:
        # Untimed: check that the reference really receives every byte from this sender (its
        # output counted here; the timed runs send it to /dev/null).
        _, tls = run_s_server(kind, count_bytes=True)
        tls_seen.add((kind, "s_server", tls))
        fake_times, ref_times = [], []
        results[kind] = (fake_times, ref_times)
        for run in range(1, runs + 1):
            elapsed, report, tls = run_fakeapns(kind)
            fake_times.append(elapsed)
            tls_seen.add((kind, "FakeAPNs", tls))
            print("  %-8s run %d  FakeAPNs %7.3f s  %11s notifications/s  (inside: %s/s between first and "
                  "last receivedAt, %d batches)" % (
                      kind, run, elapsed, rate(count / elapsed), rate(report["received_per_second"]),
                      report["batches"]), flush=True)
            elapsed, tls = run_s_server(kind)
            ref_times.append(elapsed)
            tls_seen.add((kind, "s_server", tls))
            print("  %-8s run %d  s_server %7.3f s  %11s frames/s" % (kind, run, elapsed, rate(count / elapsed)),
                  flush=True)
except RunFailed as error:
    print("bench: FAILED: %s" % error, file=sys.stderr)
    failed = True

print("  TLS negotiated: " + "; ".join(sorted({tls for _, _, tls in tls_seen})))
if any(fake and ref for fake, ref in results.values()):
    print()
    print("| %-9s | %-31s | %15s | %15s |" % ("sender", "receiver", "best", "median"))
    print("|%s|%s|%s|%s|" % ("-" * 11, "-" * 33, "-" * 17, "-" * 17))
    for kind, (fake, ref) in results.items():
        if not (fake and ref):
            continue
        best_fake, best_ref = count / min(fake), count / min(ref)
        median_fake, median_ref = count / statistics.median(fake), count / statistics.median(ref)
        print("| %-9s | %-31s | %15s | %15s |" % (kind, "FakeAPNs notifications/s", rate(best_fake), rate(median_fake)))
        print("| %-9s | %-31s | %15s | %15s |" % (kind, "bare TLS (s_server) frames/s", rate(best_ref), rate(median_ref)))
        print("| %-9s | %-31s | %14.1f%% | %14.1f%% |" % (
            kind, "FakeAPNs / bare TLS", 100 * best_fake / best_ref, 100 * median_fake / median_ref))
sys.exit(1 if failed else 0)
PY

# 5. HTTP/2: requests per second with h2load against FakeAPNs's provider API (the in-process
# sink, popping what arrives) and, in the same run, against nghttpd serving an empty file for
# the same path over TLS with the same certificate.
HTTP2_STATUS=0
if [[ "${BENCH_HTTP2:-1}" == 1 ]]; then
    if ! command -v h2load >/dev/null || ! command -v nghttpd >/dev/null; then
        echo "bench: h2load and nghttpd are needed for the HTTP/2 part (Debian nghttp2-client, nghttp2-server)" >&2
        exit 2
    fi
    REQUESTS="${BENCH_HTTP2_REQUESTS:-200000}"
    CLIENTS="${BENCH_HTTP2_CLIENTS:-4}"
    STREAMS="${BENCH_HTTP2_STREAMS:-100}"
    TOKEN="fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    WORK="$(mktemp -d)"
    trap 'rm -rf "$WORK"; pkill -P $$ nghttpd 2>/dev/null || true' EXIT
    printf '%s' '{"aps":{"alert":"Benchmark notification 0000001","badge":1,"sound":"default"},"id":1,"pad":"xxxxx"}' >"$WORK/body.json"
    mkdir -p "$WORK/root/3/device"
    : >"$WORK/root/3/device/$TOKEN"
    h2load_rate() { # port -> requests per second, or fails
        local out
        out="$(h2load -n "$REQUESTS" -c "$CLIENTS" -m "$STREAMS" -d "$WORK/body.json" \
            -H "apns-topic: com.example.app" -H "apns-push-type: alert" \
            "https://127.0.0.1:$1/3/device/$TOKEN")" || return 1
        grep -q "status codes: $REQUESTS 2xx" <<<"$out" || { echo "$out" >&2; return 1; }
        sed -n 's/^finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p' <<<"$out"
    }
    echo
    echo "HTTP/2: $REQUESTS POST requests, h2load -c $CLIENTS -m $STREAMS, TLS with ALPN h2"
    fake_rates=()
    ref_rates=()
    for run in $(seq 1 "$RUNS"); do
        exec {SINK}< <("$BENCH_BIN" --http2 --count "$REQUESTS" --timeout "$TIMEOUT")
        read -r -u "$SINK" PORT
        if rate="$(h2load_rate "$PORT")"; then
            fake_rates+=("$rate")
            printf '  run %d  FakeAPNs  %12.0f requests/s\n' "$run" "$rate"
        else
            echo "bench: FAILED: h2load against FakeAPNs" >&2
            HTTP2_STATUS=1
        fi
        cat <&"$SINK" >/dev/null || true
        exec {SINK}<&-
        NG_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
        nghttpd -d "$WORK/root" "$NG_PORT" "$ROOT/TestCerts/server.key" "$ROOT/TestCerts/server.pem" >/dev/null 2>&1 &
        NG_PID=$!
        for _ in $(seq 1 100); do
            (exec 3<>"/dev/tcp/127.0.0.1/$NG_PORT") 2>/dev/null && break
            sleep 0.05
        done
        if rate="$(h2load_rate "$NG_PORT")"; then
            ref_rates+=("$rate")
            printf '  run %d  nghttpd   %12.0f requests/s\n' "$run" "$rate"
        else
            echo "bench: FAILED: h2load against nghttpd" >&2
            HTTP2_STATUS=1
        fi
        kill "$NG_PID" 2>/dev/null || true
        wait "$NG_PID" 2>/dev/null || true
    done
    if ((${#fake_rates[@]} > 0 && ${#ref_rates[@]} > 0)); then
        python3 - "${fake_rates[*]}" "${ref_rates[*]}" <<'PY'
import statistics, sys
fake = [float(x) for x in sys.argv[1].split()]
ref = [float(x) for x in sys.argv[2].split()]
rate = lambda v: "{:,.0f}".format(v)
print()
print("| %-9s | %-31s | %15s | %15s |" % ("h2load", "receiver", "best", "median"))
print("|%s|%s|%s|%s|" % ("-" * 11, "-" * 33, "-" * 17, "-" * 17))
print("| %-9s | %-31s | %15s | %15s |" % ("http2", "FakeAPNs requests/s", rate(max(fake)), rate(statistics.median(fake))))
print("| %-9s | %-31s | %15s | %15s |" % ("http2", "nghttpd requests/s", rate(max(ref)), rate(statistics.median(ref))))
print("| %-9s | %-31s | %14.1f%% | %14.1f%% |" % ("http2", "FakeAPNs / nghttpd", 100 * max(fake) / max(ref),
      100 * statistics.median(fake) / statistics.median(ref)))
PY
    fi
fi
exit $((BINARY_STATUS | HTTP2_STATUS))
