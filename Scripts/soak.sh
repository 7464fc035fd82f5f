#!/usr/bin/env bash
# Soak run: the daemon under continuous connection churn for a few minutes, its memory, open
# file descriptors and threads sampled as it goes, and compared, idle before and idle after,
# at the end.
#
#   Scripts/soak.sh              # 180 s of load after a 20 s warm-up
#   SOAK_SECONDS=600 Scripts/soak.sh
#
# Environment:
#   SOAK_SECONDS        seconds of load after the warm-up (default 180)
#   SOAK_WARMUP         seconds of the same load first, so the retention store fills and
#                       every allocator arena exists before the baseline (default 20)
#   SOAK_WORKERS        binary-gateway client threads (default 8)
#   SOAK_SCRATCH_PATH   SwiftPM build folder (default: the package's .build)
#   SOAK_SKIP_BUILD     1: use the fake-apns already built
#   SOAK_BINARY         a fake-apns to soak instead of the release build, e.g. the address
#                       sanitizer's (.build/sanitize-address/debug/fake-apns after
#                       Scripts/sanitizers.sh address): its leak report, if any, is printed
#                       from .build/soak-daemon.err after the daemon stops
#
# The load, all on loopback, every client opening and closing its own connections:
#  - binary gateway: SOAK_WORKERS threads, each connecting, sending 1 to 200 enhanced
#    notifications, and closing, some cleanly, some by dropping the socket;
#  - one worker in five sends a malformed frame instead, gets its error response, and is closed;
#  - misbehaving clients: plain-TCP garbage, TLS handshakes abandoned half way, half frames
#    followed by a disconnect;
#  - the feedback service read now and then;
#  - HTTP/2: h2load runs of 2 connections and 500 requests each, back to back (when h2load
#    is installed);
#  - the control API listed and cleared now and then.
# The retention limit keeps the stored notifications at 10,000 (the default), so memory must
# settle. Baseline and final figures are taken with the load stopped and every client gone;
# the run fails when descriptors or threads do not come back to the baseline, when resident
# memory ends more than 10% (and 8 MiB) above it, or when the daemon stopped answering.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SECONDS_OF_LOAD="${SOAK_SECONDS:-180}"
WARMUP="${SOAK_WARMUP:-20}"
WORKERS="${SOAK_WORKERS:-8}"
for value in "$SECONDS_OF_LOAD" "$WARMUP" "$WORKERS"; do
    [[ "$value" =~ ^[1-9][0-9]*$ ]] || { echo "soak: SOAK_SECONDS, SOAK_WARMUP and SOAK_WORKERS are positive integers" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "soak: python3 is needed" >&2; exit 2; }
SCRATCH=()
[[ -n "${SOAK_SCRATCH_PATH:-}" ]] && SCRATCH=(--scratch-path "$SOAK_SCRATCH_PATH")
if [[ -n "${SOAK_BINARY:-}" ]]; then
    BIN="$SOAK_BINARY"
