#!/usr/bin/env bash
# WebGPU on a real GPU, for a host with a GPU driver but no Node, no network, and at most 64 MiB
# of files per run (the H200 lent through the `device` tool).
#
#   bash bench/suites/gpu-check.sh pack      here, after `npm ci`: writes bench/out/gpu-check/ (about 36 MiB)
#   bash bench/suites/gpu-check.sh run       on the GPU host, in a copy of the repository carrying that folder
#   bash bench/suites/gpu-check.sh selftest  here: pack, then run it the host's way (no Node on PATH, no
#                                     node_modules) on whatever adapter Deno finds (llvmpipe)
#
# What travels (pack): the Deno binary (xz), tensorfn and the check program bundled into one
# JavaScript file (bench/suites/gpu-check/main.ts), onnxruntime-web's WebGPU glue and WebAssembly (xz),
# the Vulkan loader (libvulkan.so.1 from Debian's libvulkan1) for hosts without one, and the native
# addon (NVML, for the served runtime's GPU families).
# What runs: Deno's WebGPU goes through Vulkan on Linux; the program prints the adapter, builds
# the resnet and mlp models from their TypeScript builders, measures them raw on onnxruntime-web
# WebGPU vs WASM (and checks the outputs agree), then serves them with tensorfn on WebGPU over
# HTTP at concurrency 1 and 32, and prints the GPU families (nv_gpu_*) that server's /metrics reads
# through NVML, and which CUDA/cuDNN/TensorRT libraries the host's loader finds (onnxruntime-node's
# CUDA provider needs them; its own provider libraries are too big to carry, so CUDA itself is not
# run here). It prints one line `GPU-CHECK {json}` and `gpu-check: ok|FAILED`,
# writes the JSON to $OUT/gpu-check.json when OUT is set, and exits non-zero on failure.
#
# Knobs: GPU_CHECK_MODELS (resnet,mlp), GPU_CHECK_SECONDS (3), GPU_CHECK_XZ_LEVEL (6; 0 is faster
# and larger), GPU_CHECK_BUNDLE (bench/out/gpu-check).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUNDLE=${GPU_CHECK_BUNDLE:-$ROOT/bench/out/gpu-check}
LIMIT_MIB=60
log() { printf 'gpu-check: %s\n' "$*" >&2; }

