/**
 * The dashboard page's script, served as /dashboard.js. Every server-provided string reaches the
 * page through textContent, an attribute or the canvas, never through innerHTML: a function name
 * is data, whatever characters it holds. The event stream is read with fetch rather than
 * EventSource so it can carry `Authorization: Bearer` when the server has admin keys; the key
 * is asked for once and kept in sessionStorage (this tab only).
 */
export const DASHBOARD_SCRIPT = `"use strict";
const rows = document.getElementById("rows");
const status = document.getElementById("status");
const canvas = document.getElementById("timeline");
const keyForm = document.getElementById("key-form");
const keyInput = document.getElementById("key");
const BUTTON_TITLES = {
  load: "load it now (again, from its files)",
  unload: "release its sessions and model; in lazy mode it is cold: the next request loads it again",
  park: "release its sessions, keep the model in host memory: the next request wakes it",
};
const STATES = new Set(["READY", "PARKED", "LOADING", "UNLOADING", "FAILED", "UNAVAILABLE", "COLD"]);
const KEY = "tensorfn-admin-key";
/** Each function's last minutes (from /v2/dashboard/history, then each snapshot): key → points {t, …}. */
const history = new Map();
const expanded = new Set();
const HISTORY_S = 300;
const fmt = (v, d = 1) => (v === undefined || v === null ? "–" : Number(v).toFixed(d));
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const auth = () => (sessionStorage.getItem(KEY) ? { authorization: "Bearer " + sessionStorage.getItem(KEY) } : {});
const errorOf = async (res) => ((await res.json().catch(() => ({}))).error || "HTTP " + res.status);

function askKey(message) {
  status.textContent = message;
  keyForm.hidden = false;
  keyInput.focus();
  return new Promise((done) => {
    keyForm.onsubmit = (e) => {
      e.preventDefault();
      sessionStorage.setItem(KEY, keyInput.value.trim());
      keyInput.value = "";
      keyForm.hidden = true;
      done();
    };
  });
}

async function act(name, action) {
  status.textContent = action + " " + name + "…";
  const res = await fetch("/v2/repository/models/" + encodeURIComponent(name) + "/" + action, { method: "POST", headers: auth() });
  status.textContent = action + " " + name + ": " + (res.ok ? "done" : await errorOf(res));
}

function cell(tr, text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  tr.appendChild(td);
  return td;
}

function render(snapshot) {
  const fragment = document.createDocumentFragment();
  for (const f of snapshot.functions) {
    const name = String(f.name);
    const tr = document.createElement("tr");
    tr.dataset.function = name;
    const key = name + "/" + f.version;
    remember(key, f);
    const small = document.createElement("small");
    // A function with no version to show (its config does not parse) has a row all the same.
    small.textContent = f.version ? "v" + f.version : "";
    // A rollout's two versions say which side each is and its share of the unpinned requests now.
    if (f.rollout) small.textContent += " · " + f.rollout;
    const nameCell = cell(tr, name + " ", "name");
    nameCell.appendChild(small);
    nameCell.title = "show or hide its plots over the last minutes";
    nameCell.onclick = () => { expanded.has(key) ? expanded.delete(key) : expanded.add(key); render(snapshot); };
    const span = document.createElement("span");
    span.textContent = String(f.state);
    if (STATES.has(f.state)) span.className = f.state;
    if (f.reason) span.title = String(f.reason);
    cell(tr, "", "state").appendChild(span);
    cell(tr, String(f.instances));
    // A sequence model's live sequences beside its queue: each holds its state (and a slot) here.
    const queued = cell(tr, String(f.pending) + (f.sequences === undefined ? "" : " · " + f.sequences + " seq"));
    if (f.sequences !== undefined) queued.title = f.sequences + " sequences live, their state held here";
    cell(tr, fmt(f.inferPerS), "throughput");
    cell(tr, fmt(f.failPerS), "failed").title = "of which refused by rate_limit: " + fmt(f.rateLimitedPerS) + "/s";
    cell(tr, fmt(f.p50Ms, 2));
    cell(tr, fmt(f.p99Ms, 2));
    // Why batches left (the batcher's reasons since the last snapshot), largest share first.
    const why = Object.entries(f.dispatchShares || {}).sort((a, b) => b[1] - a[1]);
    cell(tr, fmt(f.avgBatch)).title = why.length ? "batches left: " + why.map(([reason, share]) => Math.round(100 * share) + "% " + reason).join(", ") : "";
    const total = (f.queueMsPerRequest || 0) + (f.computeMsPerRequest || 0);
    const queueShare = total > 0 ? Math.round((100 * f.queueMsPerRequest) / total) : 0;
    const split = cell(tr, "");
    split.title = "queue " + fmt(f.queueMsPerRequest, 2) + " ms, compute " + fmt(f.computeMsPerRequest, 2) + " ms per request";
    const bar = document.createElement("span");
    bar.className = "split";
    const fill = document.createElement("i");
    fill.style.width = queueShare + "%";
    bar.appendChild(fill);
    split.append(bar, " " + queueShare + "% queue");
    const buttons = cell(tr, "");
    for (const action of ["load", "unload", "park"]) {
      const b = document.createElement("button");
      b.textContent = action;
      b.title = BUTTON_TITLES[action];
      b.dataset.action = action;
      b.onclick = () => act(name, action);
      buttons.appendChild(b);
    }
    fragment.appendChild(tr);
    // Why it failed, under its row, where nobody has to hover to find it (other states' reasons: the badge's title).
    if (f.reason && f.state === "FAILED") fragment.appendChild(reasonRow(f.reason));
    if (f.generation) fragment.appendChild(busRow(name, f.generation));
    if (expanded.has(key)) fragment.appendChild(plotsRow(key, f.reason));
  }
  rows.replaceChildren(fragment);
  drawTimeline(snapshot);
}

/** Keeps a snapshot's figures as the newest point of the function's history. */
function remember(key, f) {
  let points = history.get(key);
  if (!points) history.set(key, (points = []));
  const t = Date.now() / 1000;
  if (points.length && t - points[points.length - 1].t < 0.5) return; // a re-render, not a new snapshot
  points.push({ t, inferPerS: f.inferPerS, p50Ms: f.p50Ms, p99Ms: f.p99Ms, queueMs: f.queueMsPerRequest, computeMs: f.computeMsPerRequest });
  while (points.length && points[0].t < t - HISTORY_S) points.shift();
}

/** A full-width row under a function's own. */
function wideRow(className) {
  const tr = document.createElement("tr");
  tr.className = className;
  const td = document.createElement("td");
  td.colSpan = 11;
  tr.appendChild(td);
  return [tr, td];
}

/**
 * A generator's slots over its last iterations — the "bus": each column an iteration, each row a
 * slot of max_num_seqs, a colour per sequence. Request-level batching leaves seats empty until the
 * batch's last sequence ends; continuous batching fills a seat the iteration after it frees.
 */
function busRow(name, g) {
  const [tr, td] = wideRow("bus");
  const caption = document.createElement("div");
  caption.className = "legend";
  caption.textContent = name + " · " + g.mode + " batching · " + g.running + " running / " + g.slots + " slots · " + g.waiting + " waiting · KV cache " + Math.round(100 * g.kvUsage) + "% · last " + g.recent.length + " iterations";
  const canvas = document.createElement("canvas");
  canvas.className = "bus";
  canvas.width = 1200;
  canvas.height = Math.max(12, g.slots * 5);
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#eef0f3";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const w = canvas.width / 160, h = canvas.height / Math.max(1, g.slots);
  g.recent.forEach((slots, x) => slots.forEach((id, y) => {
    if (!id) return;
    ctx.fillStyle = "hsl(" + ((id * 47) % 360) + ", 60%, 55%)";
    ctx.fillRect(x * w, y * h, Math.max(1, w - 0.5), Math.max(1, h - 0.5));
  }));
  td.append(caption, canvas);
  return tr;
}

/** A function's plots over the last minutes: throughput, p50 and p99 latency, queue vs compute per request. */
/** A function's reason for not serving (a failed load, its config's file:line), as text. */
function reasonRow(reason) {
  const [tr, td] = wideRow("reason");
  td.textContent = String(reason);
  return tr;
}

function plotsRow(key, reason) {
  const [tr, td] = wideRow("plots");
  if (reason) {
    const why = document.createElement("div");
    why.className = "why";
    why.textContent = "not serving: " + String(reason);
    td.appendChild(why);
  }
  const points = history.get(key) || [];
  const plot = (title, lines) => {
    const box = document.createElement("div");
    box.className = "plot";
    const label = document.createElement("div");
    label.className = "legend";
    label.textContent = title;
    const canvas = document.createElement("canvas");
    canvas.width = 380;
    canvas.height = 110;
    drawLines(canvas, points, lines);
    box.append(label, canvas);
    td.appendChild(box);
  };
  plot("infer/s", [["inferPerS", "#2b6cb0"]]);
  plot("latency ms: p50 (blue), p99 (red)", [["p50Ms", "#2b6cb0"], ["p99Ms", "#c53030"]]);
  plot("per request ms: queue (orange), compute (green)", [["queueMs", "#e08a00"], ["computeMs", "#2f855a"]]);
  return tr;
}

/** Lines over the last HISTORY_S seconds, zero at the bottom, the largest value at the top. */
function drawLines(canvas, points, lines) {
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const now = Date.now() / 1000;
  let max = 0;
  for (const p of points) for (const [field] of lines) if (p[field] != null) max = Math.max(max, p[field]);
  ctx.fillStyle = "#889";
  ctx.font = "11px system-ui";
  ctx.fillText(max > 0 ? fmt(max, max < 10 ? 2 : 0) : "no data yet", 4, 12);
  if (max <= 0) return;
  for (const [field, color] of lines) {
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    let drawing = false;
    for (const p of points) {
      if (p[field] == null) { drawing = false; continue; }
      const x = canvas.width * (1 - (now - p.t) / HISTORY_S);
      const y = canvas.height - 2 - (canvas.height - 16) * (p[field] / max);
      drawing ? ctx.lineTo(x, y) : ctx.moveTo(x, y);
      drawing = true;
    }
    ctx.stroke();
  }
}

/** The last minutes the server kept, so the plots start full rather than empty. */
async function backfill() {
  const res = await fetch("/v2/dashboard/history", { headers: auth() });
  if (!res.ok) return;
  const body = await res.json();
  const now = Date.now() / 1000;
  for (const [key, s] of Object.entries(body.functions)) {
    const points = s.ago.map((ago, i) => ({ t: now - ago, inferPerS: s.inferPerS[i], p50Ms: s.p50Ms[i], p99Ms: s.p99Ms[i], queueMs: s.queueMs[i], computeMs: s.computeMs[i] }));
    history.set(key, points.concat((history.get(key) || []).filter((p) => p.t > now)));
  }
}

function drawTimeline(snapshot) {
  const tracks = [...new Set(snapshot.timeline.map((b) => b.fn + " · instance " + b.instance))].sort();
  canvas.height = Math.max(40, tracks.length * 28 + 20);
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const label = 180, width = canvas.width - label - 10, span = snapshot.timelineSeconds * 1000;
  ctx.font = "12px system-ui";
  tracks.forEach((t, i) => { ctx.fillStyle = "#334"; ctx.fillText(t, 6, 22 + i * 28); });
  for (const b of snapshot.timeline) {
    const i = tracks.indexOf(b.fn + " · instance " + b.instance);
    const x = label + width * (1 - b.agoMs / span);
    const w = Math.max(1, (width * b.durMs) / span);
    ctx.fillStyle = "hsl(210, 70%, " + Math.max(30, 70 - 5 * Math.log2(1 + b.rows)) + "%)";
    ctx.fillRect(x, 8 + i * 28, w, 18);
  }
  if (tracks.length === 0) { ctx.fillStyle = "#889"; ctx.fillText("no executions in the last " + snapshot.timelineSeconds + " s", label, 24); }
}

/** Reads the Server-Sent Events stream; reconnects after a pause when it ends or fails. */
async function follow() {
  for (;;) {
    try {
      const res = await fetch("/v2/dashboard/events", { headers: auth() });
      if (res.status === 401) {
        await askKey(await errorOf(res));
        continue;
      }
      if (!res.ok) throw new Error(await errorOf(res));
      await backfill().catch(() => undefined);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        for (let end = buffer.indexOf("\\n\\n"); end >= 0; end = buffer.indexOf("\\n\\n")) {
          const data = buffer.slice(0, end).split("\\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\\n");
          buffer = buffer.slice(end + 2);
          if (!data) continue;
          status.textContent = "live · " + new Date().toLocaleTimeString();
          render(JSON.parse(data));
        }
      }
      status.textContent = "disconnected; retrying…";
    } catch (error) {
      status.textContent = "disconnected (" + error.message + "); retrying…";
    }
    await sleep(2000);
  }
}
follow();
`;
