#!/usr/bin/env bash
# The cost of finding shared objects from the samples (runtime/src/objects.rs): CPU time of
# fixtures/runtime/libm.c (most samples in libm) and split.c (almost none outside the
# executable) with the runtime preloaded, exe-only and PROFIL_RANGES=all, for this tree's
# runtime and, side by side, an older build's shared object given as OLD_SO. Interleaved, in
# shuffled order; medians. Not a test: the figures go into BENCHMARKS.md.
#
# Usage: runtime/bench/objects.sh OLD_SO [reps] [hz]   (default 9 repetitions, 1000 Hz;
#        needs gcc, python3). Build OLD_SO from an older commit with
#        `git worktree add /tmp/old <commit> && (cd /tmp/old && cargo run -q -p profil-report -- runtime-path --shared)`.
set -euo pipefail
old="${1:?usage: objects.sh OLD_SO [reps] [hz]}"
reps="${2:-9}"
hz="${3:-1000}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
new="$(cargo run -q -p profil-report -- runtime-path --shared)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/libm" fixtures/runtime/libm.c -lm
gcc -O2 -o "$work/split" fixtures/runtime/split.c
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); new: $new; old: $old"
python3 - "$work" "$reps" "$hz" "$old" "$new" <<'PY'
import os, random, statistics, sys
work, reps, hz, old, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
configs = [("none", None, {})]
for label, so in (("old", old), ("new", new)):
    configs.append((f"{label} exe-only", so, {}))
    configs.append((f"{label} RANGES=all", so, {"PROFIL_RANGES": "all"}))
for prog, units in (("libm", "200"), ("split", "130")):
    res = {}
    for _ in range(reps):
        order = configs[:]
        random.shuffle(order)
        for name, so, extra in order:
            env = {k: v for k, v in os.environ.items() if not k.startswith("PROFIL_") and k != "LD_PRELOAD"}
            env.update(extra, PROFIL_HZ=hz, PROFIL_OUT=os.path.join(work, "bench.gmon"))
            if so:
                env["LD_PRELOAD"] = so
            pid = os.fork()
            if pid == 0:
                os.chdir(work)
                fd = os.open(os.devnull, os.O_WRONLY)
                os.dup2(fd, 1)
                exe = os.path.join(work, prog)
                os.execve(exe, [exe, units], env)
            _, st, ru = os.wait4(pid, 0)
            assert st == 0, (name, st)
            res.setdefault(name, []).append(ru.ru_utime + ru.ru_stime)
    base = statistics.median(res["none"])
    print(f"{prog} {units} at {hz} Hz (CPU seconds, user + system):")
    for name, _, _ in configs:
        v = res[name]
        print(f"  {name:16} median {statistics.median(v):.4f}  min {min(v):.4f}  max {max(v):.4f}  median/none {statistics.median(v) / base:.4f}")
PY
echo "# per-sample lookup, in-process (cargo test -p profil-rt --release -- --ignored --nocapture lookup_cost):"
cargo test -q -p profil-rt --release --lib -- --ignored --nocapture lookup_cost 2>&1 | grep "ns per sample"
