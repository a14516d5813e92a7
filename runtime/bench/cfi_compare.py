#!/usr/bin/env python3
"""Compare one program's profile from the runtime with perf's (issue 22; cfi-accuracy.sh).

usage: cfi_compare.py LABEL EXE OURS_JSON PERF_SCRIPT STATS_FILE SUMMARY_FILE

OURS_JSON is `profil-report --json gmon.out EXE`; PERF_SCRIPT is
`perf script -F ip,sym,dso --no-inline` of `perf record -e task-clock:u --call-graph dwarf`
(one block per sample: one line per frame, innermost first, "ip sym (dso)", blank line between
samples). STATS_FILE holds the runtime's stderr (its `profil-rt: stacks walks=...` line).

A function is (object file name, symbol): the executable's functions by their name, shared
objects' by name and object. Process start-up frames (`_start`, glibc's `__libc_start_*`) are
left out of the top 10 (perf always has them; the walk's job ends at `main`). PLT stubs are
one function per object, "[plt]": perf names them after the nearest symbol (`_init`, `x@plt`),
the report as an unnamed range; both are classified by address against the object's
.plt/.plt.sec/.plt.got sections. Inclusive share: samples with the function anywhere on the
stack, once per sample, over all samples; self share: samples with it innermost.

Prints a markdown section on stdout and appends one summary row to SUMMARY_FILE.
"""

import json
import os
import re
import subprocess
import sys
from collections import Counter

STARTUP = {"_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl"}
RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
UNNAMED = re.compile(r"^<(?P<obj>.*)\+0x(?P<lo>[0-9a-f]+)-0x(?P<hi>[0-9a-f]+)>$")
PERF_LINE = re.compile(r"^\s*(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)\s+\((?P<dso>[^()]*)\)\s*$")


CLONE = re.compile(r"(\.(?:part|isra|constprop|cold|lto_priv|localalias|llvm)(?:\.\d+)?)+$")


def norm(sym):
    """Symbol as both sides should spell it: no Rust hash, no symbol version, and a compiler's
    clone (`f.part.0`, `f.isra.0`, `f.cold`, ...) counted as its source function — the report
    names some clones by their DWARF function, perf by their symbol."""
    sym = RUST_HASH.sub("", sym)
    sym = re.sub(r"@@?[A-Z_0-9.]+$", "", sym)
    return CLONE.sub("", sym)


