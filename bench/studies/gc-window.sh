#!/usr/bin/env bash
# Young-generation collections of a loaded server in its steady state (issue 11): the server runs
# under `node --trace-gc-nvp`, gets 4 s of load to settle (models loaded, code compiled), then the
# scavenges of a 6 s window are averaged. Averages that include start-up mislead: loading the
# functions and compiling promote megabytes that no request ever made.
#   bash bench/studies/gc-window.sh [root=.] [model=mlp] [concurrency=32] [json|binary]
# `root` is a tensorfn checkout (a git worktree of another commit, for an A/B); it serves functions/.
set -euo pipefail
root=${1:-.}; model=${2:-mlp}; c=${3:-32}; enc=${4:-json}; port=${PORT:-8790}
log=$(mktemp)
node --trace-gc-nvp "$root/adapters/node/bin.mjs" serve --repo functions --model-control-mode none --port "$port" > "$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$log"' EXIT
until curl -s -o /dev/null "localhost:$port/v2/health/ready"; do sleep 0.3; done
binary=(); [ "$enc" = binary ] && binary=(--binary)
bench() { node adapters/node/bin.mjs bench "http://127.0.0.1:$port" --model "$model" --concurrency "$c" "${binary[@]}" --warmup 0ms --duration "$1" --json 2>/dev/null; }
bench 4s > /dev/null
mark=$(wc -l < "$log")
requests=$(bench 6s | node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8")); const s=(r.steps??r)[0]; console.log(s.requests ?? s.count ?? "?")')
main=$(grep -m1 -oE '^\[[0-9]+:0x[0-9a-f]+\]' "$log")
tail -n +"$mark" "$log" | grep -F "$main" | grep 'gc=s' | REQUESTS=$requests node -e '
const lines = require("fs").readFileSync(0, "utf8").trim().split("\n");
let n = 0, promoted = 0, pause = 0;
for (const l of lines) { const g = (k) => Number((l.match(new RegExp(" " + k + "=([0-9.]+)")) || [])[1]); n++; promoted += g("promoted"); pause += g("pause"); }
console.log(`${process.env.REQUESTS} requests in 6 s: ${n} scavenges, ${(promoted / n / 1024).toFixed(0)} KB promoted each (${(promoted / Number(process.env.REQUESTS)).toFixed(0)} B a request), pause ${(pause / n).toFixed(2)} ms on average`)'
echo "full collections (mark-compact) in the window: $(tail -n +"$mark" "$log" | grep -F "$main" | grep -c 'gc=mc' || true)"
