#!/usr/bin/python3
"""Drives the daemon's web page in a headless Chromium over the DevTools protocol
(python3-websocket) and prints one JSON object of what it saw and measured.

The page is opened first; then notifications are sent (HTTP/2 and binary, with fake-apns send)
and the rendered DOM is read, so the list is proved live. Before that, `--bulk` notifications are
stored over a raw binary (command 0) TLS connection to time the first render of a full history;
after it, notifications are streamed at `--rate` per second while the page is asked to answer.

Usage: web_page_driver.py --fake-apns PATH --web PORT --http2 PORT --gateway PORT
                          [--bulk 10000] [--rate 1000] [--screenshot FILE]
"""
import argparse, base64, contextlib, json, os, shutil, socket, ssl, struct, subprocess, tempfile, threading, time, urllib.request
import websocket

TOKEN_A = "a1" * 32
TOKEN_B = "b2" * 32
TOKEN_BAD = "c3" * 32
TOKEN_DEVICE = "d4" * 32
XSS_TITLE = "<script>window.__xss='script'</script>Title"
XSS_BODY = "<img src=x onerror=\"window.__xss='img'\"> body <b>bold</b>"
XSS_SUBTITLE = "<a href=\"javascript:window.__xss='link'\">click</a>"
XSS_TOPIC = "com.example.<i>topic</i>"


