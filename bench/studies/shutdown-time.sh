#!/usr/bin/env bash
# Study: SIGTERM to exit for a server holding every bundled function loaded (--model-control-mode none).
#   bash bench/studies/shutdown-time.sh [checkout=.] [port=8830]
# Run it for two checkouts in turn to compare (README: "A shutdown collects and trims once").
root=$(cd "${1:-.}" && pwd); port=${2:-8830}
node "$root/adapters/node/bin.mjs" serve --repo "$root/functions" --model-control-mode none --port "$port" > /dev/null 2>&1 & pid=$!
until curl -s "localhost:$port/v2/health/ready" > /dev/null; do sleep 0.2; done; sleep 2
start=$(date +%s%N); kill -TERM "$pid"; wait "$pid"; end=$(date +%s%N)
echo "$root: exit $(( (end - start) / 1000000 )) ms after SIGTERM"
