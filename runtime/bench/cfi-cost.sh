#!/bin/bash
# Issue 22: what the stack walk costs per sample and per frame, against PCs only
# (PROFIL_STACKS=0), and the "at most 1% of CPU over PROFIL_STACKS=0 at 1000 Hz" check on the
# real C programs of cfi-accuracy.sh. From the workspace root:
#   [PROFIL_REPORT=path] runtime/bench/cfi-cost.sh [--workdir DIR] [--reps N] [--high-hz HZ]
#                                                  [--program-reps N] [--no-programs]
# Defaults: 5 repetitions, 20000 Hz for the per-sample figures, 5 repetitions per program.
#
# Part 1: runtime/bench/cfi/depth.c recurses D deep (D = 5, 30, 128) and burns CPU in a leaf,
# built `gcc -O2 -g` ("default": no frame pointers) and with -fno-omit-frame-pointer ("fp"),
# the runtime object linked in. Settings, run interleaved in a shuffled order per repetition,
# pinned to CPU 0, CPU time = user + system of the process (bash `time`):
#   pcs        default build, PROFIL_STACKS=0        stacks     default build, PROFIL_STACKS=1
#   pcs-fp     fp build, PROFIL_STACKS=0             stacks-fp  fp build, PROFIL_STACKS=1
# plus CFI_COST_EXTRA="name:variant:VAR=V,VAR=V ..." (e.g. a walker switch the runtime offers;
# compared with pcs or pcs-fp by variant). Each setting is paired with PCs only of the same
# build in the same repetition; medians over the repetitions (cfi_cost_table.py). At 1000 Hz:
# % CPU over PCs only. At --high-hz (where the walk's cost rises above this machine's noise):
# µs per sample = (CPU with stacks - CPU with PCs only) / walks (PROFIL_STACK_STATS=1), and
# per frame = (µs per sample at depth 128 - at depth 5) / 123.
# CFI_SCALE_DEPTH (default 50: 500 million iterations, about 0.7 CPU-seconds) sets the work.
#
# Part 2: lua, sqlite and zstd (default builds, cfi-accuracy.sh's workloads), PROFIL_STACKS=1
# and =0 at 1000 Hz in a random order per repetition: the ratio of CPU times per repetition;
# median, min and max.
set -euo pipefail
root=$(pwd)
[[ -f $root/runtime/bench/cfi/common.sh ]] || { echo "$0: run from the workspace root" >&2; exit 2; }
work=
reps=5
high=20000
preps=5
programs=yes
while (($#)); do
    case $1 in
        --workdir) work=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --high-hz) high=$2; shift 2 ;;
        --program-reps) preps=$2; shift 2 ;;
        --no-programs) programs=no; shift ;;
        *) echo "$0: unknown argument $1" >&2; exit 2 ;;
    esac
done
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
cfi_build depth default
cfi_build depth fp
scale=${CFI_SCALE_DEPTH:-50}

settings=("pcs:default:PROFIL_STACKS=0" "stacks:default:PROFIL_STACKS=1"
          "pcs-fp:fp:PROFIL_STACKS=0" "stacks-fp:fp:PROFIL_STACKS=1")
read -ra extra <<<"${CFI_COST_EXTRA:-}"
settings+=("${extra[@]}")

# EXE ENV... -- ARGS...: prints "cpu_seconds walks cut_short" of one run in ./run (cut short:
# the walks that neither reached the outermost frame nor lacked a stack range).
one() {
    local exe=$1 env=() t
    shift
    while [[ $1 != -- ]]; do env+=("$1"); shift; done
    shift
    mkdir -p run
    TIMEFORMAT='%3U %3S'
    t=$( { time (cd run && env PROFIL_STACK_STATS=1 "${env[@]}" taskset -c 0 "$exe" "$@" \
        >/dev/null 2>err); } 2>&1)
    local walks complete norange
    walks=$(sed -n 's/.*stacks walks=\([0-9]*\).*/\1/p' run/err)
    complete=$(sed -n 's/.* complete=\([0-9]*\).*/\1/p' run/err)
    norange=$(sed -n 's/.* no_range=\([0-9]*\).*/\1/p' run/err)
    awk -v t="$t" -v w="${walks:-0}" -v c="$((${walks:-0} - ${complete:-0} - ${norange:-0}))" \
        'BEGIN {split(t, a, " "); print a[1] + a[2], w, c}'
}

raw=$work/depth.txt
: >"$raw"
for hz in 1000 "$high"; do
    for d in 5 30 128; do
        for ((r = 1; r <= reps; r++)); do
            for s in $(printf '%s\n' "${settings[@]}" | shuf); do
                IFS=: read -r name variant envs <<<"$s"
                IFS=, read -ra e <<<"$envs"
                echo "$hz $d $r $name $variant $(one "$work/depth-$variant" PROFIL_HZ="$hz" "${e[@]}" -- "$d" "$scale")" >>"$raw"
            done
        done
    done
done

echo "### Cost of the walk by stack depth (\`cfi/depth.c D $scale\`, $reps interleaved runs per cell)"
echo
echo "Runtime object: \`$rt\`; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)."
echo
python3 "$bench/cfi_cost_table.py" "$raw" "$high" "$(printf '%s\n' "${settings[@]}" | cut -d: -f1 | tr '\n' ' ')"
echo
echo "Raw runs (hz depth repetition setting variant cpu walks cut-short): \`$raw\` (kept with --workdir)."

if [[ $programs == yes ]]; then
    cfi_sources
    echo
    echo "### PROFIL_STACKS=1 over =0 at 1000 Hz on the C programs (default builds, $preps interleaved pairs)"
    echo
    echo "| program | CPU, stacks=0 (mean, s) | CPU, stacks=1 (mean, s) | ratio per pair: median | min | max | cut short |"
    echo "|---|---|---|---|---|---|---|"
    for p in lua sqlite zstd; do
        cfi_build "$p" default
        read -ra a <<<"$(cfi_args "$p")"
        for ((r = 1; r <= preps; r++)); do
            for s in $(shuf -e 0 1); do
                echo "$r $s $(one "$work/$p-default" PROFIL_HZ=1000 PROFIL_STACKS="$s" -- "${a[@]}")"
            done
        done | sort -k1,1n -k2,2n | awk -v p="$p" '
            $2 == 0 { c0[$1] = $3; s0 += $3; n0++ }
            $2 == 1 { c1[$1] = $3; s1 += $3; n1++; w += $4; cut += $5 }
            END {
                for (r in c1) ratios[++m] = c1[r] / c0[r]
                for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
                    if (ratios[j] < ratios[i]) { t = ratios[i]; ratios[i] = ratios[j]; ratios[j] = t }
                med = m % 2 ? ratios[(m + 1) / 2] : (ratios[m / 2] + ratios[m / 2 + 1]) / 2
                printf "| %s | %.3f | %.3f | %.4f | %.4f | %.4f | %s |\n", p, s0 / n0, s1 / n1, med, ratios[1], ratios[m],
                    w ? sprintf("%.0f%%", 100 * cut / w) : "—"
            }'
    done
fi
