#!/usr/bin/env bash
# A wake from PARKED with and without glibc's transparent huge pages for malloc (issue 11, target 6).
# A park gives the session's memory back to the system (malloc_trim, native/), so the wake faults it
# in again; where a page fault is dear (this VM: ~15 µs, counted below) that is most of the wake.
# `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` (glibc ≥ 2.35; the kernel's THP mode `madvise` or
# `always`) has malloc ask for 2 MiB pages, so far fewer faults. One server per setting, on copies
# of the bundled mlp and resnet with `scale: { idle_timeout_ms: 0, park: host }`; each model parked
# and called `reps` times with a raw binary request; median of the client-side time, the process's
# minor faults over the request, RSS while parked.
#   bash bench/studies/hugepage-wake.sh [reps=5] [settings…]   (default: "" glibc.malloc.hugetlb=1)
set -euo pipefail
reps=${1:-5}; port=${PORT:-8731}
shift || true
settings=("$@"); [ ${#settings[@]} -eq 0 ] && settings=("" "glibc.malloc.hugetlb=1")
cd "$(dirname "$0")/../.."
echo "THP mode: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown); $(ldd --version | head -1)"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
head -c 602112 /dev/zero > "$work/resnet.bin"
head -c 2048 /dev/zero > "$work/mlp.bin"
for m in mlp resnet; do
  cp -r "functions/$m" "$work/$m"
  printf '\nscale: { idle_timeout_ms: 0, park: host }\n' >> "$work/$m/function.yaml"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for tunables in "${settings[@]}"; do
  GLIBC_TUNABLES=$tunables node adapters/node/bin.mjs serve --repo "$work" --port "$port" > "$work/log" 2>&1 &
  pid=$!
  until curl -s -o /dev/null "localhost:$port/v2/health/ready"; do sleep 0.2; done
  for m in mlp resnet; do
    : > "$work/rows"
    # One wake first, not counted: the model's first load in this process.
    for i in $(seq 0 "$reps"); do
      curl -s -o /dev/null -XPOST "localhost:$port/v2/repository/models/$m/park"
      sleep 0.3
      rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
      before=$(awk '{print $10}' "/proc/$pid/stat")
      seconds=$(curl -s -o /dev/null -w '%{time_total}' -XPOST "localhost:$port/v2/models/$m/infer" -H 'inference-header-content-length: 0' --data-binary "@$work/$m.bin")
      after=$(awk '{print $10}' "/proc/$pid/stat")
      [ "$i" -gt 0 ] && echo "$seconds $((after - before)) $rss" >> "$work/rows"
    done
    ms=$(awk '{print $1 * 1000}' "$work/rows" | median)
    faults=$(awk '{print $2}' "$work/rows" | median)
    rss=$(awk '{print $3 / 1024}' "$work/rows" | median)
    printf '%-40s %-6s first response from PARKED %7.1f ms  minor faults %6d  RSS parked %6.0f MiB\n' "${tunables:-default}" "$m" "$ms" "$faults" "$rss"
  done
  kill $pid; wait $pid 2>/dev/null || true; pid=
done
