extension WebPage {
    /// The page's script: the live list, then the phones (``phoneScript``), the sender audit's
    /// panel (``senderScript``), then the calls that start them.
    static let script = listScript + phoneScript + senderScript + "start();\nstartSenders();\n"

    // Every string from the daemon is drawn with textContent or as an attribute value, never as
    // markup. The live list is a long poll on each history (`since` the last sequence seen,
    // `wait`), so the page holds two waits at most and asks again only when something came.
    static let listScript = #"""
"use strict";
const PAGE = 100, BATCH = 5000, WAIT = 25;
const REASONS = {
  BadCollapseId: "the apns-collapse-id is longer than 64 bytes",
  BadDeviceToken: "the token is not valid for this environment or app",
  BadExpirationDate: "the apns-expiration is not a valid date",
  BadMessageId: "the apns-id is not a UUID",
  BadPriority: "the apns-priority is not 10, 5 or 1",
  BadTopic: "the apns-topic is not a topic the provider may push to",
  DeviceTokenNotForTopic: "the token belongs to another app than the topic",
  DuplicateHeaders: "a header appears twice",
  IdleTimeout: "the connection was idle too long",
  InvalidPushType: "the apns-push-type is not one APNs knows",
  MissingDeviceToken: "the request path names no device token",
  MissingTopic: "the apns-topic is required for this connection but absent",
  PayloadEmpty: "the payload is empty",
  TopicDisallowed: "pushing to this topic is not allowed",
  BadCertificate: "the client certificate is not valid",
  BadCertificateEnvironment: "the certificate is for the other environment",
  ExpiredProviderToken: "the provider token (JWT) is older than an hour",
  Forbidden: "the request is not allowed",
  InvalidProviderToken: "the provider token is not valid or its signature does not verify",
  MissingProviderToken: "no certificate and no provider token: nothing authenticates the request",
  UnrelatedKeyIdInToken: "the token's key id is not related to this app",
  BadPath: "the request path is not /3/device/<token>",
  MethodNotAllowed: "only POST is allowed",
  ExpiredToken: "the device token has expired",
  Unregistered: "the device is no longer active for the topic (the app was removed)",
  PayloadTooLarge: "the payload is larger than APNs takes (4 KiB, 5 KiB for VoIP)",
  TooManyProviderTokenUpdates: "the provider token changed too often",
  TooManyRequests: "too many pushes to this device in a short time",
  InternalServerError: "APNs failed internally; try again",
  ServiceUnavailable: "APNs is unavailable; try again later",
  Shutdown: "the server is shutting down",
  FeatureNotEnabled: "the app does not have the broadcast capability",
  BadChannelId: "the channel id is not valid",
  ChannelNotRegistered: "there is no such channel",
  "Processing error": "binary 1: the gateway could not process the notification",
  "Missing device token": "binary 2: the notification has no token",
  "Missing topic": "binary 3: the notification has no topic",
  "Missing payload": "binary 4: the notification has no payload",
  "Invalid token size": "binary 5: the token is not 32 bytes",
  "Invalid topic size": "binary 6: the topic has a bad size",
  "Invalid payload size": "binary 7: the payload is too large",
  "Invalid token": "binary 8: the token is not valid for this environment or app",
  "Unknown": "binary 255: an error APNs does not name"
};
const FORMATS = { simple: "binary command 0", enhanced: "binary command 1", frame: "binary command 2", http2: "HTTP/2", broadcast: "broadcast" };

const state = {
  notifications: [], rejections: [], since: { notifications: 0, rejections: 0 },
  dropped: { notifications: 0, rejections: 0 }, paused: false, shown: PAGE, expanded: new Set(),
  generation: 0, dirty: false, loaded: { notifications: false, rejections: false }, firstRender: null, frameGaps: [],
  // The phones (WebPagePhoneScript): the described tokens, each panel drawn, the selected push,
  // and the reads of the phones and of the device list.
  phoneTokens: new Set(), phoneViews: new Map(), selected: null,
  phoneRefresh: { running: false, again: false, last: -Infinity, timer: null, reads: 0 },
  // The day the server's clock is in, read with the phones (see serverDayOf).
  serverDay: null,
  phoneList: { tokens: [], reads: 0 }
};
window.fakeAPNs = state;
const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  const response = await fetch(path, init);
  const text = await response.text();
  const value = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error((value && value.message) || (method + " " + path + ": " + response.status));
  return value;
}

function showError(error) {
  const node = $("error");
  node.hidden = !error;
  node.textContent = error ? String(error.message || error) : "";
}

function aps(payload) { return (payload && typeof payload === "object" && payload.aps && typeof payload.aps === "object") ? payload.aps : {}; }

