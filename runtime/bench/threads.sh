#!/usr/bin/env bash
# Thread creation cost (issue 14: each pthread_create'd thread gets a clock of its own under the
# shared object): fixtures/runtime/threads.c `bench 10000` (10,000 threads created and joined
# one after another) without the runtime, with the shared object preloaded (perf clock, 1000 Hz),
# and, if given, with another shared object (for example the previous runtime's) preloaded.
# Prints the median wall and CPU nanoseconds per thread over the repetitions, alternating the
# variants so that a busy machine slows them alike. Not a test: timings go into BENCHMARKS.md.
#
# Usage: runtime/bench/threads.sh [reps [other.so]]   (default 7 repetitions; needs gcc, python3)
set -euo pipefail
reps="${1:-7}"
other="${2:-}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
so="$(cargo run -q -p profil-report -- runtime-path --shared)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gcc -O2 -pthread -o "$work/threads" fixtures/runtime/threads.c
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); shared object: $so"
python3 - "$work" "$reps" "$so" "$other" <<'PY'
import os, re, subprocess, sys, statistics
work, reps, so, other = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
variants = [("without the runtime", None), ("runtime (thread clocks)", so)]
if other:
    variants.append(("runtime " + other, other))
res = {name: ([], []) for name, _ in variants}
for _ in range(reps):
    for name, lib in variants:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROFIL_") and k != "LD_PRELOAD"}
        env["PROFIL_HZ"] = "1000"
        if lib:
            env["LD_PRELOAD"] = lib
        out = subprocess.run([os.path.join(work, "threads"), "bench", "10000"], cwd=work, env=env,
                             capture_output=True, text=True, check=True).stdout
        wall, cpu = map(float, re.findall(r"([0-9.]+) ns", out))
        res[name][0].append(wall)
        res[name][1].append(cpu)
print(f"{'variant':<40} {'wall ns/thread':>15} {'CPU ns/thread':>15}")
for name, _ in variants:
    w, c = res[name]
    print(f"{name:<40} {statistics.median(w):>15.0f} {statistics.median(c):>15.0f}")
PY
