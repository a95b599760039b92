/**
 * The dev server's dashboard: one self-contained page (no CDN, works offline) whose script
 * (dashboard-script.ts) follows `/v2/dashboard/events` and redraws the table and the
 * per-instance batch timeline; the buttons call the repository API. Script and style are files
 * of their own so the Content-Security-Policy can forbid every inline one.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>tensorfn dev</title>
<link rel="stylesheet" href="/dashboard.css">
<script src="/dashboard.js" defer></script>
</head>
<body>
<h1>tensorfn dev server</h1>
<div class="sub" id="status">connecting…</div>
<form id="key-form" hidden>
  <label>This server needs an admin key: <input id="key" type="password" autocomplete="off" size="40"></label>
  <button type="submit">use key</button>
</form>
<table>
  <thead><tr><th>function</th><th class="state">state</th><th>instances</th><th>queued</th><th>infer/s</th><th>failed/s</th>
  <th>p50 ms</th><th>p99 ms</th><th>avg batch</th><th>queue vs compute</th><th></th></tr></thead>
  <tbody id="rows"></tbody>
</table>
<div class="legend">Click a function's name for its plots over the last five minutes. A generator shows its slots per iteration (a colour per sequence).</div>
<h2>Batches per instance</h2>
<div class="legend">Each bar is one execution on one instance (width = duration, darker = bigger batch); gaps are idle time.</div>
<canvas id="timeline" width="1200" height="120"></canvas>
</body>
</html>
`;

export const DASHBOARD_CSS = `
body { font: 14px system-ui, sans-serif; margin: 24px; color: #1d2430; background: #fafbfc; }
h1 { font-size: 20px; margin: 0 0 4px; } .sub { color: #667; margin-bottom: 16px; }
[hidden] { display: none; } form { margin-bottom: 16px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { padding: 6px 10px; border-bottom: 1px solid #e3e6ea; text-align: right; white-space: nowrap; }
th:first-child, td:first-child, td.state, th.state { text-align: left; }
.state span { padding: 2px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
.READY { background: #d9f2e1; color: #146c2e; } .PARKED { background: #e4e9f7; color: #2b4aa0; }
.LOADING, .UNLOADING { background: #fff2cc; color: #8a6100; } .FAILED { background: #fde2e1; color: #a4161a; }
.UNAVAILABLE { background: #eceef1; color: #555; } .COLD { background: #e6f1f7; color: #275d7a; }
.split { display: inline-block; width: 90px; height: 8px; background: #e3e6ea; vertical-align: middle; }
.split i { display: block; height: 8px; background: #e08a00; }
button { font-size: 12px; margin-left: 4px; }
h2 { font-size: 16px; margin: 24px 0 8px; } canvas { background: #fff; border: 1px solid #e3e6ea; width: 100%; }
.legend { color: #667; font-size: 12px; }
td.name { cursor: pointer; } tr.bus td, tr.plots td { text-align: left; background: #fcfcfd; }
tr.reason td, .why { text-align: left; color: #a4161a; white-space: pre-wrap; font-size: 12px; }
canvas.bus { height: auto; } .plot { display: inline-block; margin-right: 12px; }
.plot canvas { width: 380px; height: 110px; }
`;
