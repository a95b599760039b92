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
    const small = document.createElement("small");
    small.textContent = "v" + f.version;
    cell(tr, name + " ").appendChild(small);
    const span = document.createElement("span");
    span.textContent = String(f.state);
    if (STATES.has(f.state)) span.className = f.state;
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
  }
  rows.replaceChildren(fragment);
  drawTimeline(snapshot);
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
