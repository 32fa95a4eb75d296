// buflab serve: the page. It talks to its server over one WebSocket (JSON messages: the
// server sends hello, state, update, loaded, changed and error; the page sends load, pause,
// resume, pace, control and take_control) and draws with uPlot, installed by scripts/setup.
// Every value is checked again by the server; the page only shapes what it sends.
"use strict";

// Points each chart keeps: two minutes at ten updates a second (memory stays bounded).
const KEEP = 1200;
// Flows whose windows are drawn (the server sends at most this many).
const WINDOWS = 4;
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];

const $ = (id) => document.getElementById(id);
const page = {
  ws: null, you: null, state: null, charts: {}, rules: {}, changes: [],
  data: null, dirty: false,
};
window.buflabPage = page; // for the browser test and a curious user's console

function emptyData() {
  return { t: [], util: [], goodput: [], queue: [], meanq: [], limit: [], drops: [], delay: [],
           cwnd: Array.from({ length: WINDOWS }, () => []), cwndIds: [] };
}
page.data = emptyData();

// ---- the connection ----

function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  page.ws = ws;
  ws.onmessage = (ev) => receive(JSON.parse(ev.data));
  ws.onclose = () => { $("who").textContent = "disconnected: reload the page"; };
}

function send(message) {
  if (page.ws && page.ws.readyState === WebSocket.OPEN) page.ws.send(JSON.stringify(message));
}

function control(name, value) { send({ type: "control", name, value }); }

function say(text, kind) {
  const m = $("message");
  m.textContent = text;
  m.className = kind;
  page.startNote = false; // set again by the one message that waits for Start
}

function receive(m) {
  switch (m.type) {
    case "hello":
      page.you = m.you;
      fillCatalogue(m.catalogue);
      break;
    case "state": showState(m); break;
    case "update": addUpdate(m); break;
    case "loaded":
      page.data = emptyData();
      page.changes = [];
      $("steps").textContent = "";
      page.dirty = true;
      say(`loaded ${m.source}: press Start`, "info");
      page.startNote = true;
      break;
    case "changed":
      page.changes.push({ t: m.t, text: m.text });
      say(`t = ${m.t.toFixed(3)} s: ${m.text}`, "info");
      page.dirty = true;
      break;
    case "error": say(m.message, "error"); break;
  }
}

function fillCatalogue(list) {
  const sel = $("source");
  sel.textContent = "";
  for (const e of list) {
    const o = document.createElement("option");
    o.value = e.id;
    o.textContent = e.label;
    sel.appendChild(o);
  }
}

// ---- state: who controls, the clock, the rules of thumb ----

function showState(s) {
  page.state = s;
  page.rules = s.rules || {};
  // "press Start" goes once the run runs.
  if (page.startNote && (!s.paused || s.reached_s > 0)) say("", "");
  $("engine").textContent = `engine: ${s.engine}`;
  const mine = s.controller === page.you;
  const others = s.viewers.length - 1;
  $("who").textContent = `you are viewer ${page.you}; ` +
    (mine ? "you control" : `viewer ${s.controller} controls`) +
    ` (${others} other viewer${others === 1 ? "" : "s"}; one controls at a time)`;
  $("take").hidden = mine;
  for (const el of document.querySelectorAll("#controls button, #controls input, #controls select")) {
    el.disabled = !mine;
  }
  // The emulator runs in real time, and only its buffer and long-lived flows change while it
  // runs.
  if (s.engine.startsWith("emulator")) {
    $("download-note").textContent = "`buflab run session.toml` replays its changes on the " +
      "simulator: the same experiment, not the same packets.";
    for (const id of ["pause", "pace", "access-fast", "access-slow", "tcp-set", "autosize",
                      "autosize-stop", "target-set"]) {
      $(id).disabled = true;
      $(id).title = "not on the emulator: only the buffer and the long-lived flows change while it runs";
    }
  }
  if (s.source) $("source").value = s.source;
  $("pace").value = s.pace;
  $("resume").textContent = !s.paused ? "Running" : (s.reached_s > 0 ? "Resume" : "Start");
  if (!s.paused) $("resume").disabled = true;
  showClock(s.reached_s, s.end_s, null);
  if (s.target != null) $("target").placeholder = String(s.target);
  if (s.access && s.access.fast) {
    $("access-fast").title = `new flows' access links at ${s.access.fast}`;
    $("access-slow").title = `new flows' access links at ${s.access.slow}`;
    $("access-fast").textContent = `fast (${rateText(s.access.fast)})`;
    $("access-slow").textContent = `slow (${rateText(s.access.slow)})`;
  }
  showRules();
  showLog(s.log);
  showSummary(s.summary);
  page.dirty = true;
}

