#!/usr/bin/env bash
# Where one perf_event sample's CPU cost goes on this machine: the loop of loop.c under a bare
# task-clock overflow (timer interrupt only), the same with a synchronous SIGTRAP to a counting
# handler, our whole runtime, and perf record, at 1000 and 4000 samples per CPU-second. Not a
# test; the figures go into BENCHMARKS.md ("runtime: overhead against gcc -pg and perf record").
#
# Usage: runtime/bench/samplecost.sh [reps]   (default 7 interleaved repetitions, each run pinned
#        to CPU 0; needs gcc, perf, taskset, python3)
set -euo pipefail
reps="${1:-7}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
obj="$(cargo run -q -p profil-report -- runtime-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/samplecost" "$here/samplecost.c"
gcc -O2 -o "$work/samplecost.rt" "$here/samplecost.c" "$obj"
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) $(uname -r) $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$reps" <<'PY'
import os, re, struct, subprocess, sys, statistics as st
work, reps = sys.argv[1], int(sys.argv[2])
units = "150"  # about 2 CPU-seconds

def run(label, argv, env, kind):
    e = {k: v for k, v in os.environ.items() if not k.startswith("PROFIL_")}
    e.update(env)
    err, gm, pd = (os.path.join(work, f) for f in ("stderr", "gmon.out", "perf.data"))
    for f in (gm, pd):
        if os.path.exists(f):
            os.unlink(f)
    pid = os.fork()
    if pid == 0:
        os.chdir(work)
        fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1)
        fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC); os.dup2(fd, 2)
        os.execvpe("taskset", ["taskset", "-c", "0"] + argv, e)
    _, status, ru = os.wait4(pid, 0)
    text = open(err).read()
    assert status == 0, (label, status, text)
    m = re.search(r"samples (\d+) loc (-?\d+) self-cpu (\S+) (\S+)", text)
    n, loc, own = int(m.group(1)), int(m.group(2)), float(m.group(3)) + float(m.group(4))
    if kind == "rt":
        data = open(gm, "rb").read()
        off, n = 20, 0
        while off < len(data):
            assert data[off] == 0
            k = struct.unpack_from("<I", data, off + 17)[0]
            n += sum(struct.unpack_from("<%dH" % k, data, off + 41))
            off += 41 + 2 * k
    elif kind == "perf":
        out = subprocess.run(["perf", "report", "--stats", "-i", pd], capture_output=True, text=True).stdout
        n = int(re.search(r"SAMPLE events:\s+(\d+)", out).group(1))
    return dict(own=own, n=n, loc=loc)

exe, rt = os.path.join(work, "samplecost"), os.path.join(work, "samplecost.rt")
configs = [("none", [exe, "none", "1", units], {}, None)]
for hz in (1000, 4000):
    configs += [
        ("task-clock overflow, no signal, %d Hz" % hz, [exe, "count", str(hz), units], {}, None),
        ("task-clock + SIGTRAP to a counting handler, %d Hz" % hz, [exe, "sigtrap", str(hz), units], {}, None),
        ("our runtime, PROFIL_HZ=%d" % hz, [rt, "none", "1", units], {"PROFIL_HZ": str(hz)}, "rt"),
        ("perf record -e task-clock:u -F %d" % hz,
         ["perf", "record", "-q", "-e", "task-clock:u", "-F", str(hz), "-o", os.path.join(work, "perf.data"), "--", exe, "none", "1", units], {}, "perf"),
    ]
res = {c[0]: [] for c in configs}
for r in range(reps):
    for c in configs:
        res[c[0]].append(run(*c))
    print("# repetition %d done, load average %.2f %.2f %.2f" % ((r + 1,) + os.getloadavg()), file=sys.stderr)
med = st.median
base = med(x["own"] for x in res["none"])
base_loc = med(x["loc"] for x in res["none"])
print("\nbaseline (none): program's own CPU median %.3f s; CPU 0 local timer interrupts during the loop, median %d" % (base, base_loc))
print("| configuration | program's own CPU ratio, median | samples, median | µs of the program's CPU per sample | extra CPU 0 timer interrupts per sample |")
print("|---|---|---|---|---|")
for c in configs[1:]:
    xs = res[c[0]]
    own, n, loc = med(x["own"] for x in xs), med(x["n"] for x in xs), med(x["loc"] for x in xs)
    print("| %s | %.4f | %d | %.1f | %.2f |" % (c[0], own / base, n, (own - base) / n * 1e6, (loc - base_loc) / n))
print("\n# finished, load average %.2f %.2f %.2f" % os.getloadavg())
PY
