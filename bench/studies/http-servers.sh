#!/usr/bin/env bash
# Bun's two HTTP servers through the real server (docs/reference/cli.md, "Choosing Bun's HTTP
# server"): Bun.serve (the default) and node:http (`--http-server node`, the lossless drain), five
# alternating rounds of 2 s per step, median infer/s and the ratio. The same for Deno.serve against
# node:http was measured with this script at the commit that moved Deno to node:http, through a
# switch that commit removed.
#   bash bench/studies/http-servers.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -f "$out"' EXIT
node_modules/.bin/bun adapters/bun/main.ts serve --repo functions --port 8301 --model-control-mode none >/dev/null 2>&1 &
node_modules/.bin/bun adapters/bun/main.ts serve --repo functions --port 8302 --model-control-mode none --http-server node >/dev/null 2>&1 &
for port in 8301 8302; do
  for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/v2/health/ready" >/dev/null && break; sleep 0.5; done
done
for round in 1 2 3 4 5; do
  for step in "simple 1" "simple 32" "mlp 32"; do
    for port in 8301 8302; do
      set -- $step
      rate=$(node adapters/node/bin.mjs bench "http://127.0.0.1:$port" --model "$1" --concurrency "$2" --binary --duration 2s --warmup 500ms --json 2>/dev/null \
        | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{const j=JSON.parse(s);console.log((j.steps??j)[0].inferPerS.toFixed(0))})')
      echo "$port $1@$2 $rate" >>"$out"
    done
  done
done
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => l.split(" "));
const median = (port, step) => { const a = rows.filter((r) => r[0] === port && r[1] === step).map((r) => +r[2]).sort((x, y) => x - y); return a[a.length >> 1]; };
console.log("| step | Bun.serve infer/s | node:http infer/s | node:http ÷ Bun.serve |\n|---|---|---|---|");
for (const step of ["simple@1", "simple@32", "mlp@32"]) { const a = median("8301", step), b = median("8302", step); console.log(`| ${step} | ${a} | ${b} | ${(b / a).toFixed(2)} |`); }
' "$out"