function rateText(bps) {
  const x = parseFloat(bps);
  return x >= 1e9 ? `${x / 1e9} Gb/s` : `${x / 1e6} Mb/s`;
}

function showClock(t, end, speed) {
  $("clock").textContent = `t = ${t.toFixed(1)} s of ${end.toFixed(0)} s (simulated)`;
  if (speed != null && page.state) {
    const pace = page.state.pace === "max" ? "as fast as possible" : `pace ×${page.state.pace}`;
    $("speed").textContent = `${pace}; the engine steps at ×${speed.toFixed(speed < 10 ? 1 : 0)} real time`;
  }
}

function showRules() {
  const r = page.rules;
  const parts = [];
  if (r.rtt_c != null) parts.push(`RTT·C ${r.rtt_c.toFixed(0)} pkt`);
  if (r.sqrt_n != null) parts.push(`RTT·C/√N ${r.sqrt_n.toFixed(0)} (N = ${r.flows})`);
  if (r.eq21 != null) parts.push(`eq. 2.1 ${r.eq21.toFixed(0)} (${(100 * r.target).toFixed(0)} %)`);
  else if (r.eq21_note) parts.push(`eq. 2.1 does not apply: ${r.eq21_note}`);
  if (r.note) parts.push(r.note);
  $("rules").textContent = parts.join(" · ");
  drawBufferAxis();
}

function showLog(log) {
  page.changes = (log || []).map((e) => ({ t: e.t, text: e.text }));
  const ol = $("log");
  ol.textContent = "";
  for (const e of log || []) {
    const li = document.createElement("li");
    li.textContent = `t = ${e.t.toFixed(3)} s: ${e.text} (viewer ${e.by})`;
    ol.appendChild(li);
  }
}

function showSummary(summary) {
  const el = $("summary");
  if (!summary) { el.textContent = ""; return; }
  const pct = (x) => (x == null ? "–" : `${(100 * x).toFixed(2)} %`);
  el.textContent = `Run finished: utilization ${pct(summary.utilization)}, drop rate ` +
    `${pct(summary.drop_rate)}, ${summary.flows} flows` +
    (summary.autosize_buffer_pkts != null ? `, auto-sizer's answer ${summary.autosize_buffer_pkts} pkt` : "");
}

// ---- the buffer axis: a log scale shared by the slider and its marks ----

function bufferMax() {
  const limit = lastLimit() || 100;
  return Math.max(10, 4 * (page.rules.rtt_c || 0), 2 * limit);
}

function sliderValueFor(pkts) {
  return Math.round(1000 * Math.log(Math.max(1, pkts)) / Math.log(bufferMax()));
}
page.sliderValueFor = sliderValueFor;

function pktsForSlider(v) {
  return Math.max(1, Math.round(Math.exp((v / 1000) * Math.log(bufferMax()))));
}

function lastLimit() {
  const l = page.data.limit;
  return l.length ? l[l.length - 1] : null;
}

