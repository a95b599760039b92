#!/usr/bin/env bash
# Serving speed with and without a GLIBC_TUNABLES setting (the hot-path side of
# bench/studies/hugepage-wake.sh): one fresh server on functions/ per setting, in interleaved
# rounds, each loaded by `tensorfn bench` (2 s warm-up, 5 s window); prints its table row, RSS at
# start and after, and the anonymous huge pages it held.
#   bash bench/studies/tunables-serving.sh <model> <concurrency> <json|binary> [rounds=2] [tunables=glibc.malloc.hugetlb=1]
set -euo pipefail
model=$1; c=$2; enc=$3; rounds=${4:-2}; tunables=${5:-glibc.malloc.hugetlb=1}; port=${PORT:-8795}
cd "$(dirname "$0")/../.."
binary=(); [ "$enc" = binary ] && binary=(--binary)
log=$(mktemp); pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -f "$log"' EXIT
for r in $(seq "$rounds"); do
  for t in "" "$tunables"; do
    GLIBC_TUNABLES=$t node adapters/node/bin.mjs serve --repo functions --model-control-mode none --port "$port" > "$log" 2>&1 &
    pid=$!
    until curl -s -o /dev/null "localhost:$port/v2/health/ready"; do sleep 0.3; done
    rss0=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
    row=$(node adapters/node/bin.mjs bench "http://127.0.0.1:$port" --model "$model" --concurrency "$c" "${binary[@]}" --warmup 2s --duration 5s 2>&1 | tail -1)
    rss1=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
    thp=$(awk '/AnonHugePages/{print $2}' "/proc/$pid/smaps_rollup")
    echo "round $r [${t:-default}] RSS ${rss0} -> ${rss1} kB, huge pages ${thp} kB"
    echo "  $row"
    kill $pid; wait $pid 2>/dev/null || true; pid=
  done
done
