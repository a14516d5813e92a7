#!/usr/bin/env bash
# Runtime overhead against glibc's -pg and perf record (issue 9): CPU time of a loop-heavy and a
# call-heavy program, in C and in Rust, plain and under each profiler, with the samples each
# profiler took. Not a test: timings on a shared machine are noisy; the figures go into
# BENCHMARKS.md ("runtime: overhead against gcc -pg and perf record").
#
# Usage: runtime/bench/overhead.sh [reps]   (default 7 interleaved repetitions; needs gcc, rustc,
#        perf, python3; OVERHEAD_QUICK=1 shrinks the workloads to check the script)
#
# Every run is pinned to CPU 0 (sched_setaffinity, as taskset -c 0); the configurations of all
# programs are interleaved within each repetition, so slow drifts of the machine hit them alike.
set -euo pipefail
reps="${1:-7}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
obj="$(cargo run -q -p profil-report -- runtime-path)"
so="$(cargo run -q -p profil-report -- runtime-path --shared)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Three builds of each program: plain, with our runtime linked in, and with glibc's -pg (for
# Rust, -pg reaches only the link: it brings gcrt1.o, hence __monstartup, the 100 Hz profil
# histogram and _mcleanup, but rustc emits no mcount calls, so there is no call graph).
for p in loop fib; do
    gcc -O2 -o "$work/$p.c.plain" "$here/$p.c"
    gcc -O2 -o "$work/$p.c.rt" "$here/$p.c" "$obj"
    gcc -O2 -pg -o "$work/$p.c.pg" "$here/$p.c"
    rustc -O -o "$work/$p.rs.plain" "$here/$p.rs"
    rustc -O -C "link-arg=$obj" -o "$work/$p.rs.rt" "$here/$p.rs"
    rustc -O -C link-arg=-pg -o "$work/$p.rs.pg" "$here/$p.rs"