function alertParts(payload) {
  const alert = aps(payload).alert;
  if (typeof alert === "string") return { body: alert };
  if (alert && typeof alert === "object") {
    return { title: alert.title ?? alert["title-loc-key"], subtitle: alert.subtitle, body: alert.body ?? alert["loc-key"] };
  }
  return {};
}

function kinds(item) {
  const out = [];
  const a = aps(item.payload);
  const type = String(item.pushType || "").toLowerCase();
  if (item.format === "broadcast") out.push("Broadcast");
  if (type === "liveactivity" || a.event || a["content-state"]) out.push("Live Activity");
  if (type === "voip") out.push("VoIP");
  if (type === "background" || (a["content-available"] === 1 && !a.alert && a.badge === undefined && !a.sound)) out.push("Silent");
  return out;
}

function topicOf(item) { return item.topic || item.clientTopic || ""; }

function haystack(item) {
  if (item._text === undefined) item._text = JSON.stringify(item).toLowerCase();
  return item._text;
}

function matches(item) {
  const token = $("filter-token").value.trim().toLowerCase();
  const topic = $("filter-topic").value.trim().toLowerCase();
  const text = $("filter-text").value.trim().toLowerCase();
  if (token && !String(item.token || "").toLowerCase().includes(token)) return false;
  if (topic && !topicOf(item).toLowerCase().includes(topic)) return false;
  if (text && !haystack(item).includes(text)) return false;
  return true;
}

function when(item) { return item.receivedAt ? new Date(item.receivedAt) : null; }

function tokenView(token) {
  const text = String(token || "");
  const node = el("span", "token", text.length > 16 ? text.slice(0, 8) + "…" + text.slice(-6) : (text || "no token"));
  node.title = text ? text + " (click to copy)" : "";
  node.dataset.token = text;
  node.addEventListener("click", () => {
    if (text && navigator.clipboard) navigator.clipboard.writeText(text).then(() => { node.classList.add("copied"); }, () => {});
  });
  return node;
}

// A <details> that stays open across renders while the reader keeps it open.
function disclosure(className, key, summary) {
  const box = el("details", className);
  box.open = state.expanded.has(key);
  box.addEventListener("toggle", () => { if (box.open) state.expanded.add(key); else state.expanded.delete(key); });
  box.append(el("summary", null, summary));
  return box;
}

function details(item, key) {
  const box = disclosure(null, key, "Details");
  box.append(el("pre", "payload", item.payload !== undefined ? JSON.stringify(item.payload, null, 2) : (item.payloadText || "no payload")));
  const list = el("dl");
  for (const [name, value] of Object.entries(item)) {
    if (name === "payload" || name.startsWith("_")) continue;
    list.append(el("dt", null, name));
    list.append(el("dd", null, value === null ? "—" : (typeof value === "object" ? JSON.stringify(value) : value)));
  }
  box.append(list);
  if (item.payload !== undefined) {
    const save = el("button", "export", "Export .apns");
    save.type = "button";
    save.addEventListener("click", () => exportAPNs(item));
    box.append(save);
  }
  return box;
}

function simulatorFile(item) {
  const file = Object.assign({}, item.payload);
  file["Simulator Target Bundle"] = topicOf(item) || "com.example.app";
  return JSON.stringify(file, null, 2);
}

