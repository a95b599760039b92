#!/usr/bin/env bash
# Study: ten infer + park cycles of one mlp copy under `node --trace-gc`: the park call's time and how many
# full collections the main thread was asked for (V8 logs those as "testing"; one more comes at shutdown).
#   bash bench/studies/park-collections.sh [checkout=.] [port=8860]
root=$(cd "${1:-.}" && pwd); port=${2:-8860}
repo=$(mktemp -d); cp -r "$root/functions/mlp" "$repo/"; log=$(mktemp)
node --trace-gc "$root/adapters/node/bin.mjs" serve --repo "$repo" --port "$port" > "$log" 2>&1 & pid=$!
until curl -s "localhost:$port/v2/health/ready" > /dev/null; do sleep 0.2; done
body=$(node -e 'console.log(JSON.stringify({inputs:[{name:"input",datatype:"FP32",shape:[1,512],data:Array(512).fill(0.25)}]}))')
echo -n "park call, s:"
for i in $(seq 10); do
  curl -s -o /dev/null "localhost:$port/v2/models/mlp/infer" -d "$body"
  curl -s -o /dev/null -w " %{time_total}" -X POST "localhost:$port/v2/repository/models/mlp/park"
done; echo
sleep 0.5; kill "$pid"; wait "$pid" 2> /dev/null
main=$(grep -m1 -o "0x[0-9a-f]*" "$log")
echo "main-thread full collections requested: $(grep "$main" "$log" | grep -c testing)"
rm -rf "$repo" "$log"
