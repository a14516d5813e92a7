#!/bin/bash
# Issue 22: accuracy of the runtime's sampled call stacks against
# `perf record -e task-clock:u -F 1000 --call-graph dwarf`, on real C programs nobody here wrote.
# From the workspace root:
#   [PROFIL_REPORT=path/to/profil-report] runtime/bench/cfi-accuracy.sh [--workdir DIR] [PROGRAM...]
# PROGRAM: lua sqlite zstd libm rust (default: all). --workdir keeps the builds (and reuses them
# on the next run: delete DIR after changing the runtime object). Needs gcc, rustc, cargo (for the
# crates' sources, fetched from crates.io), perf (perf_event_paranoid <= 2), objdump, readelf,
# python3. Scales: CFI_SCALE_LUA (default 30), CFI_SCALE_SQLITE (12), CFI_SCALE_ZSTD (8),
# CFI_SCALE_LIBM (150), CFI_SCALE_RUST (150); about 2-4 CPU-seconds each on the 2-vCPU VM.
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
[[ -f $root/runtime/bench/cfi_compare.py ]] || { echo "$0: run from the workspace root" >&2; exit 2; }
bench=$root/runtime/bench
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

# A relative $PROFIL_REPORT names a file from here, not from the work directory.
if [[ -n ${PROFIL_REPORT:-} ]]; then
    [[ -x $PROFIL_REPORT ]] || { echo "$0: PROFIL_REPORT=$PROFIL_REPORT is not an executable" >&2; exit 2; }
    pr=$(realpath "$PROFIL_REPORT")
else
    cargo build -q --release -p profil-report
    pr=${CARGO_TARGET_DIR:-$root/target}/release/profil-report
fi
rt=$("$pr" runtime-path)
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

# The C sources, as the crates bundle them: a throwaway project, `cargo fetch`, and the
# packages' directories from `cargo metadata`.
if [[ ! -f srcdirs ]]; then
    mkdir -p fetch/src
    echo 'fn main() {}' >fetch/src/main.rs
    cat >fetch/Cargo.toml <<'EOF'
[package]
name = "cfi-sources"
version = "0.0.0"
edition = "2021"
[dependencies]
lua-src = "547"
libsqlite3-sys = { version = "0.30", features = ["bundled"] }
zstd-sys = "2"
EOF
    (cd fetch && cargo fetch -q && cargo metadata -q --format-version 1) | python3 -c '
import json, os, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] in ("lua-src", "libsqlite3-sys", "zstd-sys"):
        print(p["name"], p["version"], os.path.dirname(p["manifest_path"]))' >srcdirs
fi
src() { awk -v n="$1" '$1 == n {print $3}' srcdirs; }
version() { awk -v n="$1" '$1 == n {print $2}' srcdirs; }
lua=$(ls -d "$(src lua-src)"/lua-5.4* | tail -1)
sqlite=$(src libsqlite3-sys)/sqlite3
zstd=$(src zstd-sys)/zstd/lib

flags() { case $1 in default) echo "-O2 -g" ;; fp) echo "-O2 -g -fno-omit-frame-pointer" ;; esac; }
build() { # PROGRAM VARIANT -> ./PROGRAM-VARIANT
    local p=$1 v=$2 out=$1-$2
    [[ -x $out ]] && return
    local f
    read -ra f <<<"$(flags "$v")"
    case $p in
        lua)
            gcc "${f[@]}" -DLUA_USE_POSIX -I"$lua" -o "$out" \
                $(ls "$lua"/*.c | grep -Ev '/(lua|luac|onelua)\.c$') "$bench/cfi/lua-driver.c" \
                "$rt" -lm -ldl -lpthread ;;
        sqlite)
            gcc "${f[@]}" -I"$sqlite" -o "$out" "$sqlite/sqlite3.c" "$bench/cfi/sqlite-driver.c" \
                "$rt" -lm -ldl -lpthread ;;
        zstd)
            gcc "${f[@]}" -I"$zstd" -I"$zstd/common" -o "$out" "$zstd"/common/*.c \
                "$zstd"/compress/*.c "$zstd"/decompress/*.c "$zstd"/decompress/*.S \
                "$bench/cfi/zstd-driver.c" "$rt" -lpthread ;;
        libm)
            gcc "${f[@]}" -o "$out" "$bench/cfi/libm.c" "$rt" -lm -lpthread ;;
        rust)
            local fp=()
            [[ $v == fp ]] && fp=(-C force-frame-pointers=yes)
            rustc -O -g --edition 2021 "${fp[@]}" -C link-arg="$rt" -o "$out" \
                "$bench/cfi/rust-work.rs" ;;
    esac
}
scale() {
    case $1 in
        lua) echo "${CFI_SCALE_LUA:-30}" ;;
        sqlite) echo "${CFI_SCALE_SQLITE:-12}" ;;
        zstd) echo "${CFI_SCALE_ZSTD:-8}" ;;
        libm) echo "${CFI_SCALE_LIBM:-150}" ;;
        rust) echo "${CFI_SCALE_RUST:-150}" ;;
    esac
}
args() { # PROGRAM -> the build's arguments
    case $1 in
        lua) echo "$bench/cfi/workload.lua $(scale lua)" ;;
        *) scale "$1" ;;
    esac
}

summary=$work/summary.md
: >"$summary"
echo "### Per build"
echo
echo "Runtime object: \`$rt\`; lua $(version lua-src) ($(basename "$lua")), libsqlite3-sys" \
    "$(version libsqlite3-sys), zstd-sys $(version zstd-sys); $(gcc --version | head -1);" \
    "$(rustc --version); $(perf --version)."
echo
for p in "${progs[@]}"; do
    for v in default fp; do
        build "$p" "$v"
        exe=$work/$p-$v
        read -ra a <<<"$(args "$p")"
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
