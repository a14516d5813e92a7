#!/usr/bin/env bash
# gprof's other modes: `gprof OPTIONS` against `profil-report --gprof OPTIONS` on run.sh's
# generated executable, one pair per line of the table below.
#
#   [PROFIL_REPORT=path] analyzer/bench/modes.sh [--runs N] [--functions N] [--files N] [--only REGEX]
#
# run.sh measures the five modes users type most (-b -p, -b, the default output, -b -p -l,
# -l); this script measures the rest, each pair interleaved N times (default 3) with stdout
# to /dev/null, and prints a Markdown table: CPU time medians, gprof / ours, our peak RSS as
# a share of gprof's, and whether the outputs were byte-identical (stdout and the files the
# mode writes: -s's gmon.sum, -y's *-ann files). Prepare the work directory with
# `run.sh --functions N --prepare` first (this script does not build the program).
# --only REGEX: only the modes whose options match REGEX (grep -E).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=3
nfun=60000
files=1
only=.
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --functions) nfun=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--functions N] [--files N] [--only REGEX]" >&2; exit 2 ;;
  esac
done
if [[ -n ${PROFIL_REPORT:-} ]]; then
  [[ -x $PROFIL_REPORT ]] || { echo "$0: PROFIL_REPORT=$PROFIL_REPORT is not an executable" >&2; exit 2; }
  bin=$(realpath "$PROFIL_REPORT")
else
  (cd "$root" && cargo build -q --release -p profil-report)
  bin=${CARGO_TARGET_DIR:-$root/target}/release/profil-report
fi
work=/tmp/profil-analyzer-bench-$nfun
[[ -x $work/big && -f $work/gmon.out ]] || {
  echo "$0: no $work/big: run analyzer/bench/run.sh --functions $nfun --prepare first" >&2
  exit 2
}
cd "$work"
gcc -O2 -o measure "$here/measure.c"
gm=gmon.out
if ((files > 1)); then
  gm=
  for ((k = 1; k <= files; k++)); do ln -f gmon.out "g$k.out"; gm+=" g$k.out"; done
  gm=${gm# }
fi
# A function near the middle of the program, its callee, and a line of its file.
mid=$((nfun / 2 / 4 * 4))
modes=(
  "-b -p -ppart3.c" "-b -q -qpart3.c:40" "-b -p -pf$mid" "-b -q -qf$mid" "-b -P -Pf$mid"
  "-b -k f$mid/f$((mid + 1))" "-b -e f$mid" "-b -F f$mid" "-b -n f$mid" "-b -z -a"
  "-b -C" "-b -C -l" "-A" "-A -x" "-y" "-c -b" "-i" "-r" "-T" "-s" "-b -l -L"
  "-b -p -l -ppart3.c:40" "-b -q -l" "-b -w 200" "--demangle=none -b"
)
sel=()
for m in "${modes[@]}"; do
  grep -Eq -- "$only" <<<"$m" && sel+=("$m")
done
# Files a mode writes (compared after the runs): -s's gmon.sum, -y's *-ann.
written() { ls gmon.sum ./*-ann 2>/dev/null || true; }
clean() { rm -f gmon.sum ./*-ann; }
: >modes-samples.txt
for ((r = 1; r <= runs; r++)); do
  for i in "${!sel[@]}"; do
    for who in gprof ours; do
      if [[ $who == gprof ]]; then cmd=(gprof); else cmd=("$bin" --gprof); fi
      clean
      # shellcheck disable=SC2086
      m=$(./measure "${cmd[@]}" ${sel[$i]} big $gm) || {
        echo "$0: failed: ${cmd[*]} ${sel[$i]} big $gm" >&2
        exit 1
      }
      read -r secs kib cpu <<<"$m"
      echo "$i $who $secs $kib $cpu" >>modes-samples.txt
    done
  done
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "executable: $nfun generated functions; profiles: $files; medians of $runs interleaved runs; $(date -u +%Y-%m-%d)"
echo
echo "| gprof's options | gprof CPU | ours CPU | gprof / ours | our peak RSS / gprof's | identical |"
echo "|---|---|---|---|---|---|"
for i in "${!sel[@]}"; do
  g=$(awk -v i="$i" '$1 == i && $2 == "gprof" { print $5 }' modes-samples.txt | median)
  o=$(awk -v i="$i" '$1 == i && $2 == "ours" { print $5 }' modes-samples.txt | median)
  gk=$(awk -v i="$i" '$1 == i && $2 == "gprof" { print $4 }' modes-samples.txt | median)
  ok=$(awk -v i="$i" '$1 == i && $2 == "ours" { print $4 }' modes-samples.txt | median)
  # Byte identity: stdout and every file the mode wrote.
  rm -rf modes-want modes-got && mkdir modes-want modes-got
  clean
  # shellcheck disable=SC2086
  gprof ${sel[$i]} big $gm >modes-want/stdout 2>/dev/null || true
  for f in $(written); do mv "$f" modes-want/; done
  # shellcheck disable=SC2086
  "$bin" --gprof ${sel[$i]} big $gm >modes-got/stdout 2>/dev/null || true
  for f in $(written); do mv "$f" modes-got/; done
  same=yes
  diff -r modes-want modes-got >/dev/null || same="NO (see $work/modes-want, modes-got)"
  printf '| `%s` | %.3f s | %.3f s | %s× | %s%% | %s |\n' "${sel[$i]}" "$g" "$o" \
    "$(awk -v a="$g" -v b="$o" 'BEGIN { printf "%.1f", a / b }')" \
    "$(awk -v a="$ok" -v b="$gk" 'BEGIN { printf "%.0f", 100 * a / b }')" "$same"

done
clean
