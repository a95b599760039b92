/**
 * The dev server's dashboard: one self-contained page (no CDN, works offline). A small script
 * follows `/v2/dashboard/events` (Server-Sent Events) and redraws the table and the per-instance
 * batch timeline; the buttons call the repository API.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>tensorfn dev</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 24px; color: #1d2430; background: #fafbfc; }
  h1 { font-size: 20px; margin: 0 0 4px; } .sub { color: #667; margin-bottom: 16px; }
  table { border-collapse: collapse; width: 100%; background: #fff; }
  th, td { padding: 6px 10px; border-bottom: 1px solid #e3e6ea; text-align: right; white-space: nowrap; }
  th:first-child, td:first-child, td.state, th.state { text-align: left; }
  .state span { padding: 2px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
  .READY { background: #d9f2e1; color: #146c2e; } .PARKED { background: #e4e9f7; color: #2b4aa0; }
  .LOADING, .UNLOADING { background: #fff2cc; color: #8a6100; } .FAILED { background: #fde2e1; color: #a4161a; }
  .UNAVAILABLE { background: #eceef1; color: #555; }
  .split { display: inline-block; width: 90px; height: 8px; background: #e3e6ea; vertical-align: middle; }
  .split i { display: block; height: 8px; background: #e08a00; }
  button { font-size: 12px; margin-left: 4px; }
  h2 { font-size: 16px; margin: 24px 0 8px; } canvas { background: #fff; border: 1px solid #e3e6ea; width: 100%; }
  .legend { color: #667; font-size: 12px; }
</style>
</head>
<body>
<h1>tensorfn dev server</h1>
<div class="sub" id="status">connecting…</div>
<table>
  <thead><tr><th>function</th><th class="state">state</th><th>instances</th><th>queued</th><th>infer/s</th><th>failed/s</th>
  <th>p50 ms</th><th>p99 ms</th><th>avg batch</th><th>queue vs compute</th><th></th></tr></thead>
  <tbody id="rows"></tbody>
</table>
<h2>Batches per instance</h2>
<div class="legend">Each bar is one execution on one instance (width = duration, darker = bigger batch); gaps are idle time.</div>
<canvas id="timeline" width="1200" height="120"></canvas>
<script>
const rows = document.getElementById("rows");
const status = document.getElementById("status");
const canvas = document.getElementById("timeline");
const fmt = (v, d = 1) => (v === undefined || v === null ? "–" : Number(v).toFixed(d));
async function act(name, action) {
  status.textContent = action + " " + name + "…";
  const res = await fetch("/v2/repository/models/" + encodeURIComponent(name) + "/" + action, { method: "POST" });
  const body = await res.json().catch(() => ({}));
  status.textContent = res.ok ? action + " " + name + ": done" : action + " " + name + ": " + (body.error || res.status);
}
function render(snapshot) {
  rows.innerHTML = "";
  for (const f of snapshot.functions) {
    const tr = document.createElement("tr");
    tr.dataset.function = f.name;
    const total = (f.queueMsPerRequest || 0) + (f.computeMsPerRequest || 0);
    const queueShare = total > 0 ? Math.round((100 * f.queueMsPerRequest) / total) : 0;
    tr.innerHTML =
      "<td>" + f.name + " <small>v" + f.version + "</small></td>" +
      '<td class="state"><span class="' + f.state + '">' + f.state + "</span></td>" +
      "<td>" + f.instances + "</td><td>" + f.pending + "</td><td class=\\"throughput\\">" + fmt(f.inferPerS) + "</td>" +
      '<td class="failed" title="of which refused by rate_limit: ' + fmt(f.rateLimitedPerS) + '/s">' + fmt(f.failPerS) + "</td>" +
      "<td>" + fmt(f.p50Ms, 2) + "</td><td>" + fmt(f.p99Ms, 2) + "</td><td>" + fmt(f.avgBatch) + "</td>" +
      '<td title="queue ' + fmt(f.queueMsPerRequest, 2) + " ms, compute " + fmt(f.computeMsPerRequest, 2) + ' ms per request"><span class="split"><i style="width:' + queueShare + '%"></i></span> ' + queueShare + "% queue</td>" +
      "<td></td>";
    for (const action of ["load", "unload", "park"]) {
      const b = document.createElement("button");
      b.textContent = action;
      b.dataset.action = action;
      b.onclick = () => act(f.name, action);
      tr.lastChild.appendChild(b);
    }
    rows.appendChild(tr);
  }
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
const events = new EventSource("/v2/dashboard/events");
events.onmessage = (e) => { status.textContent = "live · " + new Date().toLocaleTimeString(); render(JSON.parse(e.data)); };
events.onerror = () => { status.textContent = "disconnected; retrying…"; };
</script>
</body>
</html>
`;
