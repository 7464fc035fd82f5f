extension WebPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>FakeAPNs</title>
<link rel="stylesheet" href="/web/app.css">
<script src="/web/app.js" defer></script>
</head>
<body>
<header>
  <h1>FakeAPNs</h1>
  <div id="counts" class="counts">
    <span>stored <b id="count-stored">0</b></span>
    <span>dropped <b id="count-dropped">0</b></span>
    <span>rejected <b id="count-rejected">0</b></span>
    <span id="live-state" class="live">live</span>
  </div>
</header>
<nav class="toolbar">
  <input id="filter-token" type="search" placeholder="token" aria-label="Filter by token">
  <input id="filter-topic" type="search" placeholder="topic" aria-label="Filter by topic">
  <input id="filter-text" type="search" placeholder="text" aria-label="Filter by text">
  <button id="pause" type="button">Pause</button>
  <button id="clear" type="button">Clear</button>
  <button id="show-devices" type="button">Devices</button>
  <button id="show-faults" type="button">Faults</button>
  <button id="show-senders" type="button">Senders</button>
</nav>
<section id="devices" class="panel" hidden>
  <h2>Devices <label><input id="strict" type="checkbox"> strict</label></h2>
  <form id="device-form">
    <input name="token" placeholder="token (hex)" required>
    <input name="topic" placeholder="topic (optional)">
    <select name="environment"><option value="">any environment</option><option>sandbox</option><option>production</option></select>
    <button type="submit">Register</button>
  </form>
  <table><tbody id="device-list"></tbody></table>
</section>
<section id="faults" class="panel" hidden>
  <h2>Fault rules</h2>
  <form id="fault-form">
    <select name="matchKind"><option value="every">every push</option><option value="token">token</option><option value="topic">topic</option><option value="nth">nth push</option></select>
    <input name="matchValue" placeholder="token, topic or n">
    <select name="actionKind"><option value="respond">respond with reason</option><option value="reject">binary status</option><option value="closeConnection">close connection</option><option value="resetStream">reset stream</option><option value="delayMilliseconds">delay (ms)</option></select>
    <input name="actionValue" placeholder="BadDeviceToken, 8 or 200">
    <input name="times" placeholder="once, always or a count" value="once">
    <button type="submit">Add</button>
  </form>
  <table><tbody id="fault-list"></tbody></table>
</section>
<section id="senders" class="panel" hidden>
  <h2>Sender audit <button id="refresh-senders" type="button">Refresh</button></h2>
  <input id="sender-filter" type="search" placeholder="sender: token:TEAMID, address:127.0.0.1" aria-label="Filter by sender">
  <p id="senders-hint" class="hint" hidden>No finding: every sender did what Apple expects so far.</p>
  <table><tbody id="sender-list"></tbody></table>
</section>
<p id="error" class="error" hidden></p>
<div class="columns">
<div class="stream">
<main id="list" aria-live="polite"></main>
<button id="more" type="button" hidden>Show more</button>
</div>
<aside id="phones" aria-labelledby="phones-heading">
  <div class="phones-head"><h2 id="phones-heading">Phones</h2><button id="refresh-phones" type="button">Refresh</button></div>
  <p id="phones-hint" class="hint" hidden>No phone described: <code>PATCH /api/v1/devices/&lt;token&gt;</code> with <code>{"online":false}</code> describes one.</p>
  <p id="phones-more" class="hint" hidden></p>
  <div id="phone-list"></div>
</aside>
</div>
</body>
</html>
"""#
}