class Page:
    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def eval(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def until(self, expression, what, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                shown = self.eval("document.getElementById('list').innerText.slice(0, 2000)")
                raise RuntimeError(f"timed out waiting for {what}; the list shows: {shown}")
            time.sleep(0.1)


@contextlib.contextmanager
def chromium(width=1100, height=1000):
    """A headless Chromium with one blank page, as a `Page`; the browser is stopped on exit."""
    profile = tempfile.mkdtemp(prefix="fake-apns-chromium-")
    browser = subprocess.Popen(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if time.monotonic() > deadline or browser.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        devtools = int(open(port_file).read().split("\n")[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{devtools}/json/list", timeout=30))
        page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
        page.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        page.call("Page.enable")
        yield page
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=20)
        except subprocess.TimeoutExpired:
            browser.kill()
        shutil.rmtree(profile, ignore_errors=True)


def control(port, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read()
        return json.loads(text) if text else None


class BinarySender:
    """Binary command 0 frames over TLS, written by hand: an independent sender."""

    def __init__(self, port):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        self.socket = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30))

    def send(self, count, start=0):
        frames = bytearray()
        token = bytes.fromhex(TOKEN_B)
        for number in range(start, start + count):
            payload = json.dumps({"aps": {"alert": {"title": f"Bulk {number}", "body": "stored in bulk"}}, "n": number}).encode()
            frames += struct.pack(">BH", 0, len(token)) + token + struct.pack(">H", len(payload)) + payload
        self.socket.sendall(frames)

    def close(self):
        self.socket.close()


def stored(port):
    return len(control(port, "GET", "/api/v1/notifications?limit=100000")["notifications"])


def wait_stored(port, count, timeout=120):
    deadline = time.monotonic() + timeout
    while stored(port) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the daemon did not store {count} notifications")
        time.sleep(0.2)


def send(args, *extra):
    result = subprocess.run([args.fake_apns, "send", *extra], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"fake-apns send {' '.join(extra)}: {result.stdout} {result.stderr}")


def cards(expression="true"):
    return f"[...document.querySelectorAll('#list article')].filter(c => {expression}).length"


def arguments():
    """The options every page driver takes: the daemon's executable and ports, and a screenshot file."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--fake-apns", required=True)
    parser.add_argument("--web", type=int, required=True)
    parser.add_argument("--http2", type=int, required=True)
    parser.add_argument("--gateway", type=int, required=True)
    parser.add_argument("--screenshot")
    return parser


def main():
    parser = arguments()
    parser.add_argument("--bulk", type=int, default=10000)
    parser.add_argument("--rate", type=int, default=1000)
    args = parser.parse_args()
    report = {}
    with chromium() as page:
        # A full history first: the first render with it stored.
        sender = BinarySender(args.gateway)
        for start in range(0, args.bulk, 1000):
            sender.send(min(1000, args.bulk - start), start)
        wait_stored(args.web, args.bulk)
        page.call("Page.navigate", url=f"http://127.0.0.1:{args.web}/")
        page.until("window.fakeAPNs && window.fakeAPNs.firstRender !== null", "the first render", timeout=120)
        report["firstRenderMilliseconds"] = page.eval("window.fakeAPNs.firstRender")
        page.until(f"document.getElementById('count-stored').textContent === '{args.bulk}'", "the whole history", timeout=120)
        report["fullyLoadedMilliseconds"] = page.eval("performance.now()")
        report["bulkShown"] = page.eval("document.getElementById('count-stored').textContent")
        report["bulkFirstCard"] = page.eval("document.querySelector('#list article .title').textContent")
        report["bulkCards"] = page.eval(cards())

        page.eval("document.getElementById('clear').click()")
        page.until("document.getElementById('count-stored').textContent === '0' && " + cards() + " === 0", "the list to clear")
        report["clearedOnServer"] = stored(args.web) == 0

        # Live: the page is open, now the notifications come.
        send(args, "--port", str(args.http2), "--token", TOKEN_A, "--topic", XSS_TOPIC, "--title", XSS_TITLE,
             "--alert", XSS_BODY, "--badge", "7", "--sound", "default",
             "--custom", "markup=" + json.dumps("<svg onload=\"window.__xss='svg'\"></svg>"))
        send(args, "--protocol", "binary", "--port", str(args.gateway), "--token", TOKEN_B,
             "--json", json.dumps({"aps": {"alert": {"title": "Binary hello", "subtitle": XSS_SUBTITLE, "body": "over the gateway"}}}))
        send(args, "--port", str(args.http2), "--token", TOKEN_A, "--topic", "com.example.app", "--push-type", "background",
             "--priority", "5", "--content-available")
        send(args, "--port", str(args.http2), "--token", TOKEN_A, "--topic", "com.example.app.push-type.liveactivity",
             "--push-type", "liveactivity", "--json", json.dumps({"aps": {"event": "update", "timestamp": 1, "content-state": {"score": "2-1"}}}))
        control(args.web, "POST", "/api/v1/faults", {"match": {"token": TOKEN_BAD}, "action": {"respond": "BadDeviceToken"}, "times": "once"})
        subprocess.run([args.fake_apns, "send", "--port", str(args.http2), "--token", TOKEN_BAD, "--topic", "com.example.app",
                        "--alert", "refused"], capture_output=True, timeout=60)
        page.until(cards() + " === 5", "5 cards to appear live")
        report["liveCards"] = page.eval(cards())
        report["http2Card"] = page.eval("""(() => { const c = [...document.querySelectorAll('#list article.notification')]
            .find(c => c.querySelector('.title') && c.querySelector('.title').textContent.includes('Title'));
            return c ? {app: c.querySelector('.app').textContent, title: c.querySelector('.title').textContent,
            body: c.querySelector('.body').textContent, tags: c.querySelector('.tags').textContent} : null })()""")
        report["binaryCard"] = page.eval("""(() => { const c = [...document.querySelectorAll('#list article.notification')]
            .find(c => c.textContent.includes('Binary hello'));
            return c ? {title: c.querySelector('.title').textContent, subtitle: c.querySelector('.subtitle').textContent,
            tags: c.querySelector('.tags').textContent} : null })()""")
        report["kinds"] = page.eval("[...document.querySelectorAll('#list .tag.kind')].map(t => t.textContent)")
        report["rejectionCard"] = page.eval("""(() => { const c = document.querySelector('#list article.rejection');
            return c ? {reason: c.querySelector('.reason').textContent, meaning: c.querySelector('.meaning').textContent,
            tags: c.querySelector('.tags').textContent} : null })()""")
        report["rejectedCount"] = page.eval("document.getElementById('count-rejected').textContent")
        report["inert"] = page.eval("""({xss: window.__xss === undefined ? null : window.__xss,
            scripts: document.querySelectorAll('script').length,
            markupInList: document.querySelectorAll('#list script, #list img, #list svg, #list b, #list i, #list a').length,
            literalScript: document.getElementById('list').textContent.includes("<script>window.__xss='script'</script>")})""")
        report["apnsFile"] = page.eval("""(() => { const item = window.fakeAPNs.notifications.find(n => n.format === 'http2' && n.payload.markup);
            return JSON.parse(simulatorFile(item)); })()""")
        if args.screenshot:
            page.eval("document.querySelector('#list article.notification details').open = true")
            shot = page.call("Page.captureScreenshot", format="png")
            with open(args.screenshot, "wb") as file:
                file.write(base64.b64decode(shot["data"]))
            page.eval("document.querySelector('#list article.notification details').open = false")

        def type_into(field, text):
            page.eval(f"(() => {{ const f = document.getElementById('{field}'); f.value = {json.dumps(text)};"
                      " f.dispatchEvent(new Event('input')); })()")
        type_into("filter-token", TOKEN_B[:10])
        page.until(cards() + " === 1", "the token filter")
        report["tokenFilter"] = page.eval("document.querySelector('#list article').textContent.includes('Binary hello')")
        type_into("filter-token", "")
        type_into("filter-topic", "liveactivity")
        page.until(cards() + " === 1", "the topic filter")
        type_into("filter-topic", "")
        type_into("filter-text", "refused")
        page.until(cards() + " === 1 && document.querySelector('#list article.rejection') !== null", "the text filter")
        type_into("filter-text", "")
        page.until(cards() + " === 5", "the filters to be cleared")
        report["filters"] = True

        # The device registry and the fault rules, through the page's own forms.
        page.eval("document.getElementById('show-devices').click()")
        page.eval(f"""(() => {{ const form = document.getElementById('device-form');
            form.token.value = '{TOKEN_DEVICE}'; form.topic.value = 'com.example.app';
            form.requestSubmit(); }})()""")
        page.until(f"document.getElementById('device-list').textContent.includes('{TOKEN_DEVICE}')", "the registered device")
        page.eval("document.getElementById('strict').click()")
        deadline = time.monotonic() + 30
        while not control(args.web, "GET", "/api/v1/devices")["strict"] and time.monotonic() < deadline:
            time.sleep(0.1)
        report["strictFromPage"] = control(args.web, "GET", "/api/v1/devices")["strict"]
        page.eval("document.getElementById('strict').click()")
        page.eval("document.querySelector('#device-list button').click()")
        page.until("document.getElementById('device-list').textContent.includes('unregistered')", "the unregistered device")
        report["deviceFromPage"] = control(args.web, "GET", "/api/v1/devices")["devices"]
        page.eval("document.getElementById('show-faults').click()")
        page.until("document.getElementById('fault-list').textContent.includes('hits 1')", "the fault rule listed with its hit")
        page.eval("""(() => { const form = document.getElementById('fault-form');
            form.matchKind.value = 'topic'; form.matchValue.value = 'com.example.never';
            form.actionKind.value = 'respond'; form.actionValue.value = 'TooManyRequests'; form.times.value = 'always';
            form.requestSubmit(); })()""")
        page.until("document.getElementById('fault-list').textContent.includes('com.example.never')", "the fault rule added from the page")
        report["faultsFromPage"] = [fault["description"] for fault in control(args.web, "GET", "/api/v1/faults")["faults"]]
        page.eval("[...document.querySelectorAll('#fault-list button')].pop().click()")
        page.until("!document.getElementById('fault-list').textContent.includes('com.example.never')", "the fault rule removed")
        report["faultsAfterRemove"] = len(control(args.web, "GET", "/api/v1/faults")["faults"])
        page.eval("document.getElementById('show-devices').click(); document.getElementById('show-faults').click()")

        # The sender audit's panel lists the report's findings (or says there is none).
        page.eval("document.getElementById('show-senders').click()")
        page.until("!document.getElementById('senders-hint').hidden"
                   " || document.querySelectorAll('#sender-list tr').length > 0", "the sender audit's panel")
        report["senderRows"] = page.eval("document.querySelectorAll('#sender-list tr').length")
        report["senderFindings"] = len(control(args.web, "GET", "/api/v1/sender-report")["findings"])
        page.eval("document.getElementById('show-senders').click()")

        # Pause keeps the list still while things arrive; resume shows them.
        page.eval("document.getElementById('pause').click()")
        send(args, "--port", str(args.http2), "--token", TOKEN_A, "--topic", "com.example.app", "--alert", "while paused")
        deadline = time.monotonic() + 30
        while page.eval("window.fakeAPNs.notifications.length") < 5 and time.monotonic() < deadline:
            time.sleep(0.1)
        report["pausedCards"] = page.eval(cards())
        page.eval("document.getElementById('pause').click()")
        page.until(cards() + " === 6", "the list to resume")

        # Streaming: `rate` a second for 3 seconds while the page is asked to answer.
        before = page.eval("window.fakeAPNs.frameGaps.length")
        stop = threading.Event()

        def stream():
            started = time.monotonic()
            sent = 0
            while not stop.is_set() and sent < args.rate * 3:
                sender.send(args.rate // 10, 100000 + sent)
                sent += args.rate // 10
                pause = started + sent / args.rate - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
        streamer = threading.Thread(target=stream)
        streamer.start()
        latencies = []
        while streamer.is_alive():
            began = time.monotonic()
            page.eval("document.querySelectorAll('#list article').length")
            latencies.append((time.monotonic() - began) * 1000)
            time.sleep(0.05)
        streamer.join()
        page.until(f"window.fakeAPNs.notifications.length >= {5 + args.rate * 3}", "the stream to arrive", timeout=120)
        gaps = page.eval(f"window.fakeAPNs.frameGaps.slice({before})")
        report["stream"] = {"evaluateMaxMilliseconds": round(max(latencies), 1),
                            "evaluateMedianMilliseconds": round(sorted(latencies)[len(latencies) // 2], 1),
                            "longestFrameMilliseconds": round(max(gaps), 1) if gaps else None,
                            "frames": len(gaps)}
        sender.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
