#!/usr/bin/env bash
# A user's own decoder dropped in, by hand (not in CI: it installs torch and transformers): a
# Llama-architecture model from transformers, exported in Optimum's layout, served as a generator
# beside the example's tokenizer, its greedy tokens compared with transformers' own.
# See docs/notes/2026-12-llama-export.md.
#   bash test/manual/llama-export/run.sh        (from the project's root, after npm ci)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
python3 -m venv "$work/venv"
# This machine's mirror has torch as a local wheel (/opt/wheels); elsewhere pip finds it.
"$work/venv/bin/pip" install -q torch transformers onnx onnxscript 2>/dev/null || "$work/venv/bin/pip" install -q /opt/wheels/torch-*.whl transformers onnx onnxscript
repo="$work/repo"; mkdir -p "$repo/llama/1"
"$work/venv/bin/python" "$here/export.py" 333 "$repo/llama/1"
mv "$repo/llama/1/reference.json" "$work/"
cp functions/tiny_gpt/1/tokenizer.json functions/tiny_gpt/1/tokenizer_config.json functions/tiny_gpt/1/generation_config.json "$repo/llama/1/"
printf 'generation:\n  block_size: 4\n  kv_cache_bytes: 1048576\n' > "$repo/llama/function.yaml"
npx tsx "$here/check.ts" "$repo" "$work/reference.json"