else
    if [[ "${SOAK_SKIP_BUILD:-0}" != 1 ]]; then
        echo "Building fake-apns (release)..." >&2
        # The daemon as shipped (Scripts/build-daemon's flags), unless built elsewhere.
        if ((${#SCRATCH[@]} == 0)); then
            "$ROOT/Scripts/build-daemon"
        else
            swift build -c release --product fake-apns -Xswiftc -warnings-as-errors "${SCRATCH[@]}" >&2
        fi
    fi
    BIN="$(swift build -c release ${SCRATCH[@]+"${SCRATCH[@]}"} --show-bin-path)/fake-apns"
fi
[[ -x "$BIN" ]] || { echo "soak: $BIN is missing; build it first" >&2; exit 2; }

exec python3 - "$BIN" "$ROOT" "$SECONDS_OF_LOAD" "$WARMUP" "$WORKERS" <<'PY'
import json, os, random, shutil, signal, socket, ssl, struct, subprocess, sys, threading, time
import urllib.request

binary, root, load_seconds, warmup, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
log_path = os.path.join(root, ".build", "soak-daemon.log")
os.makedirs(os.path.dirname(log_path), exist_ok=True)
if os.path.exists(log_path):
    os.remove(log_path)
errors_path = os.path.join(root, ".build", "soak-daemon.err")
errors_file = open(errors_path, "w")
daemon = subprocess.Popen(
    [binary, "--gateway-port", "0", "--feedback-port", "0", "--http2-port", "0", "--channels-port", "0", "--web-port", "0",
     "--log-file", log_path],
    stdout=subprocess.PIPE, stderr=errors_file, text=True)
start = json.loads(daemon.stdout.readline())
ports = {entry["name"]: entry["port"] for entry in start["listeners"]}
pid = daemon.pid

context = ssl.create_default_context(cafile=os.path.join(root, "TestCerts", "ca.pem"))
context.check_hostname = False

def frame(identifier, token):
    payload = b'{"aps":{"alert":"soak %d"}}' % identifier
    items = (struct.pack(">BH", 1, len(token)) + token
             + struct.pack(">BH", 2, len(payload)) + payload
             + struct.pack(">BHI", 3, 4, identifier)
             + struct.pack(">BHI", 4, 4, 0)
             + struct.pack(">BHB", 5, 1, 10))
    return struct.pack(">BI", 2, len(items)) + items

stop = threading.Event()
counts = {"sent": 0, "connections": 0, "errors": 0}
error_kinds = {}
counts_lock = threading.Lock()

def count(name, amount=1):
    with counts_lock:
        counts[name] += amount

def client_error(error):
    with counts_lock:
        counts["errors"] += 1
        kind = type(error).__name__ + ": " + str(error)[:80]
        error_kinds[kind] = error_kinds.get(kind, 0) + 1

def tls_connect(port):
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    return context.wrap_socket(raw, server_hostname="localhost")

def binary_worker(seed):
    rng = random.Random(seed)
    identifier = 0
    while not stop.is_set():
        try:
            connection = tls_connect(ports["gateway"])
            count("connections")
            if rng.random() < 0.2:
                connection.sendall(struct.pack(">BI", 2, 3) + b"\x09\x00\x00")   # unknown item: status 255
                connection.recv(6)
                connection.close()
                continue
            token = rng.randbytes(32)
            batch = b"".join(frame(identifier + i + 1, token) for i in range(rng.randint(1, 200)))
            identifier += 200
            connection.sendall(batch)
            count("sent", batch.count(b"soak"))
            if rng.random() < 0.5:
                connection.unwrap()
            connection.close()
        except (OSError, ssl.SSLError) as error:
            client_error(error)

def misbehaving_worker(seed):
    rng = random.Random(seed)
    while not stop.is_set():
        kind = rng.randrange(4)
        try:
            if kind == 0:      # plain TCP garbage
                with socket.create_connection(("127.0.0.1", ports["gateway"]), timeout=5) as s:
                    s.sendall(rng.randbytes(rng.randint(1, 4000)))
            elif kind == 1:    # a handshake abandoned half way
                with socket.create_connection(("127.0.0.1", ports["http2"]), timeout=5) as s:
                    s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + rng.randbytes(40))
            elif kind == 2:    # half a frame, then gone
                connection = tls_connect(ports["gateway"])
                connection.sendall(frame(1, rng.randbytes(32))[:17])
                connection.close()
            else:              # the feedback service
                connection = tls_connect(ports["feedback"])
                while connection.recv(4096):
                    pass
                connection.close()
            count("connections")
        except (OSError, ssl.SSLError) as error:
            client_error(error)
        time.sleep(0.01)  # pacing the load, not synchronisation

def api(method, path):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (ports["web"], path), method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()

def api_worker():
    while not stop.wait(2):
        try:
            api("GET", "/api/v1/notifications?limit=100")
            api("GET", "/metrics")
            if random.random() < 0.2:
                api("DELETE", "/api/v1/notifications")
        except OSError as error:
            client_error(error)

h2load = shutil.which("h2load")
def http2_worker():
    body = os.path.join(root, ".build", "soak-body.json")
    with open(body, "w") as f:
        f.write('{"aps":{"alert":"soak"}}')
    url = "https://127.0.0.1:%d/3/device/%s" % (ports["http2"], "ab" * 32)
    while not stop.is_set():
        subprocess.run([h2load, "-n", "500", "-c", "2", "-m", "10", "-d", body,
                        "-H", "apns-topic: com.example.soak", url],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

def proc_figures():
    with open("/proc/%d/status" % pid) as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    rss = int(status["VmRSS"].split()[0])
    threads = int(status["Threads"])
    fds = len(os.listdir("/proc/%d/fd" % pid))
    return rss, fds, threads

# The heap figures come from glibc's allocator, which a sanitizer's build does not use.
with open(binary, "rb") as f:
    sanitized = b"__asan_init" in f.read()
gdb = None if sanitized else shutil.which("gdb")
def heap_in_use():
    """Bytes the daemon has allocated and not freed (glibc's malloc_stats, called through gdb,
    which prints to the daemon's standard error), or None without gdb. Unlike resident memory,
    this does not count what the allocator keeps for reuse; gdb then has the allocator give
    back what it keeps (malloc_trim), so the resident figure read next is the daemon's own."""
    if not gdb:
        return None
    before = os.path.getsize(errors_path)
    subprocess.run([gdb, "-p", str(pid), "-batch", "-ex", "call (void)malloc_stats()",
                    "-ex", "call (int)malloc_trim(0)"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    with open(errors_path) as f:
        f.seek(before)
        report = f.read()
    total = report.split("Total (incl. mmap):")[-1]
    for line in total.splitlines():
        if line.startswith("in use bytes"):
            return int(line.split("=")[1])
    return None

def gauge(metrics, name):
    total = 0
    for line in metrics.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            total += float(line.rsplit(" ", 1)[1])
    return total

def run_load(seconds, label, sample_every=10):
    stop.clear()
    threads = [threading.Thread(target=binary_worker, args=(i,)) for i in range(workers)]
    threads += [threading.Thread(target=misbehaving_worker, args=(1000 + i,)) for i in range(2)]
    threads.append(threading.Thread(target=api_worker))
    if h2load:
        threads.append(threading.Thread(target=http2_worker))
    for t in threads:
        t.start()
    began = time.monotonic()
    next_sample = began
    try:
        while time.monotonic() - began < seconds:
            if daemon.poll() is not None:
                sys.exit("soak: the daemon exited with status %d" % daemon.returncode)
            if time.monotonic() >= next_sample and label:
                rss, fds, nthreads = proc_figures()
                print("%6.0f s  rss %8d KiB  fds %5d  threads %5d  connections %8d  sent %10d" % (
                    time.monotonic() - began, rss, fds, nthreads, counts["connections"], counts["sent"]), flush=True)
                next_sample += sample_every
            time.sleep(0.2)  # the sampling period
    finally:
        stop.set()
        for t in threads:
            t.join()

def thread_names():
    names = []
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, task)) as f:
                names.append(f.read().strip())
        except FileNotFoundError:   # the thread ended while being listed
            pass
    return sorted(names)

def serving_threads():
    """Threads serving one connection: gateway-7, http2-12, MHD-connection, ..."""
    return [name for name in thread_names()
            if name == "MHD-connection" or name.rsplit("-", 1)[-1].isdigit()]

def settle():
    """Waits, at most 30 s, until the daemon holds no client connection (the control API's
    own included) and its threads and descriptors stay put for two seconds; then empties its stores (POST
    /api/v1/reset), so what is left is what the daemon holds for itself; returns the idle
    figures and the metrics from before the reset."""
    deadline = time.monotonic() + 30
    while True:
        metrics = api("GET", "/metrics").decode()
        if gauge(metrics, "fakeapns_connections_open") == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.05)  # polling a condition with a deadline
    api("POST", "/api/v1/reset")
    samples = []
    while True:
        samples = (samples + [(proc_figures(), thread_names(), len(os.listdir("/proc/%d/fd" % pid)))])[-3:]
        steady = len(samples) == 3 and all(sample[1:] == samples[0][1:] for sample in samples)
        if (steady and not serving_threads()) or time.monotonic() > deadline:
            return proc_figures(), metrics
        time.sleep(1)  # polling a condition with a deadline

try:
    print("fake-apns pid %d, ports %s; h2load %s" % (pid, ports, "yes" if h2load else "not installed (HTTP/2 skipped)"))
    print("warm-up: %d s" % warmup, flush=True)
    run_load(warmup, None)
    (rss0, fds0, threads0), _ = settle()
    heap0 = heap_in_use()
    if heap0 is not None:
        print("baseline before malloc_trim: rss %d KiB" % rss0)
        rss0 = proc_figures()[0]
    print("baseline (idle): rss %d KiB, fds %d, threads %d%s" % (
        rss0, fds0, threads0, "" if heap0 is None else ", heap in use %d KiB" % (heap0 >> 10)))
    print("  threads: " + ", ".join(thread_names()))
    print("load: %d s, %d binary workers, 2 misbehaving, control API%s" % (load_seconds, workers, ", h2load" if h2load else ""), flush=True)
    counts.update(sent=0, connections=0, errors=0)
    error_kinds.clear()
    run_load(load_seconds, "load")
    (rss1, fds1, threads1), metrics = settle()
    accepted = gauge(metrics, "fakeapns_notifications_accepted_total")
    heap1 = heap_in_use()
    if heap1 is not None:
        print("final before malloc_trim: rss %d KiB" % rss1)
        rss1 = proc_figures()[0]
    print("final (idle):    rss %d KiB, fds %d, threads %d%s; stored %d, waiting in queues %d, log %d MiB" % (
        rss1, fds1, threads1, "" if heap1 is None else ", heap in use %d KiB" % (heap1 >> 10),
        gauge(metrics, "fakeapns_stored"), gauge(metrics, "fakeapns_queue_depth"), os.path.getsize(log_path) >> 20))
    print("during the load: %d client connections, %d binary notifications sent, %d client-side errors; the daemon accepted %d notifications in all"
          % (counts["connections"], counts["sent"], counts["errors"], accepted))
    for kind, number in sorted(error_kinds.items(), key=lambda item: -item[1]):
        print("  client-side error x%d: %s" % (number, kind))
    growth = rss1 - rss0
    problems = []
    if fds1 != fds0:
        problems.append("open descriptors %d -> %d" % (fds0, fds1))
    if threads1 != threads0:
        problems.append("threads %d -> %d" % (threads0, threads1))
    print("resident memory change: %+d KiB (%+.1f%%)" % (growth, 100.0 * growth / rss0))
    if heap0 is not None:
        heap_growth = (heap1 - heap0) >> 10
        print("heap in use change: %+d KiB (%+.1f%%)" % (heap_growth, 100.0 * (heap1 - heap0) / heap0))
        if heap_growth > max((heap0 >> 10) // 20, 2048):
            problems.append("heap in use grew by %d KiB" % heap_growth)
    if not sanitized and growth > max(rss0 // 10, 8192) and (heap0 is None or rss1 > 2 * rss0):
        problems.append("resident memory grew by %d KiB" % growth)
    if problems:
        print("threads now: " + ", ".join(thread_names()))
        print("descriptors now: " + ", ".join(sorted(
            os.readlink("/proc/%d/fd/%s" % (pid, fd)) for fd in os.listdir("/proc/%d/fd" % pid))))
        sockets = subprocess.run(["ss", "-anpe"], capture_output=True, text=True).stdout.splitlines()
        print("daemon's sockets now:\n  " + "\n  ".join(line for line in sockets if "pid=%d," % pid in line))
        print("soak: FAILED: " + "; ".join(problems))
        sys.exit(1)
    checked = ["descriptors", "threads"]
    if heap0 is not None:
        checked.append("heap in use")
    if not sanitized:
        checked.append("resident memory")
    print("soak: ok: %s came back to the baseline" % ", ".join(checked))
finally:
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        daemon.kill()
        sys.exit("soak: the daemon did not stop within 60 s of SIGTERM")
    errors_file.close()
    with open(errors_path) as f:
        report = f.read()
    if "ERROR: LeakSanitizer" in report or "ERROR: AddressSanitizer" in report:
        print(report[report.index("ERROR: "):][:6000])
        sys.exit("soak: FAILED: the sanitizer reported the problem above")
PY
