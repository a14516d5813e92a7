#!/bin/bash
# CPU cost of the stack walk (issue 17): fixtures/runtime/stacks.c with the runtime object linked
# in, PROFIL_STACKS=1 and =0 interleaved, mean process CPU time (user + system) per setting.
# usage: runtime/bench/stacks-cost.sh HZ MODE SCALE REPS   (from the workspace root)
set -e
hz=$1; mode=$2; scale=$3; reps=$4
dir=$(mktemp -d)
gcc -O2 -fno-omit-frame-pointer -o "$dir/stacks" fixtures/runtime/stacks.c \
    "$(cargo run -q -p profil-report -- runtime-path)" -lpthread
cd "$dir"
TIMEFORMAT=%U+%S
for _ in $(seq "$reps"); do
    for s in 1 0; do
        t=$( { time PROFIL_HZ=$hz PROFIL_STACKS=$s ./stacks "$mode" "$scale" >/dev/null 2>&1; } 2>&1 )
        echo "$s $(echo "$t" | bc)"
    done
done | awk '{n[$1]++; sum[$1]+=$2; v[$1, n[$1]]=$2}
    END {for (s in n) {printf "PROFIL_STACKS=%s mean_cpu=%.3f s:", s, sum[s]/n[s];
         for (i = 1; i <= n[s]; i++) printf " %s", v[s, i]; print ""}}'
PROFIL_HZ=$hz PROFIL_STACK_STATS=1 ./stacks "$mode" "$scale" 2>&1 >/dev/null | grep stacks
rm -rf "$dir"
