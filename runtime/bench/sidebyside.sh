#!/usr/bin/env bash
# Sampling cost of this runtime side by side with another build of it (issue 13: "not worse by
# more than 0.5% of CPU than the previous design"): fixtures/runtime/split.c plain, linked with
# OLD_OBJECT and linked with this tree's profil_rt.o, at PROFIL_HZ (default 1000), pinned to
# CPU 0, the three configurations in a shuffled order in every repetition (a fixed order biases
# whichever runs last on a loaded machine). Prints the median CPU time (user + system, wait4)
# of each and the median samples. Not a test: timings on a shared machine are noisy.
#
# Usage: runtime/bench/sidebyside.sh OLD_OBJECT [reps] [units]   (default 20 reps, 120 units)
#   OLD_OBJECT: a profil_rt.o of the previous design, e.g. `profil-report runtime-path` run by
#   a build of the older commit (copy the file: the cache directory is per version).
set -euo pipefail
old="${1:?usage: sidebyside.sh OLD_OBJECT [reps] [units]}"
reps="${2:-20}"
units="${3:-120}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
obj="$(cargo run -q -p profil-report -- runtime-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/plain" fixtures/runtime/split.c
gcc -O2 -o "$work/old" fixtures/runtime/split.c "$old"
gcc -O2 -o "$work/new" fixtures/runtime/split.c "$obj"
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) $(uname -r) $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# previous: $old; this: $obj; PROFIL_HZ=${PROFIL_HZ:-1000}, $reps reps of split $units"
python3 - "$work" "$reps" "$units" "${PROFIL_HZ:-1000}" <<'PY'
import os, random, statistics as st, struct, sys
work, reps, units, hz = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
exes = {"plain": f"{work}/plain", "previous": f"{work}/old", "this": f"{work}/new"}

def run(exe):
    gm = os.path.join(work, "gmon.out")
    if os.path.exists(gm):
        os.unlink(gm)
    pid = os.fork()
    if pid == 0:
        os.sched_setaffinity(0, {0})
        os.chdir(work)
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execve(exe, [exe, units], {"PATH": "/usr/bin:/bin", "PROFIL_HZ": hz})
    _, status, ru = os.wait4(pid, 0)
    assert status == 0, status
    n = 0
    if os.path.exists(gm):  # GNU gmon, one histogram record: sum the bins
        d = open(gm, "rb").read()
        cnt = struct.unpack_from("<I", d, 20 + 17)[0]
        n = sum(struct.unpack_from(f"<{cnt}H", d, 20 + 41))
    return ru.ru_utime + ru.ru_stime, n

res = {k: [] for k in exes}
rng = random.Random(1)
for _ in range(reps):
    order = list(exes.items())
    rng.shuffle(order)
    for k, e in order:
        res[k].append(run(e))
base = st.median(t for t, _ in res["plain"])
for k, v in res.items():
    t = st.median(x for x, _ in v)
    n = st.median(x for _, x in v)
    print(f"{k:9} median CPU {t:.3f} s ({(t / base - 1) * 100:+.2f}% vs plain), median samples {n:.0f}; all: "
          + " ".join(f"{x:.3f}" for x, _ in v))
PY
