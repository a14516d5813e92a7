#!/bin/bash
# Inclusive-share accuracy of the sampled call stacks (issue 17), from the workspace root:
#   runtime/bench/stacks-accuracy.sh [MIN_WALKS]        (default 2000)
#
# fixtures/runtime/stacks.c and stacks.rs measure their own truth with
# clock_gettime(CLOCK_PROCESS_CPUTIME_ID) around each part: cheapcostly prints costly's share of
# cheap + costly, recursive prints rec's share of rec + flat. For each build (C and Rust, with
# and without frame pointers) the program runs with the runtime linked in (PROFIL_RANGES=exe),
# doubling its scale until at least MIN_WALKS samples were walked, and the share is read three
# ways: from OUR report's total column (profil-report --csv), from GNU gprof's call graph of our
# gmon.out (sampled arcs), and, for C, from a glibc -pg build of the same source read by gprof
# (its equal-cost estimate). One markdown row per build and program.
set -e
min=${1:-2000}
root=$(pwd)
cargo build -q -p profil-report
pr="$root/target/debug/profil-report"
rt=$("$pr" runtime-path)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
gcc -O2 -fno-omit-frame-pointer -o c-fp "$root/fixtures/runtime/stacks.c" "$rt" -lpthread
gcc -O2 -o c-default "$root/fixtures/runtime/stacks.c" "$rt" -lpthread
gcc -O2 -pg -o c-pg "$root/fixtures/runtime/stacks.c" -lpthread
rustc -O --edition 2021 -C link-arg="$rt" -C force-frame-pointers=yes -o rust-fp \
    "$root/fixtures/runtime/stacks.rs" 2>/dev/null
rustc -O --edition 2021 -C link-arg="$rt" -o rust-default "$root/fixtures/runtime/stacks.rs" \
    2>/dev/null

# gprof's "% time" of NAME's primary call-graph line (a cycle member too).
gprof_pct() {
    awk -v n="$2" '/^\[[0-9]+\]/ && ($(NF-1) == n || ($(NF-3) == n && $(NF-2) ~ /^[0-9]+>$/)) {print $2; exit}' "$1"
}
share() { awk -v a="$1" -v b="$2" 'BEGIN {if (a + b > 0) printf "%.1f%%", 100 * a / (a + b); else print "n/a"}'; }

echo "| build | program | truth | our total column | gprof on our file | glibc -pg, gprof | walks | truncated |"
echo "|---|---|---|---|---|---|---|---|"
for build in c-fp c-default rust-fp rust-default; do
    for prog in cheapcostly recursive; do
        case $prog in
            cheapcostly) a=costly; b=cheap; key=costly_share ;;
            recursive) a=rec; b=flat; key=rec_share ;;
        esac
        case $build:$prog in
            rust-*:cheapcostly) mode=() ;;
            *) mode=("$prog") ;;
        esac
        scale=50
        for _ in $(seq 12); do
            rm -f gmon.out*
            out=$(PROFIL_RANGES=exe PROFIL_STACK_STATS=1 ./"$build" "${mode[@]}" "$scale" 2>err)
            walks=$(sed -n 's/.* walks=\([0-9]*\).*/\1/p' err)
            [ "${walks:-0}" -ge "$min" ] && break
            scale=$((scale * 2))
        done
        truncated=$(sed -n 's/.* truncated=\([0-9]*\).*/\1/p' err)
        truth=$(echo "$out" | tr ' ' '\n' | sed -n "s/^$key=//p")
        truth=$(awk -v t="$truth" 'BEGIN {printf "%.1f%%", 100 * t}')
        "$pr" --csv gmon.out "./$build" > ours.csv 2>/dev/null
        ours=$(share "$(awk -F, -v n="$a" '$2 == n {print $17}' ours.csv)" \
            "$(awk -F, -v n="$b" '$2 == n {print $17}' ours.csv)")
        gprof -b -q "./$build" gmon.out > g.txt 2>/dev/null || true
        theirs=$(share "$(gprof_pct g.txt "$a")" "$(gprof_pct g.txt "$b")")
        pg=n/a
        if [ "$build" = c-fp ] || [ "$build" = c-default ]; then
            rm -f gmon.out*
            ./c-pg "$prog" "$scale" > /dev/null
            gprof -b -q ./c-pg gmon.out > pg.txt 2>/dev/null || true
            pg=$(share "$(gprof_pct pg.txt "$a")" "$(gprof_pct pg.txt "$b")")
        fi
        echo "| $build | $prog $scale | $truth | $ours | $theirs | $pg | $walks | $truncated |"
    done
done
