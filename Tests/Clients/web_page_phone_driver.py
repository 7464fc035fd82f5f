#!/usr/bin/python3
"""Drives the daemon's web page in a headless Chromium (as web_page_driver.py does) through one
phone's story and prints one JSON object of what the page drew:

- the page opens with no phone described (the hint);
- a phone is described offline (PATCH /api/v1/devices/<token>), three pushes are sent to it with
  fake-apns send (two to one app, the first of which storage overwrites, and a background push at
  priority 10 to another app, which the lint flags);
- the second push is selected in the stream, the phone is brought online with the page's own
  button, and the phone view, the selected push's delivery log and the lint marks are read.

If the daemon has no phones (the PATCH answers 404 or 405), it prints {"skipped": "<why>"}.

Then a burst of `--burst` pushes counts how often the page read the phones meanwhile.

Usage: web_page_phone_driver.py --fake-apns PATH --web PORT --http2 PORT --gateway PORT
                                [--burst 3000] [--screenshot FILE]
"""
import base64, json, os, sys, time, urllib.error
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_page_driver import BinarySender, arguments, chromium, control, send

PHONE = "e5" * 32
FIRST = "11111111-2222-4333-8444-000000000001"
SECOND = "11111111-2222-4333-8444-000000000002"
BACKGROUND = "11111111-2222-4333-8444-000000000003"
SECOND_TITLE = "Second <i>two</i>"


def phone(expression):
    """`expression` about the phone's panel `p`, as a page expression."""
    return (f"(() => {{ const p = document.querySelector('#phone-list article.phone[data-token=\"{PHONE}\"]');"
            f" return {expression}; }})()")


def card(apns_id):
    return f"document.querySelector('#list article[data-apns-id=\"{apns_id}\"]')"


STEPS = "[...p.querySelectorAll('.log .steps li')].map(s => s.querySelector('.step').textContent)"
STATUS = "[...p.querySelectorAll('.status li')].map(s => s.textContent)"
ENTRIES = """[...p.querySelectorAll('.entries li')].map(e => ({app: e.querySelector('.app').textContent,
    title: e.querySelector('.title') ? e.querySelector('.title').textContent : null,
    body: e.querySelector('.body') ? e.querySelector('.body').textContent : null,
    tags: [...e.querySelectorAll('.tag')].map(t => t.textContent),
    pressed: e.querySelector('button').getAttribute('aria-pressed')}))"""


