extension WebPage {
    static let style = #"""
:root { color-scheme: light dark; --bg: #f2f2f7; --card: #fff; --muted: #6e6e73; --line: #d1d1d6; --bad: #c4302b; --frame: #1c1c1e; }
@media (prefers-color-scheme: dark) { :root { --bg: #1c1c1e; --card: #2c2c2e; --muted: #a1a1a6; --line: #3a3a3c; --frame: #636366; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 -apple-system, system-ui, sans-serif; background: var(--bg); }
header { display: flex; align-items: baseline; gap: 1em; padding: .6em 1em; }
h1 { font-size: 1.3em; margin: 0; }
.counts span { margin-right: 1em; color: var(--muted); }
.live { color: #248a3d; } .live.paused { color: var(--bad); }
.toolbar { display: flex; flex-wrap: wrap; gap: .4em; padding: 0 1em .6em; }
input, select, button { font: inherit; padding: .25em .5em; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: inherit; }
button { cursor: pointer; }
.panel { margin: 0 1em .6em; padding: .6em; background: var(--card); border-radius: 10px; }
.panel h2 { font-size: 1em; margin: 0 0 .4em; }
.panel td { padding: .1em .6em .1em 0; font-family: ui-monospace, monospace; font-size: 12px; }
.error { margin: 0 1em; color: var(--bad); }
.columns { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 1em; padding: 0 1em 1em; }
.stream { flex: 1 1 420px; max-width: 760px; min-width: 0; }
main { padding: 0; }
.card { background: var(--card); border-radius: 14px; padding: .6em .8em; margin: 0 0 .6em; box-shadow: 0 1px 2px rgba(0,0,0,.12); }
.card.rejection { border-left: 5px solid var(--bad); }
.top { display: flex; gap: .5em; align-items: baseline; font-size: 12px; color: var(--muted); }
.app { font-weight: 600; text-transform: uppercase; letter-spacing: .02em; flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.title { font-weight: 600; }
.subtitle { font-weight: 500; }
.body { white-space: pre-wrap; overflow-wrap: anywhere; }
.tags { display: flex; flex-wrap: wrap; gap: .3em; margin-top: .3em; font-size: 12px; }
.tag { padding: 0 .45em; border-radius: 5px; background: var(--bg); color: var(--muted); }
.tag.kind { background: #5856d6; color: #fff; }
.tag.bad { background: var(--bad); color: #fff; }
.token { font-family: ui-monospace, monospace; cursor: copy; }
.reason { font-weight: 600; color: var(--bad); }
details { margin-top: .3em; font-size: 12px; }
pre { margin: .3em 0; padding: .4em; background: var(--bg); border-radius: 6px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0 .8em; margin: .3em 0; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; font-family: ui-monospace, monospace; }
#more { margin: 0 0 1em; }
.card.selected { outline: 2px solid #007aff; }
.show-log { margin-top: .3em; font-size: 12px; }
.lint { display: flex; flex-wrap: wrap; gap: .3em; margin-top: .3em; }
.finding { margin: 0; } .finding[open] { flex-basis: 100%; }
.finding summary { display: inline-block; padding: 0 .45em; border-radius: 5px; color: #fff; }
.finding ul { margin: .2em 0; padding-left: 1.2em; }
.finding.error summary { background: var(--bad); } .finding.warning summary { background: #b25000; } .finding.info summary { background: #0060c0; }
#phones { flex: 0 1 330px; min-width: 0; }
.phones-head { display: flex; justify-content: space-between; align-items: baseline; margin: 0 0 .4em; }
.phones-head h2 { font-size: 1em; margin: 0; }
.hint { color: var(--muted); font-size: 12px; margin: .3em 0; overflow-wrap: anywhere; }
.phone { margin: 0 0 1em; padding: .7em .6em 1.2em; min-height: 420px; border: 9px solid var(--frame); border-radius: 38px; background: var(--bg); box-shadow: 0 2px 8px rgba(0,0,0,.25); }
.status-bar { display: flex; flex-wrap: wrap; gap: .3em; align-items: baseline; font-size: 12px; padding: 0 .5em .4em; }
.status-bar .token { flex: 1; }
.status { display: flex; flex-wrap: wrap; gap: .3em; list-style: none; margin: 0; padding: 0; order: 3; flex-basis: 100%; }
.status li { padding: 0 .45em; border-radius: 5px; background: var(--card); color: var(--muted); }
.status .online { color: #248a3d; } .status .offline, .status .power { color: var(--bad); }
.online-toggle { font-size: 12px; padding: 0 .4em; }
.screen h3, .log h3 { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: .6em .3em .2em; overflow-wrap: anywhere; }
.entries, .activities, .wakes, .steps { list-style: none; margin: 0; padding: 0; }
.entry, .activity { display: block; width: 100%; text-align: left; margin: 0 0 .4em; padding: .45em .6em; border: 0; border-radius: 14px; background: var(--card); box-shadow: 0 1px 2px rgba(0,0,0,.12); }
.entry > span { display: block; }
.entry[aria-pressed="true"] { outline: 2px solid #007aff; }
.entry > span.top, .entry > span.tags { display: flex; }
.tag.quiet { font-style: italic; }
.content-state { font-size: 11px; margin: .2em 0 0; }
.badges { margin: 0 .3em; font-size: 12px; }
.badge { font-family: inherit; font-weight: 600; color: var(--bad); }
.wakes, .steps { font-size: 12px; margin: 0 .3em; }
.steps li { padding: .15em 0; border-bottom: 1px solid var(--line); }
.steps .step { font-weight: 600; margin-right: .4em; }
.steps time, .wakes time { color: var(--muted); }
.steps .detail { display: block; color: var(--muted); overflow-wrap: anywhere; }
"""#
}
