#!/usr/bin/env bash
# Accuracy: the calibrated workload (fixtures/accuracy/calibrated.c: four functions with a
# designed 10/20/30/40 split, ~2 s of CPU) profiled by our runtime (default settings, through
# `profil-report run`, 1000 Hz; also at --hz 100, the rate glibc uses) and by glibc's -pg (100 Hz, read with `gprof -b -p`), N times each,
# interleaved. For every run: the mean absolute error, in percentage points, of the four
# percentages the report prints against (a) the split the program measured itself with
# CLOCK_THREAD_CPUTIME_ID around every call (the ground truth) and (b) the designed split.
#
#   [PROFIL_REPORT=path/to/profil-report] analyzer/bench/accuracy.sh [--runs N] [--seconds S] [--workdir DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=5
secs=2
work=/tmp/profil-accuracy
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --workdir) work=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--seconds S] [--workdir DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
cd "$work"
src=$root/fixtures/accuracy/calibrated.c
gcc -O2 -g -o cal "$src"
gcc -O2 -g -pg -o cal-pg "$src"
# $PROFIL_REPORT: an already built profil-report (else a release build of this tree).
bin=${PROFIL_REPORT:-}
if [[ -z $bin ]]; then
  (cd "$root" && cargo build -q --release -p profil-report)
  bin=${CARGO_TARGET_DIR:-$root/target}/release/profil-report
fi

# mae TRUTH-FILE REPORT-FILE: "<mae vs truth> <mae vs design> <p10> <p20> <p30> <p40>", where
# REPORT-FILE has lines "name percent".
mae() {
  awk 'FNR == NR { if ($1 ~ /^work_/) truth[$1] = $2; next }
       { got[$1] = $2 }
       END {
         split("10 20 30 40", d, " ")
         for (k = 1; k <= 4; k++) {
           n = "work_" d[k]; g = (n in got) ? got[n] : 0
           et += (g > truth[n] ? g - truth[n] : truth[n] - g)
           ed += (g > d[k] ? g - d[k] : d[k] - g)
           line = line sprintf(" %.2f", g)
         }
         printf "%.3f %.3f%s\n", et / 4, ed / 4, line
       }' "$1" "$2"
}
: >results.txt
for ((r = 1; r <= runs; r++)); do
  rm -f ours.gmon gmon.out
  "$bin" run --out ours.gmon --csv --report ours.csv ./cal "$secs" 2>truth-ours.txt
  # CSV columns: rank,name,raw_name,location,percent,...,samples (8th)
  awk -F, 'NR > 1 && $2 ~ /^work_/ { print $2, $5 }' ours.csv >ours.txt
  samples=$(awk -F, 'NR > 1 { s += $8 } END { print s }' ours.csv)
  cpu=$(awk '$1 == "total" { print $2 }' truth-ours.txt)
  echo "ours $r $(mae truth-ours.txt ours.txt) $samples $cpu" >>results.txt
  # The same at 100 Hz, glibc's rate (PROFIL_HZ through `run --hz`).
  rm -f ours.gmon
  "$bin" run --hz 100 --out ours.gmon --csv --report ours.csv ./cal "$secs" 2>truth-ours.txt
  awk -F, 'NR > 1 && $2 ~ /^work_/ { print $2, $5 }' ours.csv >ours.txt
  samples=$(awk -F, 'NR > 1 { s += $8 } END { print s }' ours.csv)
  cpu=$(awk '$1 == "total" { print $2 }' truth-ours.txt)
  echo "ours-100Hz $r $(mae truth-ours.txt ours.txt) $samples $cpu" >>results.txt
  ./cal-pg "$secs" 2>truth-pg.txt
  gprof -b -p cal-pg gmon.out | awk '$NF ~ /^work_/ { print $NF, $1 }' >pg.txt
  samples=$(gprof -b -p cal-pg gmon.out | awk 'NR > 5 && $3 ~ /^[0-9.]+$/ { s += $3 } END { printf "%d", s * 100 + 0.5 }')
  cpu=$(awk '$1 == "total" { print $2 }' truth-pg.txt)
  echo "glibc $r $(mae truth-pg.txt pg.txt) $samples $cpu" >>results.txt
done
echo "calibrated workload, $secs s of CPU, $runs runs each, interleaved; $(date -u +%Y-%m-%d)"
echo
echo "| profiler | run | MAE vs measured split (pp) | MAE vs 10/20/30/40 (pp) | work_10 | work_20 | work_30 | work_40 | samples | samples per CPU-second |"
echo "|---|---|---|---|---|---|---|---|---|---|"
awk '{ printf "| %s | %s | %.2f | %.2f | %s | %s | %s | %s | %s | %.0f |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $9 / $10 }' results.txt
echo
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for p in ours ours-100Hz glibc; do
  name="glibc -pg (100 Hz)"
  [[ $p == ours ]] && name="profil-rs runtime (default rate)"
  [[ $p == ours-100Hz ]] && name="profil-rs runtime (--hz 100)"
  t_mean=$(awk -v p="$p" '$1 == p { s += $3; n++ } END { printf "%.2f", s / n }' results.txt)
  t_med=$(awk -v p="$p" '$1 == p { print $3 }' results.txt | median)
  t_max=$(awk -v p="$p" '$1 == p { print $3 }' results.txt | sort -g | tail -1)
  d_mean=$(awk -v p="$p" '$1 == p { s += $4; n++ } END { printf "%.2f", s / n }' results.txt)
  d_med=$(awk -v p="$p" '$1 == p { print $4 }' results.txt | median)
  echo "- $name: MAE vs measured split: mean $t_mean pp, median $t_med pp, worst $t_max pp;" \
    "vs the designed split: mean $d_mean pp, median $d_med pp"
done