class Plt:
    """Address ranges of each object's PLT sections (from readelf -SW)."""

    def __init__(self):
        self.ranges = {}

    def of(self, path):
        if path not in self.ranges:
            r = []
            try:
                out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
            except OSError:
                out = ""
            for line in out.splitlines():
                m = re.search(r"\]\s+(\.plt\S*)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
                if m:
                    lo = int(m.group(2), 16)
                    r.append((lo, lo + int(m.group(3), 16)))
            self.ranges[path] = r
        return self.ranges[path]

    def contains(self, path, addr):
        return any(lo <= addr < hi for lo, hi in self.of(path))


class Aliases:
    """Each object's symbols that share an address (identical code folded, glibc's aliases):
    perf and the report may pick different names for one function, so both sides map every
    name to the group's smallest. From `nm -C` of the object and of its debug file (found by
    build-id under /usr/lib/debug), as both tools read those."""

    def __init__(self):
        self.canon = {}

    def of(self, path):
        if path not in self.canon:
            files = [path]
            note = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
            m = re.search(r"Build ID: ([0-9a-f]{2})([0-9a-f]+)", note)
            if m:
                files.append(f"/usr/lib/debug/.build-id/{m.group(1)}/{m.group(2)}.debug")
            parent = {}

            def find(x):
                while parent.setdefault(x, x) != x:
                    parent[x] = parent[parent[x]]
                    x = parent[x]
                return x

            for f in files:
                if not os.path.exists(f):
                    continue
                for flag in ([], ["-D"]):
                    out = subprocess.run(["nm", "-C", "--defined-only", *flag, f],
                                         capture_output=True, text=True).stdout
                    first = {}
                    for line in out.splitlines():
                        parts = line.split(" ", 2)
                        if len(parts) != 3 or parts[1] not in "TtWwi":
                            continue
                        n = norm(parts[2])
                        a = first.setdefault(parts[0], n)
                        ra, rn = find(a), find(n)
                        if ra != rn:
                            parent[max(ra, rn)] = min(ra, rn)
            self.canon[path] = {n: find(n) for n in parent}
        return self.canon[path]

    def name(self, path, sym):
        return self.of(path).get(sym, sym) if path else sym


def perf_samples(path, plt, aliases):
    """Stacks (innermost first) of (object, function) keys, and the dsos' paths by base name."""
    stacks, cur, paths = [], [], {}
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if cur:
                    stacks.append(cur)
                    cur = []
                continue
            m = PERF_LINE.match(line)
            if not m:
                continue
            dso, sym, ip = m.group("dso"), m.group("sym"), int(m.group("ip"), 16)
            base = os.path.basename(dso)
            paths.setdefault(base, dso)
            if sym.endswith("@plt") or (dso.startswith("/") and plt.contains(dso, ip)):
                sym = "[plt]"
            else:
                sym = aliases.name(dso if dso.startswith("/") else None, norm(sym))
            cur.append((base, sym))
    if cur:
        stacks.append(cur)
    return stacks, paths


def ours(path, exe_path, paths, plt, aliases):
    """The report's rows as {key: (self, total)}, its sample count and its sampled arcs."""
    with open(path) as f:
        d = json.load(f)
    exe_base = os.path.basename(exe_path)
    paths = dict(paths)
    paths[exe_base] = exe_path

    def key(obj, fn):
        p = paths.get(obj)
        m = UNNAMED.match(fn)
        if m and p and plt.contains(p, int(m.group("lo"), 16)):
            return (obj, "[plt]")
        return (obj, aliases.name(p, norm(fn)))

    rows = {}
    for r in d["rows"]:
        k = key(r["object"], r["function"])
        s, t = rows.get(k, (0, 0))
        rows[k] = (s + (r["samples"] or 0), t + (r["total_samples"] or 0))
    arcs = Counter()
    cg = d.get("call_graph") or {}
    ids = {}
    # The graph names a shared object's function "name (object)", the executable's "name";
    # raw_name is the symbol before demangling.
    objects = {r["object"] for r in d["rows"]} - {exe_base}
    for fn in cg.get("functions", []):
        name, obj = fn["name"], exe_base
        for o in objects:
            if name.endswith(f" ({o})"):
                name, obj = name[: -len(o) - 3], o
                break
        ids[fn["id"]] = key(obj, name)
    for a in cg.get("arcs", []):
        arcs[(ids[a["caller"]], ids[a["callee"]])] += a["samples"]
    return rows, d["total_samples"], arcs


def disassembly(exe, aliases):
    """For each function of EXE: the functions it can be the caller of on a stack — those it
    calls or jumps to directly and, through tail calls, the functions those jump to — and
    whether it can be the caller of any function: it has an indirect call, or a function it
    calls or reaches so ends in an indirect jump that is not a switch table (`jmp *(a,b,8)`, or
    `jmp *%r` right after `add ...,%r`)."""
    out = subprocess.run(["objdump", "-d", "-C", "-w", "--no-show-raw-insn", exe],
                         capture_output=True, text=True).stdout
    calls, jumps, ind_call, ind_tail, cur, prev = {}, {}, set(), set(), None, ""
    head = re.compile(r"^[0-9a-f]+ <(.+)>:$")
    branch = re.compile(r"\s(call|j[a-z]+)q?\s+[0-9a-f]+ <([^>]+)>")
    ind = re.compile(r"\s(call|jmp)q?\s+\*(\S+)")
    for line in out.splitlines():
        m = head.match(line)
        if m:
            cur = aliases.name(exe, norm(m.group(1)))
            calls.setdefault(cur, set())
            jumps.setdefault(cur, set())
            prev = ""
            continue
        if cur is None or ":\t" not in line:
            continue
        m = branch.search(line)
        i = ind.search(line)
        if m and "+0x" not in m.group(2):
            (calls if m.group(1) == "call" else jumps)[cur].add(aliases.name(exe, norm(m.group(2))))
        elif i and i.group(1) == "call":
            ind_call.add(cur)
        elif i and not cur.endswith("@plt"):  # a PLT stub leaves the object
            op = i.group(2)
            table = re.search(r",\s*[1248]\)$", op) or (
                op.startswith("%") and re.search(r"\sadd\S*\s+\S+," + re.escape(op) + r"\s*$", prev))
            if not table:
                ind_tail.add(cur)
        prev = line
    direct, any_callee = {}, set(ind_call)
    for f in calls:
        seen = set(calls[f]) | set(jumps[f])
        todo = list(seen)
        while todo:
            t = todo.pop()
            if t in ind_tail:
                any_callee.add(f)
            for u in jumps.get(t, ()):
                if u not in seen:
                    seen.add(u)
                    todo.append(u)
        direct[f] = seen
    return direct, any_callee


def pct(n, total):
    return 100.0 * n / total if total else 0.0


def main():
    label, exe, ours_json, perf_txt, stats_file, summary = sys.argv[1:7]
    exe_base = os.path.basename(exe)
    plt, aliases = Plt(), Aliases()
    stacks, paths = perf_samples(perf_txt, plt, aliases)
    rows, n_ours, our_arcs = ours(ours_json, exe, paths, plt, aliases)
    n_perf = len(stacks)

    incl, self_, perf_arcs = Counter(), Counter(), Counter()
    reached_start = 0
    for st in stacks:
        self_[st[0]] += 1
        for k in set(st):
            incl[k] += 1
        for a in {(st[i + 1], st[i]) for i in range(len(st) - 1)}:
            perf_arcs[a] += 1
        reached_start += st[-1][1] == "_start"

    stats = ""
    with open(stats_file, errors="replace") as f:
        for line in f:
            if "profil-rt: stacks" in line:
                stats = line.strip()
    fields = dict(re.findall(r"(\w+)=(\d+)", stats))
    walks = int(fields.get("walks", 0))
    # Cut short: every walk that neither reached the outermost frame nor lacked a stack range
    # (the same reading for the frame-pointer runtime's and the CFI runtime's statistics).
    cut = walks - int(fields.get("complete", 0)) - int(fields.get("no_range", 0))

    def name(k):
        return k[1] if k[0] == exe_base else f"{k[1]} ({k[0]})"

    def our_incl(k):
        return pct(rows.get(k, (0, 0))[1], n_ours)

    def our_self(k):
        return pct(rows.get(k, (0, 0))[0], n_ours)

    top = [k for k, _ in sorted(incl.items(), key=lambda kv: (-kv[1], kv[0])) if k[1] not in STARTUP][:10]
    errs = [abs(pct(incl[k], n_perf) - our_incl(k)) for k in top]
    max_err = max(errs) if errs else 0.0
    mean_err = sum(errs) / len(errs) if errs else 0.0
    main_key = (exe_base, "main")
    self_keys = set(self_) | {k for k, v in rows.items() if v[0]}
    self_err, self_worst = max(((abs(pct(self_[k], n_perf) - our_self(k)), k) for k in self_keys),
                               default=(0.0, None))

    print(f"#### {label}\n")
    print(f"Samples: ours {n_ours}, perf {n_perf} (perf's stacks reaching `_start`: "
          f"{pct(reached_start, n_perf):.1f}%). Runtime: `{stats or 'no stacks line'}`\n")
    print("| # | function | perf inclusive | ours inclusive | error (points) | perf self | ours self |")
    print("|---|---|---|---|---|---|---|")
    for i, k in enumerate(top, 1):
        p, o = pct(incl[k], n_perf), our_incl(k)
        print(f"| {i} | `{name(k)}` | {p:.1f}% | {o:.1f}% | {abs(p - o):.1f} | "
              f"{pct(self_[k], n_perf):.1f}% | {our_self(k):.1f}% |")
    print(f"\nTop-10 inclusive error: max {max_err:.1f}, mean {mean_err:.1f} points. "
          f"`main` inclusive: perf {pct(incl[main_key], n_perf):.1f}%, ours {our_incl(main_key):.1f}%. "
          f"Self share, max error over all functions: {self_err:.2f} points"
          f"{f' (`{name(self_worst)}`: perf {pct(self_[self_worst], n_perf):.1f}%, ours {our_self(self_worst):.1f}%)' if self_worst else ''}.\n")

    direct, indirect = disassembly(exe, aliases)
    named = lambda k: k[0] == exe_base and k[1] != "[plt]" and not k[1].startswith("<")
    exe_arcs = [(a, n) for a, n in our_arcs.items() if named(a[0]) and named(a[1])]
    # Suspicious: no call in the binary, or absent from perf's stacks although perf's share
    # would put at least 5 samples on it (P(0) < 1% if both saw the same program); arcs absent
    # from perf with fewer expected samples are only counted (sampling noise).
    flagged = []
    impossible = unseen = unseen_rare = 0
    for (caller, callee), n in exe_arcs:
        if callee[1] in direct.get(caller[1], ()):
            how = "direct (or by tail call)"
        elif caller[1] in indirect:
            how = "indirect only (accepted)"
        else:
            how = "**no call in the binary**"
            impossible += 1
        seen = perf_arcs.get((caller, callee), 0)
        expected = n / n_ours * n_perf if n_ours else 0.0
        if seen == 0 and expected >= 5:
            unseen += 1
        elif seen == 0:
            unseen_rare += 1
        if how.startswith("**") or (seen == 0 and expected >= 5):
            flagged.append((n, caller, callee, how, seen))
    print(f"Arcs between the executable's functions in our call graph: {len(exe_arcs)}; "
          f"the binary cannot make {impossible}; perf's stacks never contain {unseen} that perf "
          f"should have seen at least 5 times (and {unseen_rare} rarer ones).")
    if flagged:
        print("\n| suspicious arc (ours) | our samples | share | call in the binary | perf samples with the arc |")
        print("|---|---|---|---|---|")
        flagged.sort(key=lambda t: (-t[0], t[1], t[2]))
        for n, caller, callee, how, seen in flagged[:15]:
            print(f"| `{caller[1]}` → `{callee[1]}` | {n} | {pct(n, n_ours):.2f}% | {how} | {seen} |")
        if len(flagged) > 15:
            print(f"\n({len(flagged) - 15} more, each at most {flagged[15][0]} samples.)")
    print()

    with open(summary, "a") as f:
        f.write(f"| {label} | {walks} | {pct(cut, walks):.0f}% | {max_err:.1f} / {mean_err:.1f} | "
                f"{pct(incl[main_key], n_perf):.1f}% / {our_incl(main_key):.1f}% | {self_err:.2f} | "
                f"{impossible} / {unseen} of {len(exe_arcs)} | {pct(reached_start, n_perf):.1f}% |\n")


if __name__ == "__main__":
    main()