function exportAPNs(item) {
  const url = URL.createObjectURL(new Blob([simulatorFile(item)], { type: "application/json" }));
  const link = el("a");
  link.href = url;
  link.download = "notification-" + item.sequence + ".apns";
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function card(item) {
  const rejected = item._kind === "rejection";
  const key = item._kind + item.sequence;
  const node = el("article", rejected ? "card rejection" : "card notification");
  node.dataset.sequence = item.sequence;
  if (item.apnsID) node.dataset.apnsId = item.apnsID;
  const top = el("div", "top");
  top.append(el("span", "app", topicOf(item) || (item.format === "http2" ? "no topic" : "binary gateway")));
  const time = when(item);
  top.append(el("time", null, time ? time.toLocaleTimeString() : ""));
  node.append(top);
  if (rejected) {
    node.append(el("div", "reason", item.reason));
    node.append(el("div", "meaning", REASONS[item.reason] || item.detail || ""));
    if (item.detail) node.append(el("div", "detail", item.detail));
  }
  const parts = alertParts(item.payload);
  if (parts.title) node.append(el("div", "title", parts.title));
  if (parts.subtitle) node.append(el("div", "subtitle", parts.subtitle));
  if (parts.body) node.append(el("div", "body", parts.body));
  const tags = el("div", "tags");
  if (rejected) tags.append(el("span", "tag bad", "rejected"));
  for (const kind of kinds(item)) tags.append(el("span", "tag kind", kind));
  tags.append(el("span", "tag", FORMATS[item.format] || item.format || "unknown format"));
  const a = aps(item.payload);
  if (a.badge !== undefined) tags.append(el("span", "tag", "badge " + a.badge));
  if (a.sound !== undefined) tags.append(el("span", "tag", "sound " + (typeof a.sound === "object" ? JSON.stringify(a.sound) : a.sound)));
  tags.append(tokenView(item.token));
  node.append(tags);
  if (Array.isArray(item.lint) && item.lint.length) node.append(lintView(item.lint, key));
  if (!rejected && item.apnsID && state.phoneTokens.has(item.token)) {
    const selected = isSelected(item.token, item.apnsID);
    node.classList.toggle("selected", selected);
    const show = el("button", "show-log", "Delivery log");
    show.type = "button";
    show.setAttribute("aria-pressed", String(selected));
    show.addEventListener("click", () => select(item.token, item.apnsID));
    node.append(show);
  }
  node.append(details(item, key));
  return node;
}

const LINT_LEVELS = ["error", "warning", "info"];

// The push lint's findings: a badge per level, its messages on hover (title) and when opened.
function lintView(findings, key) {
  const node = el("div", "lint");
  for (const level of LINT_LEVELS) {
    const found = findings.filter((finding) => finding && finding.level === level);
    if (!found.length) continue;
    const box = disclosure("finding " + level, "lint-" + level + key, found.length + " " + level + (found.length > 1 && level !== "info" ? "s" : ""));
    box.title = found.map((finding) => finding.rule + ": " + finding.message).join("\n");
    const list = el("ul");
    for (const finding of found) {
      const line = el("li");
      line.append(el("code", null, finding.rule), " " + (finding.message || ""));
      list.append(line);
    }
    box.append(list);
    node.append(box);
  }
  return node;
}

function visible() {
  const merged = [];
  for (const item of state.notifications) if (matches(item)) merged.push(item);
  for (const item of state.rejections) if (matches(item)) merged.push(item);
  merged.sort((x, y) => (y._time - x._time) || (y.sequence - x.sequence));
  return merged;
}

function render() {
  state.dirty = false;
  const items = visible();
  const list = $("list");
  const fragment = document.createDocumentFragment();
  for (const item of items.slice(0, state.shown)) fragment.append(card(item));
  list.replaceChildren(fragment);
  $("more").hidden = items.length <= state.shown;
  $("count-stored").textContent = state.notifications.length;
  $("count-dropped").textContent = state.dropped.notifications + state.dropped.rejections;
  $("count-rejected").textContent = state.rejections.length;
  if (state.firstRender === null && state.loaded.notifications && state.loaded.rejections) {
    state.firstRender = performance.now();
  }
}

function schedule() {
  if (state.paused || state.dirty) return;
  state.dirty = true;
  requestAnimationFrame(render);
}

function take(kind, response) {
  const items = response[kind];
  state.dropped[kind] = response.dropped;
  for (const item of items) {
    mark(kind, item);
    state[kind].push(item);
  }
  if (items.length) state.since[kind] = items[items.length - 1].sequence;
  return items.length;
}

async function follow(kind) {
  // The newest first, so the first render does not wait for a full history; then the older
  // ones, page by page, before the long poll.
  let older = -1;
  while (true) {
    try {
      if (older < 0) {
        older = Math.max(0, (await api("GET", "/api/v1/" + kind + "?limit=1")).last - PAGE);
        state.since[kind] = older;
      }
      const wait = state.loaded[kind] ? "&wait=" + WAIT : "";
      const response = await api("GET", "/api/v1/" + kind + "?since=" + state.since[kind] + "&limit=" + BATCH + wait);
      const count = take(kind, response);
      if (count < BATCH) state.loaded[kind] = true;
      showError(null);
      schedule();
      if (kind === "notifications") phonesMayHaveChanged();
      if (state.loaded[kind] && older > 0) {
        older = await backfill(kind, older);
      }
    } catch (error) {
      showError(error);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

async function backfill(kind, until) {
  const generation = state.generation;
  let since = 0;
  const held = [];
  while (since < until) {
    const response = await api("GET", "/api/v1/" + kind + "?since=" + since + "&limit=" + BATCH);
    const items = response[kind].filter((item) => item.sequence <= until);
    for (const item of items) { mark(kind, item); held.push(item); }
    if (response[kind].length < BATCH || items.length < response[kind].length || !items.length) break;
    since = items[items.length - 1].sequence;
  }
  if (generation === state.generation) state[kind] = held.concat(state[kind]);
  schedule();
  return 0;
}

function mark(kind, item) {
  item._kind = kind === "notifications" ? "notification" : "rejection";
  item._time = Date.parse(item.receivedAt) || 0;
}

async function refreshDevices() {
  const response = await api("GET", "/api/v1/devices");
  $("strict").checked = response.strict;
  const rows = response.devices.filter((device) => typeof device === "object").map((device) => {
    const row = el("tr");
    row.append(el("td", null, device.token), el("td", null, device.topic || "any topic"),
      el("td", null, device.environment || "any environment"),
      el("td", null, device.unregisteredAt ? "unregistered " + new Date(device.unregisteredAt * 1000).toLocaleString() : "active"));
    const actions = el("td");
    const unregister = el("button", null, "Unregister");
    unregister.addEventListener("click", () => act(() => api("POST", "/api/v1/devices/" + encodeURIComponent(device.token) + "/unregister", {}), refreshDevices));
    const remove = el("button", null, "Remove");
    remove.addEventListener("click", () => act(() => api("DELETE", "/api/v1/devices/" + encodeURIComponent(device.token)), refreshDevices));
    actions.append(unregister, remove);
    row.append(actions);
    return row;
  });
  $("device-list").replaceChildren(...rows);
}

async function refreshFaults() {
  const response = await api("GET", "/api/v1/faults");
  const rows = response.faults.map((fault) => {
    const row = el("tr");
    row.append(el("td", null, "#" + fault.id), el("td", null, fault.description),
      el("td", null, "hits " + fault.hits), el("td", null, fault.remaining === null ? "always" : fault.remaining + " left"));
    const remove = el("button", null, "Remove");
    remove.addEventListener("click", () => act(() => api("DELETE", "/api/v1/faults/" + fault.id), refreshFaults));
    const cell = el("td");
    cell.append(remove);
    row.append(cell);
    return row;
  });
  $("fault-list").replaceChildren(...rows);
}

async function act(operation, then) {
  try { await operation(); showError(null); if (then) await then(); } catch (error) { showError(error); }
}

function faultRule(form) {
  const data = new FormData(form);
  const matchKind = data.get("matchKind"), matchValue = String(data.get("matchValue")).trim();
  const actionKind = data.get("actionKind"), actionValue = String(data.get("actionValue")).trim();
  const timesText = String(data.get("times")).trim() || "once";
  const match = matchKind === "every" ? "every" : { [matchKind]: matchKind === "nth" ? Number(matchValue) : matchValue };
  let action;
  if (actionKind === "respond") action = { respond: actionValue || "BadDeviceToken" };
  else if (actionKind === "reject") action = { reject: Number(actionValue || 8) };
  else if (actionKind === "delayMilliseconds") action = { delayMilliseconds: Number(actionValue || 200) };
  else action = actionKind;
  const times = /^[0-9]+$/.test(timesText) ? Number(timesText) : timesText;
  return { match, action, times };
}

function start() {
  for (const id of ["filter-token", "filter-topic", "filter-text"]) {
    $(id).addEventListener("input", () => { state.shown = PAGE; schedule(); });
  }
  $("pause").addEventListener("click", () => {
    state.paused = !state.paused;
    $("pause").textContent = state.paused ? "Resume" : "Pause";
    $("live-state").textContent = state.paused ? "paused" : "live";
    $("live-state").classList.toggle("paused", state.paused);
    schedule();
    if (!state.paused) refreshPhones();
  });
  $("clear").addEventListener("click", () => act(async () => {
    await api("DELETE", "/api/v1/notifications");
    await api("DELETE", "/api/v1/rejections");
    state.notifications = [];
    state.rejections = [];
    state.generation += 1;
    state.expanded.clear();
    schedule();
  }));
  $("more").addEventListener("click", () => { state.shown += PAGE; schedule(); });
  $("show-devices").addEventListener("click", () => { $("devices").hidden = !$("devices").hidden; if (!$("devices").hidden) act(refreshDevices); });
  $("show-faults").addEventListener("click", () => { $("faults").hidden = !$("faults").hidden; if (!$("faults").hidden) act(refreshFaults); });
  $("strict").addEventListener("change", () => act(() => api("PUT", "/api/v1/devices/strict", { strict: $("strict").checked }), refreshDevices));
  $("device-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(event.target);
    const body = { token: String(data.get("token")).trim() };
    if (String(data.get("topic")).trim()) body.topic = String(data.get("topic")).trim();
    if (data.get("environment")) body.environment = data.get("environment");
    act(() => api("POST", "/api/v1/devices", body), refreshDevices);
  });
  $("fault-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(() => api("POST", "/api/v1/faults", faultRule(event.target)), refreshFaults);
  });
  let last = performance.now();
  const tick = (now) => { state.frameGaps.push(now - last); if (state.frameGaps.length > 5000) state.frameGaps.shift(); last = now; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  $("refresh-phones").addEventListener("click", () => refreshPhones());
  follow("notifications");
  follow("rejections");
  refreshPhones();
}

"""#
}
