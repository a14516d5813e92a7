#!/bin/bash
# Issue 22: accuracy of the runtime's sampled call stacks against
# `perf record -e task-clock:u -F 1000 --call-graph dwarf`, on real C programs nobody here wrote.
# From the workspace root:
#   [PROFIL_REPORT=path/to/profil-report] runtime/bench/cfi-accuracy.sh [--workdir DIR] [PROGRAM...]
# PROGRAM: lua sqlite zstd libm rust (default: all). --workdir keeps the builds (and reuses them
# on the next run: delete DIR after changing the runtime object). Needs gcc, rustc, cargo (for the
# crates' sources, fetched from crates.io), perf (perf_event_paranoid <= 2), objdump, readelf,
# python3. Scales: CFI_SCALE_LUA (default 60), CFI_SCALE_SQLITE (12), CFI_SCALE_ZSTD (8),
# CFI_SCALE_LIBM (150), CFI_SCALE_RUST (150); about 2-4 CPU-seconds each on the 2-vCPU VM.
# The builds and the workloads' arguments are in runtime/bench/cfi/common.sh.
#
# Programs (runtime/bench/cfi/): Lua 5.4 from lua-src (an embedding driver running workload.lua:
# tables and table.sort with a Lua comparison function), SQLite from libsqlite3-sys's bundled
# amalgamation (in-memory inserts, two indexes, range queries, GROUP BY, ORDER BY), zstd from
# zstd-sys (level-19 compression of generated text and the round trip), libm.c (sin, exp, log1p,
# cos under three levels of the program's functions) — each built `gcc -O2 -g` ("default") and
# `gcc -O2 -g -fno-omit-frame-pointer` ("fp") — and rust-work.rs, `rustc -O -g` ("default") and
# with `-C force-frame-pointers=yes` ("fp"). The runtime object (`profil-report runtime-path`) is
# linked into every build.
#
# Each build runs once with the runtime (PROFIL_HZ=1000 PROFIL_STACK_STATS=1) and once under
# perf with the runtime off (PROFIL_OFF=1: same binary, same addresses), and cfi_compare.py
# prints per build: the top 10 by perf's inclusive share with ours beside, the errors, `main`,
# the self shares, the runtime's walk statistics, and the caller→callee arcs of our call graph
# between the executable's functions that the binary cannot make (objdump: no direct call or
# jump, no indirect one) or that perf's stacks never contain. A summary table ends the output.
set -euo pipefail
root=$(pwd)
[[ -f $root/runtime/bench/cfi/common.sh ]] || { echo "$0: run from the workspace root" >&2; exit 2; }
work=
progs=()
while (($#)); do
    case $1 in
        --workdir) work=$2; shift 2 ;;
        lua | sqlite | zstd | libm | rust) progs+=("$1"); shift ;;
        *) echo "$0: unknown argument $1" >&2; exit 2 ;;
    esac
done
((${#progs[@]})) || progs=(lua sqlite zstd libm rust)

# shellcheck source=runtime/bench/cfi/common.sh
source "$root/runtime/bench/cfi/common.sh"
cfi_profil_report
if [[ -z $work ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work=$(realpath "$work")
cd "$work"

# perf must be able to profile our own user space (perf_event_paranoid 2 allows task-clock:u).
if ! perf record -q -e task-clock:u -F 1000 --call-graph dwarf -o probe.data true >/dev/null 2>probe.err; then
    echo "$0: perf record failed (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)):" >&2
    cat probe.err >&2
    exit 1
fi

cfi_sources

summary=$work/summary.md
: >"$summary"
echo "### Per build"
echo
echo "Runtime object: \`$rt\`; lua $(cfi_version lua-src) ($(basename "$lua")), libsqlite3-sys" \
    "$(cfi_version libsqlite3-sys), zstd-sys $(cfi_version zstd-sys); $(gcc --version | head -1);" \
    "$(rustc --version); $(perf --version). $(date -u '+%Y-%m-%d %H:%M UTC'), load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg)."
echo
for p in "${progs[@]}"; do
    for v in default fp; do
        cfi_build "$p" "$v"
        exe=$work/$p-$v
        read -ra a <<<"$(cfi_args "$p")"
        d=$work/run-$p-$v
        rm -rf "$d"
        mkdir -p "$d"
        (cd "$d" && PROFIL_HZ=1000 PROFIL_STACK_STATS=1 "$exe" "${a[@]}" >out 2>err)
        (cd "$d" && "$pr" --json gmon.out "$exe" >ours.json 2>report.err)
        (cd "$d" && PROFIL_OFF=1 perf record -q -e task-clock:u -F 1000 --call-graph dwarf \
            -o perf.data "$exe" "${a[@]}" >perf.out 2>perf.err)
        (cd "$d" && perf script -i perf.data -F ip,sym,dso --no-inline >perf.txt 2>/dev/null)
        cmp -s "$d/out" "$d/perf.out" || echo "$0: $p-$v printed differently under perf" >&2
        python3 "$bench/cfi_compare.py" "$p-$v" "$exe" "$d/ours.json" "$d/perf.txt" "$d/err" "$summary"
        rm -f "$d/perf.data"
    done
done
echo "### Summary"
echo
echo "| build | walks | cut short (truncated / walks) | top-10 inclusive error, max / mean (points) | \`main\` inclusive, perf / ours | self share, max error (points) | arcs: impossible / not in perf, of all exe→exe | perf stacks reaching \`_start\` |"
echo "|---|---|---|---|---|---|---|---|"
cat "$summary"
