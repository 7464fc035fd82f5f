#!/usr/bin/env bash
# Abuse run: the daemon under the floods a shared CI machine throws at a service by mistake or
# by malice, one after another, while a well-behaved provider keeps sending over both protocols
# on connections it opened before. Prints one table: each attack, the probe's latency (send to
# popped through the control API) median and max during it, the daemon's resident memory and
# threads before, during and after, the notifications the probe sent against those that
# arrived, and how many of the probe's `next` requests the control API answered 503 for being
# past its connection limit (the probe then finds the notification in the history list). The
# run fails when a probe notification is lost, when the probe or /healthz went
# unanswered, or when resident memory does not come back under ABUSE_RSS_AFTER_MB.
#
#   Scripts/abuse.sh
#   ABUSE_SCALE=2 Scripts/abuse.sh      # twice the connections per attack
#
# Environment:
#   ABUSE_SCALE         multiplies every attack's connection count (default 1)
#   ABUSE_HOLD          seconds each attack is held once in place (default 5)
#   ABUSE_RSS_AFTER_MB  resident memory the daemon must be back under after each attack (default 120)
#   ABUSE_SKIP_BUILD    1: use the fake-apns already built (release)
#   ABUSE_BINARY        another fake-apns to attack
#   ABUSE_ARGS          extra daemon options, e.g. "--max-connections 500"
#
# The attacks, all on loopback:
#  - idle TCP to the gateway, to HTTP/2 and to the control API: connections that never send
#    a byte, more than the default descriptor limit (1,024) would allow;
#  - stalled handshakes: half a ClientHello, then nothing;
#  - idle TLS connections to the gateway, handshake done, and idle HTTP/2 connections, preface
#    and SETTINGS sent;
#  - oversized frames: a command-2 header claiming 4 GB, then nothing;
#  - control API long-polls (`next` for a token nobody sends) beside idle control connections;
#  - connection churn: connect and drop on every port as fast as a client can.
# Needs /usr/bin/python3 with python3-h2 (Scripts/install-dependencies.sh installs both).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/Scripts/install-dependencies.sh"
if [[ -n "${ABUSE_BINARY:-}" ]]; then
    BIN="$ABUSE_BINARY"
else
    if [[ "${ABUSE_SKIP_BUILD:-0}" != 1 ]]; then
        echo "Building fake-apns (release)..." >&2
        "$ROOT/Scripts/build-daemon" --if-stale
    fi
    BIN="$ROOT/.build/release/fake-apns"
fi
[[ -x "$BIN" ]] || { echo "abuse: $BIN is missing; build it first" >&2; exit 2; }

exec /usr/bin/python3 - "$BIN" "$ROOT" <<'PY'
import json, os, resource, shlex, signal, socket, ssl, statistics, struct, subprocess, sys, threading, time
import urllib.request, urllib.error
import h2.config, h2.connection, h2.events

BIN, ROOT = sys.argv[1], sys.argv[2]
SCALE = float(os.environ.get("ABUSE_SCALE", "1"))
HOLD = float(os.environ.get("ABUSE_HOLD", "5"))
RSS_AFTER_MB = float(os.environ.get("ABUSE_RSS_AFTER_MB", "120"))
CA = os.path.join(ROOT, "TestCerts/ca.pem")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

daemon = subprocess.Popen(
    [BIN, "--gateway-port", "0", "--feedback-port", "0", "--http2-port", "0", "--channels-port", "0", "--web-port", "0",
     "--log-file", "/dev/null"] + shlex.split(os.environ.get("ABUSE_ARGS", "")),
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
start = json.loads(daemon.stdout.readline())
PORTS = {listener["name"]: listener["port"] for listener in start["listeners"]}
API = "http://127.0.0.1:%d" % PORTS["web"]


def proc_status():
    fields = {}
    with open("/proc/%d/status" % daemon.pid) as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["Threads"])