done
rm -f "$work"/*.pdb
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) $(uname -r) $(nproc) CPUs; $(perf --version); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# runtime object: $obj; shared object: $so"
python3 - "$work" "$reps" "${OVERHEAD_QUICK:-0}" "$so" <<'PY'
import os, re, struct, subprocess, sys, statistics as st

work, reps, quick, SO = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
progs = [  # (name, arguments): about 2 CPU-seconds each, plain
    ("loop.c", ["150"]), ("fib.c", ["32", "250"]),
    ("loop.rs", ["150"]), ("fib.rs", ["32", "250"]),
]
if quick:
    progs = [(n, ["10"] if n.startswith("loop") else ["30", "5"]) for n, _ in progs]

# (label, build, environment, perf record rate or None, clock the sampler runs on). "preload"
# runs the plain build with the runtime's shared object in LD_PRELOAD: the same code at the
# same addresses as "plain" and perf record, which matters for fib, whose speed moves by
# several percent with the alignment of its code (compare the linked PROFIL_OFF=1 row).
configs = [
    ("plain", "plain", {}, None, None),
    ("ours linked, PROFIL_OFF=1", "rt", {"PROFIL_OFF": "1"}, None, None),
    ("ours linked, default (perf_event)", "rt", {}, None, "user"),
    ("ours linked, PROFIL_HZ=100", "rt", {"PROFIL_HZ": "100"}, None, "user"),
    ("ours linked, PROFIL_TIMER=itimer", "rt", {"PROFIL_TIMER": "itimer"}, None, "user+sys"),
    ("ours LD_PRELOAD, PROFIL_OFF=1", "plain", {"LD_PRELOAD": SO, "PROFIL_OFF": "1"}, None, None),
    ("ours LD_PRELOAD, default (perf_event)", "plain", {"LD_PRELOAD": SO}, None, "user"),
    ("-pg (gcc -pg; rustc -C link-arg=-pg)", "pg", {}, None, "user+sys"),
    ("perf record -e task-clock:u -F 1000", "plain", {}, 1000, "user"),
    ("perf record -e task-clock:u -F 100", "plain", {}, 100, "user"),
]
# For each of our rows, the row of the same build with PROFIL_OFF=1.
off_of = {c[0]: ("ours linked, PROFIL_OFF=1" if c[1] == "rt" else "ours LD_PRELOAD, PROFIL_OFF=1")
          for c in configs if c[0].startswith("ours") and "OFF" not in c[0]}

def gmon_samples(path):
    """(histogram samples, rate in the header) of a GNU gmon file of this machine (LE, 64-bit);
    arc records are skipped."""
    data = open(path, "rb").read()
    assert data[:4] == b"gmon", path
    off, samples, rate = 20, 0, None
    while off < len(data):
        tag = data[off]
        if tag == 0:
            lo, hi, n, r = struct.unpack_from("<QQII", data, off + 1)
            rate = r
            samples += sum(struct.unpack_from("<%dH" % n, data, off + 41))
            off += 41 + 2 * n
        elif tag == 1:
            off += 1 + 8 + 8 + 4
        else:
            raise ValueError("%s: unexpected tag %d at offset %d" % (path, tag, off))
    return samples, rate

def perf_samples(path):
    out = subprocess.run(["perf", "report", "--stats", "-i", path], capture_output=True, text=True).stdout
    m = re.search(r"SAMPLE events:\s+(\d+)", out)
    return int(m.group(1)) if m else 0

def run(prog, args, cfg):
    label, build, env, perf_hz, clock = cfg
    exe = os.path.join(work, "%s.%s" % (prog, build))
    e = {k: v for k, v in os.environ.items() if not k.startswith("PROFIL_")}
    e.update(env)
    gm, pd, err = (os.path.join(work, f) for f in ("gmon.out", "perf.data", "stderr"))
    for f in (gm, pd):
        if os.path.exists(f):
            os.unlink(f)
    argv = []
    if perf_hz:
        argv += ["perf", "record", "-q", "-e", "task-clock:u", "-F", str(perf_hz), "-o", pd, "--"]
    argv += [exe] + args
    pid = os.fork()
    if pid == 0:
        os.chdir(work)
        os.sched_setaffinity(0, {0})  # as taskset -c 0, without a program in between
        fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1)
        fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC); os.dup2(fd, 2)
        os.execvpe(argv[0], argv, e)
    _, status, ru = os.wait4(pid, 0)
    text = open(err).read()
    assert status == 0, (label, prog, status, text)
    m = re.search(r"self-cpu (\S+) (\S+)", text)
    su, ss = float(m.group(1)), float(m.group(2))
    if perf_hz:
        n, rate = perf_samples(pd), perf_hz
    elif clock:
        n, rate = gmon_samples(gm)
    else:
        n, rate = 0, None
    return dict(cpu=ru.ru_utime + ru.ru_stime, su=su, ss=ss, n=n, rate=rate)

res = {(p, c[0]): [] for p, _ in progs for c in configs}
for r in range(reps):
    for p, args in progs:
        for c in configs:
            res[(p, c[0])].append(run(p, args, c))
    print("# repetition %d done, load average %.2f %.2f %.2f" % ((r + 1,) + os.getloadavg()), file=sys.stderr)

med = st.median
def own(x):
    return x["su"] + x["ss"]

for p, args in progs:
    base = res[(p, "plain")]
    b_cpu, b_own = med(x["cpu"] for x in base), med(own(x) for x in base)
    print("\n## %s %s: plain CPU time median %.3f s, min %.3f s (own getrusage: median %.3f s)"
          % (p, " ".join(args), b_cpu, min(x["cpu"] for x in base), b_own))
    print("Ratios are medians of the per-repetition ratios (each run against the plain run of the"
          " same repetition); \"vs OFF\" divides by the same build with PROFIL_OFF=1 instead.")
    print("| configuration | CPU ratio | min/min | program's own CPU ratio | vs OFF | samples | samples / CPU-s | header rate | µs per sample (whole / own) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in configs[1:]:
        xs = res[(p, c[0])]
        ratio = med(x["cpu"] / b["cpu"] for x, b in zip(xs, base))
        mins = min(x["cpu"] for x in xs) / min(b["cpu"] for b in base)
        oratio = med(own(x) / own(b) for x, b in zip(xs, base))
        vs_off = "-"
        if c[0] in off_of:
            vs_off = "%.4f" % med(x["cpu"] / o["cpu"] for x, o in zip(xs, res[(p, off_of[c[0]])]))
        n = med(x["n"] for x in xs)
        rate = hdr = per = "-"
        if c[4] and n:
            clk = med((x["su"] if c[4] == "user" else own(x)) for x in xs)
            rate, hdr = "%.0f" % (n / clk), "%d" % med(x["rate"] for x in xs)
            per = "%.1f / %.1f" % (med(x["cpu"] - b["cpu"] for x, b in zip(xs, base)) / n * 1e6,
                                   med(own(x) - own(b) for x, b in zip(xs, base)) / n * 1e6)
        print("| %s | %.4f | %.4f | %.4f | %s | %d | %s | %s | %s |" % (
            c[0], ratio, mins, oratio, vs_off, n, rate, hdr, per))
    # The slope between the two rates of one sampler: what one more sample costs, without the
    # fixed costs (perf record's start-up and its build-id pass at exit; our constructor and
    # the writing of gmon.out) and without the code-layout effect of linking.
    for name, hi, lo in (("ours linked (default vs PROFIL_HZ=100)", configs[2][0], configs[3][0]),
                         ("perf record (-F 1000 vs -F 100)", configs[8][0], configs[9][0])):
        h, l = res[(p, hi)], res[(p, lo)]
        dn = med(x["n"] for x in h) - med(x["n"] for x in l)
        dw = med(x["cpu"] - y["cpu"] for x, y in zip(h, l))
        do = med(own(x) - own(y) for x, y in zip(h, l))
        print("marginal cost per sample, %s: %.1f µs whole (wait4), %.1f µs in the program itself" % (
            name, dw / dn * 1e6 if dn else float("nan"), do / dn * 1e6 if dn else float("nan")))
print("\n# finished %s, load average %.2f %.2f %.2f" % ((__import__("time").strftime("%FT%TZ", __import__("time").gmtime()),) + os.getloadavg()))
PY