function drawBufferAxis() {
  const axis = $("buffer-axis");
  axis.textContent = "";
  const place = (pkts, text, cls) => {
    if (pkts == null || !(pkts >= 1) || pkts > bufferMax()) return;
    const d = document.createElement("div");
    d.className = `mark ${cls}`;
    d.style.left = `${(100 * Math.log(pkts)) / Math.log(bufferMax())}%`;
    d.textContent = text;
    axis.appendChild(d);
  };
  for (let p = 1; p <= bufferMax(); p *= 10) place(p, String(p), "tick");
  const r = page.rules;
  place(r.rtt_c, "RTT·C", "rule");
  place(r.sqrt_n, "/√N", "rule");
  place(r.eq21, "eq2.1", "rule");
  const limit = lastLimit();
  place(limit, `limit ${limit}`, "limit");
  if (limit != null && document.activeElement !== $("buffer-slider")) {
    $("buffer-slider").value = sliderValueFor(limit);
  }
}

// ---- updates: append, trim, draw once per frame ----

function push(arr, v) {
  arr.push(v);
  if (arr.length > KEEP) arr.shift();
}

function addUpdate(u) {
  const d = page.data;
  const rate = page.state && page.state.rules ? page.state.rate_bps : null;
  push(d.t, u.t);
  push(d.util, 100 * u.utilization);
  push(d.goodput, rate && u.goodput_bps != null ? (100 * u.goodput_bps) / rate : null);
  push(d.queue, u.queue_pkts);
  push(d.meanq, u.mean_queue_pkts);
  push(d.limit, u.buffer_pkts);
  push(d.drops, 100 * u.drop_rate);
  push(d.delay, u.delay_ms);
  d.cwndIds = u.windows.map((w) => w[0]);
  for (let i = 0; i < WINDOWS; i++) push(d.cwnd[i], i < u.windows.length ? u.windows[i][1] : null);
  for (const s of u.steps) addStep(s);
  page.last = u;
  page.dirty = true;
}

function addStep(s) {
  const div = document.createElement("div");
  div.className = s.passed ? "pass" : "fail";
  div.textContent = `t = ${s.time_s.toFixed(1)} s: ${s.buffer_pkts} pkt, ` +
    `${(100 * s.utilization).toFixed(2)} % ${s.passed ? "✓" : "✗"} → ${s.next_buffer_pkts}` +
    (s.converged ? " (converged)" : "");
  $("steps").prepend(div);
  while ($("steps").childElementCount > 200) $("steps").lastChild.remove();
}

function numbers(id, rows) {
  const el = $(id);
  el.textContent = "";
  for (const [label, value, key] of rows) {
    const div = document.createElement("div");
    const b = document.createElement("b");
    b.textContent = value;
    if (key) b.id = key;
    div.append(label, b);
    el.appendChild(div);
  }
}

function render() {
  requestAnimationFrame(render);
  if (!page.dirty) return;
  page.dirty = false;
  const d = page.data;
  const c = page.charts;
  c.util.setData([d.t, d.util, d.goodput]);
  c.queue.setData([d.t, d.queue, d.meanq, d.limit]);
  c.drops.setData([d.t, d.drops]);
  c.delay.setData([d.t, d.delay]);
  c.cwnd.setData([d.t, ...d.cwnd]);
  d.cwndIds.forEach((id, i) => c.cwnd.setSeries(i + 1, { label: `flow ${id}` }));
  const u = page.last;
  if (u) {
    showClock(u.t, page.state ? page.state.end_s : 0, u.speed);
    numbers("n-util", [["utilization", `${(100 * u.utilization).toFixed(1)} %`, "util-now"],
      ["goodput", u.goodput_bps == null ? "– (not measured live)" : `${(u.goodput_bps / 1e6).toFixed(1)} Mb/s`, "goodput-now"]]);
    const limit = u.buffer_pkts != null ? `${u.buffer_pkts} pkt` : (u.buffer_bytes != null ? `${u.buffer_bytes} B` : "∞");
    numbers("n-queue", [["queue now", `${u.queue_pkts} pkt`], ["limit", limit, "limit-now"],
      ["mean", `${u.mean_queue_pkts.toFixed(1)} pkt`]]);
    numbers("n-drops", [["drop rate", `${(100 * u.drop_rate).toFixed(3)} %`, "drops-now"]]);
    numbers("n-delay", [["queueing delay", `${u.delay_ms.toFixed(2)} ms`]]);
    if (document.activeElement !== $("flows-box")) $("flows-box").value = String(u.flows);
    if (document.activeElement !== $("buffer-box") && document.activeElement !== $("buffer-slider")) {
      $("buffer-box").value = u.buffer_pkts != null ? String(u.buffer_pkts) : (u.buffer_bytes != null ? `${u.buffer_bytes}B` : "");
    }
    numbers("n-cwnd", [["flows open", String(u.flows), "flows-now"],
      ...u.windows.map((w) => [`flow ${w[0]}`, `${w[1].toFixed(1)} seg`])]);
    $("autosize-state").textContent = u.autosizing ? "running" : "";
  }
  drawBufferAxis();
}