def api(path, timeout=10, method="GET"):
    request = urllib.request.Request(API + path, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except Exception as error:
        return 0, str(error).encode()


def tls_context(alpn=None):
    context = ssl.create_default_context(cafile=CA)
    if alpn:
        context.set_alpn_protocols(alpn)
    return context


# MARK: - The probe: a provider that keeps one connection per protocol and sends all along.

class Probe:
    def __init__(self):
        self.lock = threading.Lock()
        self.samples = []          # (time, protocol, latency in ms or None when lost)
        self.sent = 0
        self.arrived = 0
        self.healthz_failures = 0
        self.beyond_limit = []     # when a `next` was answered 503 for the control API's limit
        self.stopping = False
        self.number = 0
        self.binary = tls_context().wrap_socket(
            socket.create_connection(("127.0.0.1", PORTS["gateway"])), server_hostname="localhost")
        raw = tls_context(["h2"]).wrap_socket(
            socket.create_connection(("127.0.0.1", PORTS["http2"])), server_hostname="localhost")
        self.h2socket = raw
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.h2.initiate_connection()
        raw.sendall(self.h2.data_to_send())
        self.thread = threading.Thread(target=self.run, daemon=True)

    def token(self):
        self.number += 1
        return "%064x" % (0xabc0000000000000 + self.number)

    def send_binary(self, token):
        payload = b'{"aps":{"alert":"probe"}}'
        raw = bytes.fromhex(token)
        self.binary.sendall(struct.pack("!BIIH", 1, self.number, 0, len(raw)) + raw
                            + struct.pack("!H", len(payload)) + payload)

    def send_http2(self, token):
        stream = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream, [
            (":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
            (":path", "/3/device/" + token), ("apns-topic", "com.example.app"), ("apns-push-type", "alert")])
        self.h2.send_data(stream, b'{"aps":{"alert":"probe"}}', end_stream=True)
        self.h2socket.sendall(self.h2.data_to_send())
        self.h2socket.settimeout(10)
        while True:
            data = self.h2socket.recv(65536)
            if not data:
                raise RuntimeError("the HTTP/2 connection closed")
            for event in self.h2.receive_data(data):
                if isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                    self.h2socket.sendall(self.h2.data_to_send())
                    return
            self.h2socket.sendall(self.h2.data_to_send())

    def run(self):
        while not self.stopping:
            for protocol in ("binary", "http2"):
                token = self.token()
                began = time.monotonic()
                try:
                    (self.send_binary if protocol == "binary" else self.send_http2)(token)
                    status, _ = api("/api/v1/notifications/next?timeout=10&token=" + token, timeout=15)
                    if status == 503:
                        # The control API is past its connection limit: a `next` there is
                        # answered 503 at once, other requests are served. Look it up instead.
                        with self.lock:
                            self.beyond_limit.append(time.monotonic())
                        status = self.look_up(token)
                except Exception as error:
                    print("probe: %s send failed: %s" % (protocol, error), file=sys.stderr)
                    status = 0
                latency = (time.monotonic() - began) * 1000
                with self.lock:
                    self.sent += 1
                    if status == 200:
                        self.arrived += 1
                    self.samples.append((time.monotonic(), protocol, latency if status == 200 else None))
            if api("/healthz", timeout=5)[0] != 200:
                with self.lock:
                    self.healthz_failures += 1
            time.sleep(0.02)

    def look_up(self, token):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            status, body = api("/api/v1/notifications?token=" + token, timeout=5)
            if status == 200 and json.loads(body)["notifications"]:
                return 200
            time.sleep(0.05)
        return 0

    def beyond_limit_in(self, begin, end):
        with self.lock:
            return sum(1 for moment in self.beyond_limit if begin <= moment <= end)

    def window(self, begin, end):
        with self.lock:
            return [sample for sample in self.samples if begin <= sample[0] <= end]


# MARK: - The attacks: each returns the sockets it holds (closed when the attack ends).

def connect_many(port, count, send=None):
    held = []
    for _ in range(count):
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
            if send:
                connection.sendall(send)
            held.append(connection)
        except OSError:
            pass
    return held


HALF_HELLO = bytes.fromhex("16030100c8010000c40303") + os.urandom(20)


def idle_tls(count, alpn=None):
    held = []
    context = tls_context(alpn)
    for _ in range(count):
        try:
            connection = context.wrap_socket(
                socket.create_connection(("127.0.0.1", PORTS["http2" if alpn else "gateway"]), timeout=5),
                server_hostname="localhost")
            if alpn:
                machine = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
                machine.initiate_connection()
                connection.sendall(machine.data_to_send())
            held.append(connection)
        except OSError:
            pass
    return held


def oversized(count):
    held = []
    context = tls_context()
    for _ in range(count):
        try:
            connection = context.wrap_socket(
                socket.create_connection(("127.0.0.1", PORTS["gateway"]), timeout=5), server_hostname="localhost")
            connection.sendall(struct.pack("!BI", 2, 0xFFFFFFF0))
            held.append(connection)
        except OSError:
            pass
    return held


def long_polls(waiters, idle):
    held = connect_many(PORTS["web"], idle)
    request = ("GET /api/v1/notifications/next?timeout=60&token=%s HTTP/1.1\r\nHost: x\r\n\r\n"
               % ("ee" * 32)).encode()
    held += connect_many(PORTS["web"], waiters, send=request)
    return held


def churn(seconds):
    deadline = time.monotonic() + seconds
    count = 0
    while time.monotonic() < deadline:
        for port in PORTS.values():
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                count += 1
            except OSError:
                pass
    return []


def scaled(count):
    return max(1, int(count * SCALE))


ATTACKS = [
    ("idle TCP to the gateway, %d" % scaled(1100), lambda: connect_many(PORTS["gateway"], scaled(1100))),
    ("idle TCP to HTTP/2, %d" % scaled(1100), lambda: connect_many(PORTS["http2"], scaled(1100))),
    ("idle TCP to the control API, %d" % scaled(1100), lambda: connect_many(PORTS["web"], scaled(1100))),
    ("stalled handshakes, %d" % scaled(1000), lambda: connect_many(PORTS["gateway"], scaled(1000), send=HALF_HELLO)),
    ("idle TLS to the gateway, %d" % scaled(1000), lambda: idle_tls(scaled(1000))),
    ("idle HTTP/2 connections, %d" % scaled(1000), lambda: idle_tls(scaled(1000), alpn=["h2"])),
    ("oversized frames, %d" % scaled(1000), lambda: oversized(scaled(1000))),
    ("control long-polls %d + idle %d" % (scaled(500), scaled(500)), lambda: long_polls(scaled(500), scaled(500))),
    ("connection churn, all ports, %g s" % HOLD, lambda: churn(HOLD)),
]

probe = Probe()
probe.thread.start()
time.sleep(1)
rows = []
failed = []
for name, attack in ATTACKS:
    before = proc_status()
    begin = time.monotonic()
    held = attack()
    peak = proc_status()
    hold_until = time.monotonic() + HOLD
    while time.monotonic() < hold_until:
        time.sleep(0.5)
        now = proc_status()
        peak = (max(peak[0], now[0]), max(peak[1], now[1]))
    end = time.monotonic()
    for connection in held:
        try:
            connection.close()
        except OSError:
            pass
    time.sleep(3)
    after = proc_status()
    samples = probe.window(begin, end)
    latencies = [sample[2] for sample in samples if sample[2] is not None]
    lost = sum(1 for sample in samples if sample[2] is None)
    if not latencies:
        failed.append("%s: the probe was not served" % name)
    if lost:
        failed.append("%s: %d probe notifications did not arrive" % (name, lost))
    if after[0] > RSS_AFTER_MB:
        failed.append("%s: %.0f MB resident after, over %g MB" % (name, after[0], RSS_AFTER_MB))
    rows.append((name, len(held), statistics.median(latencies) if latencies else float("nan"),
                 max(latencies) if latencies else float("nan"), before, peak, after, len(samples), len(samples) - lost,
                 probe.beyond_limit_in(begin, end)))

probe.stopping = True
probe.thread.join(30)
daemon.send_signal(signal.SIGTERM)
code = daemon.wait(10)
if code != 0:
    failed.append("the daemon exited with %s" % code)
if probe.healthz_failures:
    failed.append("/healthz failed %d times" % probe.healthz_failures)

print()
print("| attack | connections opened | probe median | probe max | RSS before / during / after | threads before / during / after | probe sent / arrived | `next` 503 |")
print("|---|---|---|---|---|---|---|---|")
for name, held, median, worst, before, peak, after, sent, arrived, beyond in rows:
    print("| %s | %d | %.1f ms | %.1f ms | %.0f / %.0f / %.0f MB | %d / %d / %d | %d / %d | %d |" % (
        name, held, median, worst, before[0], peak[0], after[0], before[1], peak[1], after[1], sent, arrived, beyond))
print()
print("probe in all: %d sent, %d arrived; /healthz failures: %d; daemon exit status %s" % (
    probe.sent, probe.arrived, probe.healthz_failures, code))
if failed:
    print("FAILED:\n  " + "\n  ".join(failed))
    sys.exit(1)
print("every attack: probe served, nothing lost, memory back under %g MB" % RSS_AFTER_MB)
PY
