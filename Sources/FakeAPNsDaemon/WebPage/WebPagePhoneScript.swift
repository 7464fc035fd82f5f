extension WebPage {
    // The phones beside the list: one panel per described phone (`GET /api/v1/phones`, the
    // tokens only, whatever the registry holds), drawn from its device object (settings and
    // screen), with the delivery log of the selected push. They are read again when the
    // notifications' long poll answers (something arrived, or its wait ended), at most once a
    // second, after the page's own changes, and on Refresh; a panel whose answers did not
    // change keeps its nodes (and the reader's focus).
    static let phoneScript = #"""
const PHONES = 12, PHONE_GAP = 1000;

function phonePath(token) { return "/api/v1/devices/" + encodeURIComponent(token); }

// The described phones: `{"phones":["<token>", …]}`.
function phoneTokensOf(response) {
  const list = response && response.phones;
  return Array.isArray(list) ? list.filter((entry) => typeof entry === "string") : [];
}

function isSelected(token, apnsID) {
  return state.selected !== null && state.selected.token === token && state.selected.apnsID === apnsID;
}

// Selects a push (from a card or a phone's entry), or unselects it when it was selected.
function select(token, apnsID) {
  state.selected = isSelected(token, apnsID) ? null : { token, apnsID };
  schedule();
  refreshPhones();
}

function phonesMayHaveChanged() {
  const refresh = state.phoneRefresh;
  if (state.paused || refresh.timer !== null) return;
  const wait = refresh.last + PHONE_GAP - performance.now();
  if (wait <= 0) { refreshPhones(); return; }
  refresh.timer = setTimeout(() => { refresh.timer = null; refreshPhones(); }, wait);
}

// One read at a time; a refresh asked for during one runs once after it.
async function refreshPhones() {
  const refresh = state.phoneRefresh;
  if (refresh.running) { refresh.again = true; return; }
  refresh.running = true;
  try {
    do {
      refresh.again = false;
      refresh.last = performance.now();
      refresh.reads += 1;
      await drawPhones();
    } while (refresh.again);
  } catch (error) {
    showError(error);
  } finally {
    refresh.running = false;
  }
}

async function listedPhones() {
  const list = state.phoneList;
  list.tokens = phoneTokensOf(await api("GET", "/api/v1/phones"));
  list.reads += 1;
  return list.tokens;
}

// The day the server's clock (`GET /api/v1/clock`) is in, which a test may have moved days
// away from the reader's: what "today" is for the times the phones show; null when unread.
function serverDayOf(clock) {
  const date = clock && typeof clock.now === "string" ? new Date(clock.now) : null;
  return date !== null && !isNaN(date) ? date.toDateString() : null;
}

async function drawPhones() {
  const tokens = await listedPhones();
  const shown = tokens.slice(0, PHONES);
  const [clock, ...devices] = await Promise.all([
    api("GET", "/api/v1/clock").catch(() => null),
    ...shown.map((token) => api("GET", phonePath(token)).catch(() => null)),
  ]);
  state.serverDay = serverDayOf(clock);
  const selected = state.selected;
  const log = selected && shown.includes(selected.token)
    ? await api("GET", phonePath(selected.token) + "/log?apns-id=" + encodeURIComponent(selected.apnsID)).catch(() => null)
    : null;
  const before = [...state.phoneTokens].join();
  state.phoneTokens = new Set(tokens);
  if (before !== tokens.join()) schedule();
  $("phones-hint").hidden = tokens.length > 0;
  $("phones-more").hidden = tokens.length <= PHONES;
  $("phones-more").textContent = tokens.length > PHONES ? (tokens.length - PHONES) + " more phones not shown" : "";
  const views = new Map();
  const nodes = shown.map((token, index) => {
    const mine = selected && selected.token === token ? selected : null;
    const key = JSON.stringify([devices[index], mine, mine && log, state.serverDay]);
    const kept = state.phoneViews.get(token);
    const view = kept && kept.key === key ? kept : { key, node: phoneView(token, devices[index], mine, log) };
    views.set(token, view);
    return view.node;
  });
  state.phoneViews = views;
  const list = $("phone-list");
  if (nodes.length !== list.children.length || nodes.some((node, index) => list.children[index] !== node)) {
    list.replaceChildren(...nodes);
  }
}

// A time on the phone's clock, which a test may have moved days away: the date too when it is
// not in the day the server's clock is in.
function timeView(text) {
  const date = text ? new Date(text) : null;
  const valid = date !== null && !isNaN(date);
  const today = valid && date.toDateString() === state.serverDay;
  const node = el("time", null, valid ? (today ? date.toLocaleTimeString() : date.toLocaleString()) : "");
  if (text) { node.dateTime = text; node.title = text; }
  return node;
}

function phoneView(token, device, selected, log) {
  const node = el("article", "phone");
  node.dataset.token = token;
  node.setAttribute("aria-label", "Phone " + token);
  const bar = el("header", "status-bar");
  bar.append(tokenView(token));
  node.append(bar);
  if (!device || !device.settings) {
    node.append(el("p", "hint", "This phone is not described any more."));
    return node;
  }
  const settings = device.settings;
  const status = el("ul", "status");
  status.setAttribute("aria-label", "Status");
  status.append(el("li", settings.online ? "online" : "offline", settings.online ? "online" : "offline"));
  if (settings.powerRestricted) status.append(el("li", "power", "power restricted"));
  if (settings.lowPowerMode) status.append(el("li", "power", "low power"));
  if (settings.awake === false) status.append(el("li", null, "asleep"));
  const toggle = el("button", "online-toggle", settings.online ? "Go offline" : "Go online");
  toggle.type = "button";
  toggle.addEventListener("click", () => act(() => api("PATCH", phonePath(token), { online: !settings.online }), refreshPhones));
  bar.append(status, toggle);
  node.append(screenView(token, device.screen || {}));
  if (selected && log) node.append(logView(selected, log));
  return node;
}

function screenView(token, screen) {
  const node = el("section", "screen");
  node.setAttribute("aria-label", "Screen");
  const activities = Array.isArray(screen.liveActivities) ? screen.liveActivities : [];
  if (activities.length) {
    const list = el("ul", "activities");
    for (const activity of activities) {
      const item = el("li", "activity");
      const top = el("div", "top");
      top.append(el("span", "app", activity.bundle), el("span", "tag state", activity.state));
      item.append(top, el("pre", "content-state", JSON.stringify(activity.contentState, null, 1)));
      list.append(item);
    }
    node.append(el("h3", null, "Live Activities"), list);
  }
  const entries = Array.isArray(screen.notificationCenter) ? screen.notificationCenter : [];
  node.append(el("h3", null, "Notification Centre"));
  if (entries.length) {
    const list = el("ol", "entries");
    for (const entry of entries) list.append(entryView(token, entry));
    node.append(list);
  } else {
    node.append(el("p", "hint", "No notifications."));
  }
  const badges = Object.entries(screen.badges || {});
  if (badges.length) {
    const list = el("dl", "badges");
    for (const [bundle, count] of badges) list.append(el("dt", null, bundle), el("dd", "badge", count));
    node.append(el("h3", null, "Badges"), list);
  }
  const wakes = Array.isArray(screen.wakes) ? screen.wakes : [];
  if (wakes.length) {
    const list = el("ol", "wakes");
    for (const wake of wakes) {
      const item = el("li");
      item.append(el("span", "app", wake.bundle), " ", timeView(wake.at));
      list.append(item);
    }
    node.append(el("h3", null, "App wakes"), list);
  }
  return node;
}

// An entry is a button: pressing it selects its push, whose delivery log the phone then shows.
function entryView(token, entry) {
  const item = el("li");
  const button = el("button", "entry");
  button.type = "button";
  button.setAttribute("aria-pressed", String(isSelected(token, entry.apnsID)));
  if (entry.apnsID) button.addEventListener("click", () => select(token, entry.apnsID));
  else button.disabled = true;
  const top = el("span", "top");
  top.append(el("span", "app", entry.bundle), timeView(entry.deliveredAt));
  button.append(top);
  for (const part of ["title", "subtitle", "body"]) {
    if (entry[part]) button.append(el("span", part, entry[part]));
  }
  const tags = el("span", "tags");
  tags.append(el("span", entry.presented ? "tag" : "tag quiet", entry.presented ? "presented" : "quiet"));
  const replaced = Array.isArray(entry.replaced) ? entry.replaced.length : 0;
  if (replaced) tags.append(el("span", "tag", "replaced ×" + replaced));
  if (entry.interruptionLevel && entry.interruptionLevel !== "active") tags.append(el("span", "tag", entry.interruptionLevel));
  button.append(tags);
  item.append(button);
  return item;
}

function logView(selected, log) {
  const node = el("section", "log");
  node.setAttribute("aria-label", "Delivery log");
  node.append(el("h3", null, "Delivery log of " + selected.apnsID));
  const entries = Array.isArray(log.entries) ? log.entries : [];
  if (!entries.length) {
    node.append(el("p", "hint", "Nothing logged for this push on this phone."));
    return node;
  }
  const list = el("ol", "steps");
  for (const entry of entries) {
    const item = el("li");
    item.append(el("span", "step", entry.status), " ", timeView(entry.at));
    if (entry.detail) item.append(el("span", "detail", entry.detail));
    list.append(item);
  }
  node.append(list);
  return node;
}

"""#
}