pack() {
  local deno=$ROOT/node_modules/deno/deno ort=$ROOT/node_modules/onnxruntime-web/dist level=${GPU_CHECK_XZ_LEVEL:-6}
  [[ -x $deno && -d $ort ]] || { log "run npm ci first (needs node_modules/deno and onnxruntime-web)"; exit 2; }
  rm -rf "$BUNDLE" && mkdir -p "$BUNDLE/lib"
  log "bundling bench/suites/gpu-check/main.ts"
  # deno bundle resolves onnxruntime-web/webgpu to its build that loads the .mjs glue beside it;
  # the import map swaps the native onnxruntime-node for a stub (the check serves on WebGPU only).
  (cd "$ROOT" && NO_COLOR=1 "$deno" bundle --quiet --platform deno --import-map bench/suites/gpu-check/import-map.json \
    -o "$BUNDLE/gpu-check.js" bench/suites/gpu-check/main.ts)
  cp "$ort/ort-wasm-simd-threaded.asyncify.mjs" "$BUNDLE/"
  # The native addon (30 kB, glibc x86-64): its NVML binding gives the served runtime's /metrics the GPU families.
  local addon=$ROOT/native/build/Release/tensorfn_native.node
  if [[ -f $addon ]]; then cp "$addon" "$BUNDLE/"; else log "warning: native addon not built (npm ci builds it): no NVML readings on the host"; fi
  log "compressing deno and onnxruntime-web's wasm (xz -$level)"
  xz -T0 "-$level" -c "$deno" >"$BUNDLE/deno.xz"
  xz -T0 "-$level" -c "$ort/ort-wasm-simd-threaded.asyncify.wasm" >"$BUNDLE/ort-wasm-simd-threaded.asyncify.wasm.xz"
  local tmp
  tmp=$(mktemp -d)
  if (cd "$tmp" && apt-get download libvulkan1 >/dev/null 2>&1) && dpkg -x "$tmp"/libvulkan1_*.deb "$tmp/x"; then
    cp -L "$tmp"/x/usr/lib/x86_64-linux-gnu/libvulkan.so.1 "$BUNDLE/lib/"
  else
    log "warning: could not fetch Debian's libvulkan1; the host must have its own Vulkan loader"
  fi
  rm -rf "$tmp"
  (cd "$BUNDLE" && sha256sum deno.xz gpu-check.js ort-wasm-simd-threaded.asyncify.* tensorfn_native.node lib/* >MANIFEST 2>/dev/null || true)
  local mib=$(( $(du -sb "$BUNDLE" | cut -f1) / 1048576 ))
  log "packed $BUNDLE: ${mib} MiB"
  (( mib <= LIMIT_MIB )) || { log "over ${LIMIT_MIB} MiB: the host takes at most 64 MiB per run"; exit 2; }
}

unxz_to() { # file.xz → target, with python3's lzma where xz is missing
  if command -v xz >/dev/null; then xz -dc "$1" >"$2"; else python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"; fi
}

run() {
  [[ -f $BUNDLE/gpu-check.js ]] || { log "no bundle at $BUNDLE: run 'bash bench/suites/gpu-check.sh pack' where node_modules is, and carry it"; exit 2; }
  local work
  work=$(mktemp -d /tmp/gpu-check.XXXXXX)
  unxz_to "$BUNDLE/deno.xz" "$work/deno" && chmod +x "$work/deno"
  cp "$BUNDLE/gpu-check.js" "$BUNDLE/ort-wasm-simd-threaded.asyncify.mjs" "$work/"
  unxz_to "$BUNDLE/ort-wasm-simd-threaded.asyncify.wasm.xz" "$work/ort-wasm-simd-threaded.asyncify.wasm"
  # Where the bundled native/index.ts looks for the addon: beside the program, as npm ci builds it.
  if [[ -f $BUNDLE/tensorfn_native.node ]]; then mkdir -p "$work/build/Release" && cp "$BUNDLE/tensorfn_native.node" "$work/build/Release/"; fi

  # What onnxruntime-node's CUDA provider would need on this host (its own provider libraries are
  # not carried: they are several hundred MiB, over what a run may bring).
  local cuda_libs cuda_dirs
  cuda_libs=$({ ldconfig -p 2>/dev/null || true; } | grep -oE '(libcudart|libcudnn|libcublas|libcublasLt|libcufft|libcurand|libnvinfer|libnvidia-ml)\.so[^ ]*' | sort -u | tr '\n' ' ' || true)
  cuda_dirs=$(ls -d /usr/local/cuda* 2>/dev/null | tr '\n' ' ' || true)
  log "CUDA libraries on the loader's path: ${cuda_libs:-none}"
  log "CUDA toolkits: ${cuda_dirs:-none under /usr/local}"
  export GPU_CHECK_CUDA_LIBS="$cuda_libs" GPU_CHECK_CUDA_DIRS="$cuda_dirs"

  # Vulkan: the host's loader if it has one, else ours; the NVIDIA driver's ICD where containers mount it.
  if ! { ldconfig -p 2>/dev/null || true; } | grep 'libvulkan.so.1 ' >/dev/null && [[ -f $BUNDLE/lib/libvulkan.so.1 ]]; then
    export LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    log "using the bundled Vulkan loader"
  fi
  for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
    if [[ -f $icd ]]; then export VK_ADD_DRIVER_FILES=$icd${VK_ADD_DRIVER_FILES:+:$VK_ADD_DRIVER_FILES}; log "Vulkan ICD: $icd"; break; fi
  done
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu-check: nvidia-smi: /' >&2 || true

  local out=${OUT:-$work} status=0
  check() {
    DENO_DIR=$work/deno-dir NO_COLOR=1 "$work/deno" run -A --unstable-no-legacy-abort "$work/gpu-check.js" \
      --models "${GPU_CHECK_MODELS:-resnet,mlp}" --seconds "${GPU_CHECK_SECONDS:-3}" --out "$out/gpu-check.json"
  }
  # Vulkan first (the GPU path this check is for); without a Vulkan adapter, any backend wgpu has (GL on llvmpipe here).
  DENO_WEBGPU_BACKEND=vulkan check || status=$?
  if (( status == 3 )); then
    log "no Vulkan adapter; trying every WebGPU backend"
    status=0
    check || status=$?
  fi
  rm -rf "$work"
  return $status
}

selftest() {
  pack
  # The host's conditions: no Node on PATH, no node_modules, a bare HOME.
  env -i PATH=/usr/bin:/bin HOME="$(mktemp -d)" OUT="${OUT:-}" GPU_CHECK_BUNDLE="$BUNDLE" \
    GPU_CHECK_MODELS="${GPU_CHECK_MODELS:-mlp}" GPU_CHECK_SECONDS="${GPU_CHECK_SECONDS:-1}" \
    bash "$ROOT/bench/suites/gpu-check.sh" run
}

case ${1:-} in
  pack) pack ;;
  run) run ;;
  selftest) selftest ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