def main():
    parser = arguments()
    parser.add_argument("--burst", type=int, default=3000)
    args = parser.parse_args()
    report = {}
    with chromium() as page:
        page.call("Page.navigate", url=f"http://127.0.0.1:{args.web}/")
        page.until("document.getElementById('phones-hint') && !document.getElementById('phones-hint').hidden",
                   "the hint that no phone is described")
        report["hint"] = page.eval("document.getElementById('phones-hint').textContent")

        try:
            control(args.web, "PATCH", f"/api/v1/devices/{PHONE}", {"online": False})
        except urllib.error.HTTPError as error:
            if error.code in (404, 405):
                print(json.dumps({"skipped": f"PATCH /api/v1/devices/<token> answers {error.code}: this daemon has no phones"}))
                return
            raise
        for extra in (["--apns-id", FIRST, "--title", "First", "--alert", "overwritten in storage"],
                      ["--apns-id", SECOND, "--title", SECOND_TITLE, "--alert", "the one kept"]):
            send(args, "--port", str(args.http2), "--token", PHONE, "--topic", "com.example.app", *extra)
        send(args, "--port", str(args.http2), "--token", PHONE, "--topic", "com.example.news", "--apns-id", BACKGROUND,
             "--push-type", "background", "--priority", "10", "--content-available")

        # The pushes' arrival refreshes the phones: the described phone appears, offline.
        page.until(phone("p !== null && p.querySelector('.status .offline') !== null"), "the phone, offline")
        report["hintHidden"] = page.eval("document.getElementById('phones-hint').hidden")
        page.until(f"{card(SECOND)} !== null && {card(SECOND)}.querySelector('.show-log') !== null",
                   "the second push's Delivery log button")
        page.eval(f"{card(SECOND)}.querySelector('.show-log').click()")
        page.until(phone("p.querySelector('.log .steps') !== null"), "the selected push's log on the offline phone")
        report["offline"] = page.eval(phone(f"({{status: {STATUS}, entries: {ENTRIES}, log: {STEPS}}})"))
        report["cardPressed"] = page.eval(f"{card(SECOND)}.querySelector('.show-log').getAttribute('aria-pressed')")

        # Online, from the page's own button: the stored push is delivered.
        page.eval(phone("p.querySelector('.online-toggle').click()"))
        page.until(phone("p.querySelector('.status .online') !== null && p.querySelectorAll('.entries li').length > 0"),
                   "the phone online with an entry")
        report["online"] = page.eval(phone(f"({{status: {STATUS}, entries: {ENTRIES}, log: {STEPS},"
                                           " heading: p.querySelector('.log h3').textContent})"))
        report["onlineOnServer"] = control(args.web, "GET", f"/api/v1/devices/{PHONE}")["settings"]["online"]
        report["markupInPhone"] = page.eval(phone("p.querySelectorAll('i, b, script, img').length"))

        # Pressing the entry on the phone unselects the push, pressing it again selects it again.
        page.eval(phone("p.querySelector('.entries button[aria-pressed=\"true\"]').click()"))
        page.until(phone("p.querySelector('.log') === null"), "the log gone once unselected")
        page.eval(phone("p.querySelector('.entries button').click()"))
        page.until(phone("p.querySelector('.log .steps') !== null"), "the log back once selected on the phone")
        report["reselected"] = page.eval(phone(STEPS))

        # The first push's log, selected in the stream.
        page.eval(f"{card(FIRST)}.querySelector('.show-log').click()")
        page.until(phone(f"p.querySelector('.log h3') !== null && p.querySelector('.log h3').textContent.includes('{FIRST}')"),
                   "the first push's log")
        report["firstLog"] = page.eval(phone(STEPS))
        # A Live Activity starts and a badge comes: the phone draws the daemon's screen as it is.
        send(args, "--port", str(args.http2), "--token", PHONE, "--topic", "com.example.app.push-type.liveactivity",
             "--push-type", "liveactivity", "--json", json.dumps({"aps": {
                 "event": "start", "timestamp": int(time.time()), "attributes-type": "ScoreAttributes",
                 "attributes": {"team": "<b>A</b>"}, "content-state": {"score": "0-0"}, "alert": {"title": "Kick-off"}}}))
        send(args, "--port", str(args.http2), "--token", PHONE, "--topic", "com.example.app", "--title", "Badge",
             "--alert", "three", "--badge", "3")
        page.until(phone("p.querySelector('.activities li') !== null && p.querySelector('.badges') !== null"),
                   "the Live Activity and the badge on the phone")
        report["screen"] = page.eval(phone("""({
            activities: [...p.querySelectorAll('.activities li')].map(a => ({bundle: a.querySelector('.app').textContent,
                state: a.querySelector('.state').textContent, contentState: JSON.parse(a.querySelector('.content-state').textContent)})),
            badges: Object.fromEntries([...p.querySelectorAll('.badges dt')].map(d => [d.textContent, Number(d.nextElementSibling.textContent)])),
            wakes: [...p.querySelectorAll('.wakes li .app')].map(w => w.textContent),
            titles: [...p.querySelectorAll('.entries .title')].map(t => t.textContent)})"""))
        screen = control(args.web, "GET", f"/api/v1/devices/{PHONE}/screen")
        report["screenFromAPI"] = {
            "activities": [{"bundle": a["bundle"], "state": a["state"], "contentState": a["contentState"]} for a in screen["liveActivities"]],
            "badges": screen["badges"], "wakes": [w["bundle"] for w in screen["wakes"]],
            "titles": [e["title"] for e in screen["notificationCenter"] if e["title"]]}

        for name, apns_id in (("firstLogFromAPI", FIRST), ("secondLogFromAPI", SECOND)):
            entries = control(args.web, "GET", f"/api/v1/devices/{PHONE}/log?apns-id={apns_id}")["entries"]
            report[name] = [entry["status"] for entry in entries]

        page.until(f"{card(BACKGROUND)} !== null", "the background push's card")
        report["lintMarks"] = page.eval(f"""[...{card(BACKGROUND)}.querySelectorAll('.lint .finding')].map(f => ({{
            level: f.className.replace('finding', '').trim(), summary: f.querySelector('summary').textContent,
            title: f.title, rules: [...f.querySelectorAll('li code')].map(c => c.textContent)}}))""")
        notifications = control(args.web, "GET", "/api/v1/notifications")["notifications"]
        report["lintFromAPI"] = next(n for n in notifications if n.get("apnsID") == BACKGROUND).get("lint")
        report["error"] = page.eval("document.getElementById('error').textContent")
        if args.screenshot:
            page.eval(f"{card(BACKGROUND)}.querySelector('.lint .finding').open = true")
            shot = page.call("Page.captureScreenshot", format="png")
            with open(args.screenshot, "wb") as file:
                file.write(base64.b64decode(shot["data"]))

        # A burst of pushes (over the binary gateway, 100 every 0.1 s): the phones are read at
        # most once a second, however often the list's long poll answers.
        before = page.eval("({reads: window.fakeAPNs.phoneRefresh.reads, stored: window.fakeAPNs.notifications.length})")
        sender = BinarySender(args.gateway)
        started = time.monotonic()
        for start in range(0, args.burst, 100):
            sender.send(100, start)
            time.sleep(0.1)
        page.until(f"window.fakeAPNs.notifications.length >= {before['stored'] + args.burst}", "the burst to arrive", timeout=120)
        report["burst"] = {"pushes": args.burst, "seconds": round(time.monotonic() - started, 2),
                           "phoneReads": page.eval("window.fakeAPNs.phoneRefresh.reads") - before["reads"]}
        sender.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