// ---- charts ----

// Dashed vertical lines at the control changes, numbered as in the log.
function changeLines(u) {
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = "#888";
  ctx.fillStyle = "#555";
  ctx.setLineDash([4, 3]);
  ctx.font = `${10 * devicePixelRatio}px sans-serif`;
  page.changes.forEach((ch, i) => {
    const x = u.valToPos(ch.t, "x", true);
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.fillText(String(i + 1), x + 2, u.bbox.top + 10 * devicePixelRatio);
  });
  ctx.restore();
}

// The largest rule of thumb the queue chart shows as a line (with headroom for its name):
// one up to three times the data's top; larger ones are named at the top instead.
function rulesInView(max) {
  const r = page.rules;
  const near = [r.rtt_c, r.sqrt_n, r.eq21].filter((v) => v != null && v <= 3 * Math.max(1, max));
  return near.length ? Math.max(...near) : 0;
}

// The rules of thumb as dashed lines on the queue chart's buffer axis (when in range), each
// named at the right on a white ground, the names kept a line apart; those above the axis are
// named together on one line at its top, with their sizes.
function ruleLines(u) {
  const r = page.rules;
  const ctx = u.ctx;
  const px = devicePixelRatio;
  const line = 14 * px;
  const top = u.scales.y.max;
  const right = u.bbox.left + u.bbox.width - 4 * px;
  ctx.save();
  ctx.font = `${12 * px}px sans-serif`;
  ctx.textBaseline = "bottom";
  const label = (text, x, y) => {
    const w = ctx.measureText(text).width;
    ctx.fillStyle = "rgba(255, 255, 255, 0.85)";
    ctx.fillRect(x - 2 * px, y - line + 1 * px, w + 4 * px, line);
    ctx.fillStyle = "#5e3590";
    ctx.fillText(text, x, y);
  };
  const inside = [];
  const above = [];
  for (const [v, name] of [[r.rtt_c, "RTT·C"], [r.sqrt_n, "RTT·C/√N"], [r.eq21, "eq. 2.1"]]) {
    if (v == null) continue;
    if (v > top) above.push(`${name} ${v.toFixed(0)}`);
    else inside.push([u.valToPos(v, "y", true), name]);
  }
  ctx.setLineDash([2, 4]);
  ctx.strokeStyle = "#7a4ba8";
  for (const [y] of inside) {
    ctx.beginPath();
    ctx.moveTo(u.bbox.left, y);
    ctx.lineTo(u.bbox.left + u.bbox.width, y);
    ctx.stroke();
  }
  // Highest line first; each name sits just above its line, lower if the one above is near.
  inside.sort((a, b) => a[0] - b[0]);
  let floor = u.bbox.top + (above.length ? 2 * line : line);
  for (const [y, name] of inside) {
    const at = Math.max(y - 2 * px, floor);
    label(name, right - ctx.measureText(name).width, at);
    floor = at + line;
  }
  if (above.length) {
    const text = `↑ ${above.join(" · ")} (pkt, above the axis)`;
    label(text, right - ctx.measureText(text).width, u.bbox.top + line);
  }
  ctx.restore();
}

