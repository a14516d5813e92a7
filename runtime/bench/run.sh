#!/usr/bin/env bash
# Runtime benchmark: achieved samples per CPU-second for each backend at several PROFIL_HZ,
# and the overhead ratio (CPU time with the runtime / without) at several rates.
# Not a test: timings on a shared machine are noisy; the figures go into BENCHMARKS.md.
#
# Usage: runtime/bench/run.sh [reps]      (default 5 repetitions per point; needs gcc, python3)
set -euo pipefail
reps="${1:-5}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
obj="$(cargo run -q -p profil-report -- runtime-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/plain" fixtures/runtime/split.c
gcc -O2 -o "$work/prof" fixtures/runtime/split.c "$obj"
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; object: $obj"
python3 - "$work" "$reps" <<'PY'
import os, struct, sys, statistics
work, reps = sys.argv[1], int(sys.argv[2])

def run(exe, units, env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("PROFIL_")}
    e.update(env)
    gm = os.path.join(work, "gmon.out")
    if os.path.exists(gm):
        os.unlink(gm)
    pid = os.fork()
    if pid == 0:
        os.chdir(work)
        fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1)
        os.execve(exe, [exe, str(units)], e)
    _, status, ru = os.wait4(pid, 0)
    assert status == 0, status
    return ru.ru_utime, ru.ru_stime, gm

def hist(path):
    """(samples, rate in header) of a GNU gmon file written on this machine (LE, 64-bit)."""
    data = open(path, "rb").read()
    off, samples, rate = 20, 0, None
    while off < len(data):
        assert data[off] == 0, "only histogram records expected"
        lo, hi, n, r = struct.unpack_from("<QQII", data, off + 1)
        rate = r
        bins = struct.unpack_from("<%dH" % n, data, off + 41)
        samples += sum(bins)
        off += 41 + 2 * n
    return samples, rate

units = 220  # ~2 CPU-seconds of split.c
print("\n## achieved samples per CPU-second (split.c, %d units, median of %d runs)" % (units, reps))
print("| backend | PROFIL_HZ | samples / CPU-s (measured by wait4) | rate written in header | gprof total / CPU time |")
print("|---|---|---|---|---|")
for timer in ("perf", "itimer"):
    for hz in (100, 1000, 4000):
        got, hdr, ratio = [], [], []
        for _ in range(reps):
            u, s, gm = run(os.path.join(work, "prof"), units, {"PROFIL_TIMER": timer, "PROFIL_HZ": str(hz)})
            cpu = u + s if timer == "itimer" else u
            n, r = hist(gm)
            got.append(n / cpu); hdr.append(r); ratio.append(n / r / cpu)
        print("| %s | %d | %.0f | %d | %.3f |" % (timer, hz, statistics.median(got), statistics.median(hdr), statistics.median(ratio)))

print("\n## overhead: CPU time (user+sys) with the runtime / without (split.c, %d units, min and median of %d interleaved runs)" % (units, reps))
print("| PROFIL_TIMER / PROFIL_HZ | min ratio | median ratio |")
print("|---|---|---|")
# (timer, PROFIL_HZ); None = the runtime's defaults (perf_event at DEFAULT_HZ); "off" = PROFIL_OFF=1.
points = [(None, None), ("off", None)] + [("perf", h) for h in (100, 250, 500, 1000, 4000)] + [("itimer", 250)]
base, prof = [], {p: [] for p in points}
for _ in range(reps):
    u, s, _ = run(os.path.join(work, "plain"), units, {}); base.append(u + s)
    for p in points:
        env = {"PROFIL_OFF": "1"} if p[0] == "off" else {} if p[0] is None else {"PROFIL_TIMER": p[0], "PROFIL_HZ": str(p[1])}
        u, s, _ = run(os.path.join(work, "prof"), units, env)
        prof[p].append(u + s)
for p in points:
    name = "default" if p[0] is None else "PROFIL_OFF=1" if p[0] == "off" else "%s / %d" % p
    print("| %s | %.4f | %.4f |" % (name, min(prof[p]) / min(base), statistics.median(prof[p]) / statistics.median(base)))
print("\nbaseline CPU time: min %.3f s, median %.3f s" % (min(base), statistics.median(base)))
PY
