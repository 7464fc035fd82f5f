extension WebPage {
    // The sender audit's panel: `GET /api/v1/sender-report` (with `?sender=` when the filter
    // has text), one row per finding, worst first: level, rule, sender, count, the first
    // example's detail and the rule's source. Read when the panel opens, on Refresh, and when
    // the filter changes; text only, as every other panel.
    static let senderScript = #"""
function senderReportPath() {
  const sender = $("sender-filter").value.trim();
  return "/api/v1/sender-report" + (sender ? "?sender=" + encodeURIComponent(sender) : "");
}

async function refreshSenders() {
  const response = await api("GET", senderReportPath());
  const findings = Array.isArray(response && response.findings) ? response.findings : [];
  const rows = findings.filter((finding) => typeof finding === "object" && finding !== null).map((finding) => {
    const row = el("tr");
    const examples = Array.isArray(finding.examples) ? finding.examples : [];
    const first = examples.length > 0 && examples[0] && typeof examples[0].detail === "string" ? examples[0].detail : "";
    row.append(el("td", null, String(finding.level)), el("td", null, String(finding.rule)),
      el("td", null, String(finding.sender)), el("td", null, "× " + finding.count),
      el("td", null, first), el("td", null, String(finding.source)));
    return row;
  });
  $("sender-list").replaceChildren(...rows);
  $("senders-hint").hidden = rows.length > 0;
}

function startSenders() {
  $("show-senders").addEventListener("click", () => {
    $("senders").hidden = !$("senders").hidden;
    if (!$("senders").hidden) act(refreshSenders);
  });
  $("refresh-senders").addEventListener("click", () => act(refreshSenders));
  $("sender-filter").addEventListener("input", () => act(refreshSenders));
}

"""#
}