function chart(id, title, series, yLabel, opts = {}) {
  const el = $(id);
  const o = {
    title, width: Math.max(300, el.clientWidth), height: 220,
    scales: { x: { time: false }, y: opts.y || {} },
    axes: [{ label: "simulated time (s)" }, { label: yLabel }],
    series: [{ label: "t (s)" }, ...series.map((s, i) => ({ stroke: COLORS[i], width: 1.5, ...s }))],
    hooks: { draw: [changeLines, ...(opts.draw || [])] },
    legend: { live: false },
  };
  return new uPlot(o, [[], ...series.map(() => [])], el);
}

function makeCharts() {
  const c = page.charts;
  c.util = chart("c-util", "Link utilization and goodput", [
    { label: "utilization (%)" }, { label: "goodput (% of the link)" },
  ], "% of the link", { y: { range: [0, 105] } });
  c.queue = chart("c-queue", "Queue occupancy and the buffer limit", [
    { label: "queue (pkt)" }, { label: "mean over the step (pkt)", width: 1 },
    { label: "limit (pkt)", stroke: "#c0392b", width: 2, paths: uPlot.paths.stepped({ align: 1 }) },
  ], "packets", {
    y: { range: (u, min, max) => [0, Math.max(1, max, rulesInView(max)) * 1.25] }, draw: [ruleLines],
  });
  c.drops = chart("c-drops", "Drop rate", [{ label: "drops ÷ arrivals (%)" }], "%",
    { y: { range: (u, min, max) => [0, Math.max(0.1, max) * 1.1] } });
  c.delay = chart("c-delay", "Queueing delay (Little's law, per step)", [{ label: "mean wait (ms)" }], "ms",
    { y: { range: (u, min, max) => [0, Math.max(0.1, max) * 1.1] } });
  c.cwnd = chart("c-cwnd", "Congestion windows of a few flows",
    Array.from({ length: WINDOWS }, (_, i) => ({ label: `flow ${i}`, width: 1 })), "segments",
    { y: { range: (u, min, max) => [0, Math.max(4, max) * 1.1] } });
  window.addEventListener("resize", () => {
    for (const [id, ch] of Object.entries(c)) {
      ch.setSize({ width: Math.max(300, $(`c-${id}`).clientWidth), height: 220 });
    }
  });
}

// ---- controls ----

function wire() {
  $("take").onclick = () => send({ type: "take_control" });
  $("load").onclick = () => {
    const duration = $("duration").value.trim();
    send({ type: "load", source: $("source").value, ...(duration ? { duration } : {}) });
  };
  $("resume").onclick = () => send({ type: "resume" });
  $("pause").onclick = () => send({ type: "pause" });
  $("pace").onchange = () => send({ type: "pace", value: $("pace").value });
  const slider = $("buffer-slider");
  slider.oninput = () => { $("buffer-box").value = String(pktsForSlider(Number(slider.value))); };
  slider.onchange = () => control("buffer", pktsForSlider(Number(slider.value)));
  $("buffer-set").onclick = () => {
    const v = $("buffer-box").value.trim();
    control("buffer", /^\d+$/.test(v) ? Number(v) : v);
  };
  const flows = () => Number(page.last ? page.last.flows : 0);
  const flowsValue = (v) => (/^-?\d+$/.test(v.trim()) ? Number(v) : v);
  $("flows-less").onclick = () => control("flows", Math.max(0, flows() - 10));
  $("flows-more").onclick = () => control("flows", flows() + 10);
  $("flows-set").onclick = () => control("flows", flowsValue($("flows-box").value));
  $("access-fast").onclick = () => control("access", "fast");
  $("access-slow").onclick = () => control("access", "slow");
  $("tcp-set").onclick = () => {
    control("pacing", $("pacing").value);
    control("cc", $("cc").value);
  };
  $("target-set").onclick = () => control("target", Number($("target").value));
  $("autosize").onclick = () => {
    const t = Number($("target").value);
    if (page.state && page.state.target !== t) control("target", t);
    control("autosize", true);
  };
  $("autosize-stop").onclick = () => control("autosize", false);
}

makeCharts();
wire();
connect();
requestAnimationFrame(render);
