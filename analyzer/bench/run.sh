#!/usr/bin/env bash
# Analyzer benchmark: profil-report against GNU gprof on a large executable.
#
#   [PROFIL_REPORT=path/to/profil-report] analyzer/bench/run.sh [--runs N] [--functions N] [--workdir DIR] [--files N] [--prepare]
#
# (--prepare: only step 1. --files N: every command reads the profile N times, as N files
# g1.out … gN.out (hard links), which gprof and profil-report sum.)
#
# 1. Generates a C program with N functions (default 60000) plus a call graph between them
#    (every 4th function calls the next two), compiles it with gcc -pg -g -O1 (DWARF for every
#    function), and runs it once for its gmon.out. Both are cached in the work directory
#    (default /tmp/profil-analyzer-bench-N); building takes a few minutes on 2 cores.
#    The program runs main's loop over all N functions about 60 million / N times (at least
#    10), so every size runs for about the same CPU time (10-20 s): with glibc's 100 Hz
#    histogram that is one to two thousand samples spread over as many functions, and every
#    function has call arcs.
# 2. Builds profil-report in release mode ($CARGO_TARGET_DIR is respected).
# 3. Runs each command pair side by side, interleaved, N times (default 5) with stdout to
#    /dev/null, measuring CPU time, wall time and peak RSS (measure.c: CLOCK_MONOTONIC, wait4
#    ru_maxrss), and prints a Markdown table of medians and the gprof/ours ratios.
#    The pairs: `gprof -b -p` vs `profil-report --gprof -b -p` and the default report;
#    `gprof -b` vs `profil-report --gprof -b`; `gprof -b -l -p` vs `profil-report --lines`
#    and `--gprof -b -p -l` when profil-report has --lines; `gprof` vs `profil-report
#    --gprof` (the default output) and `gprof -l` vs `profil-report --gprof -l` (the default
#    output by lines: flat profile and call graph).
# 4. Checks that the --gprof outputs are byte-identical to gprof's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=5
prepare=no
nfun=60000
files=1
work=
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --functions) nfun=$2; shift 2 ;;
    --workdir) work=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --prepare) prepare=yes; shift ;;
    *) echo "usage: $0 [--runs N] [--functions N] [--workdir DIR] [--files N] [--prepare]" >&2; exit 2 ;;
  esac
done
# A relative $PROFIL_REPORT names a file from here, not from the work directory.
if [[ -n ${PROFIL_REPORT:-} ]]; then
  [[ -x $PROFIL_REPORT ]] || { echo "$0: PROFIL_REPORT=$PROFIL_REPORT is not an executable" >&2; exit 2; }
  PROFIL_REPORT=$(realpath "$PROFIL_REPORT")
fi
work=${work:-/tmp/profil-analyzer-bench-$nfun}
rounds=$(((60000000 + nfun - 1) / nfun)); ((rounds < 10)) && rounds=10
mkdir -p "$work"
cd "$work"
gcc -O2 -o measure "$here/measure.c"

if [[ ! -x big || ! -f gmon.out || $(cat nfun 2>/dev/null) != "$nfun $rounds" ]]; then
  rm -f big gmon.out part*.c part*.o main.c
  parts=8
  per=$(((nfun + parts - 1) / parts))
  for ((p = 0; p < parts; p++)); do
    lo=$((p * per)); hi=$(((p + 1) * per)); ((hi > nfun)) && hi=$nfun
    awk -v lo="$lo" -v hi="$hi" -v n="$nfun" 'BEGIN {
      print "extern volatile unsigned long bench_sink;";
      for (i = lo; i < hi; i++) printf "unsigned long f%d(unsigned long);\n", (i + 1) % n;
      for (i = lo; i < hi; i++) printf "unsigned long f%d(unsigned long);\n", (i + 2) % n;
      for (i = lo; i < hi; i++) {
        printf "unsigned long f%d(unsigned long x) {\n", i;
        printf "  unsigned long s = x ^ %.0fu;\n", (i * 2654435761) % 4294967296;
        printf "  for (unsigned long k = 0; k < (x & 255) + %d; k++) s = s * 31 + k;\n", 16 * (i % 7);
        if (i % 4 == 0) printf "  if (x & 1) s += f%d(x >> 1) + f%d(x >> 2);\n", (i + 1) % n, (i + 2) % n;
        printf "  bench_sink += s;\n  return s;\n}\n";
      }
    }' >"part$p.c"
  done
  # main calls every function from its own call site: one indirect call site with 60,000
  # callees would make glibc's mcount walk a 60,000-long list on every call (minutes of CPU).
  awk -v n="$nfun" -v rounds="$rounds" 'BEGIN {
    print "#include <stdio.h>";
    print "volatile unsigned long bench_sink;";
    for (i = 0; i < n; i++) printf "unsigned long f%d(unsigned long);\n", i;
    for (i = 0; i < n; i++) {
      if (i % 100 == 0) printf "static unsigned long calls_%d(unsigned long r) {\n  unsigned long t = 0;\n", i / 100;
      printf "  t += f%d(%d + r);\n", i, i;
      if (i % 100 == 99 || i == n - 1) print "  return t;\n}";
    }
    print "int main(void) {";
    print "  unsigned long t = 0;";
    printf "  for (unsigned long r = 0; r < %d; r++) {\n", rounds;
    for (c = 0; c * 100 < n; c++) printf "    t += calls_%d(r);\n", c;
    print "  }";
    print "  printf(\"%lu\\n\", t);";
    print "  return 0;";
    print "}";
  }' >main.c
  echo "compiling $nfun functions (gcc -pg -g -O1), $rounds rounds..." >&2
  for f in part*.c main.c; do gcc -c -pg -g -O1 "$f" -o "${f%.c}.o" & done
  wait
  gcc -pg -g -o big main.o part*.o
  ./big >/dev/null
  echo "$nfun $rounds" >nfun
fi
[[ $prepare == yes ]] && exit 0
nsym=$(nm big | wc -l)
nfunc=$(nm big | grep -c ' [Tt] ')

# $PROFIL_REPORT: an already built profil-report (else a release build of this tree).
bin=${PROFIL_REPORT:-}
if [[ -z $bin ]]; then
  (cd "$root" && cargo build -q --release -p profil-report)
  bin=${CARGO_TARGET_DIR:-$root/target}/release/profil-report
fi
ours=("$bin")
has_lines=no
"$bin" --help | grep -q -- '--lines' && has_lines=yes

# The profile operands: gmon.out, or the same profile under $files names.
gm=gmon.out
if ((files > 1)); then
  gm=
  for ((k = 1; k <= files; k++)); do ln -f gmon.out "g$k.out"; gm+=" g$k.out"; done
  gm=${gm# }
fi
labels=("gprof -b -p" "profil-report --gprof -b -p" "profil-report (default)"
        "gprof -b" "profil-report --gprof -b")
cmds=("gprof -b -p big $gm" "$bin --gprof -b -p big $gm" "$bin big $gm"
      "gprof -b big $gm" "$bin --gprof -b big $gm")
if [[ $has_lines == yes ]]; then
  labels+=("gprof -b -p -l" "profil-report --lines" "profil-report --gprof -b -p -l")
  cmds+=("gprof -b -p -l big $gm" "$bin --lines big $gm" "$bin --gprof -b -p -l big $gm")
fi
# gprof's default (non-brief) output, what `alias gprof='profil-report --gprof'` replaces.
n_default=${#cmds[@]}
labels+=("gprof" "profil-report --gprof" "gprof -l" "profil-report --gprof -l")
cmds+=("gprof big $gm" "$bin --gprof big $gm" "gprof -l big $gm" "$bin --gprof -l big $gm")
: >samples.txt
for ((r = 1; r <= runs; r++)); do
  for i in "${!cmds[@]}"; do
    # shellcheck disable=SC2086
    # A command that fails is not a time: stop (measure exits 1 when it does not exit 0).
    m=$(./measure ${cmds[$i]}) || { echo "$0: failed: ${cmds[$i]}" >&2; exit 1; }
    read -r secs kib cpu <<<"$m"
    echo "$i $secs $kib $cpu" >>samples.txt
  done
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -a mt mm mc
for i in "${!cmds[@]}"; do
  mc[$i]=$(awk -v i="$i" '$1 == i { print $4 }' samples.txt | median)
  mt[$i]=$(awk -v i="$i" '$1 == i { print $2 }' samples.txt | median)
  mm[$i]=$(awk -v i="$i" '$1 == i { print $3 }' samples.txt | median)
done
echo "profiles: $files ($gm)"
echo "executable: $nfun generated functions, $nfunc function symbols, $nsym symbols in total," \
  "$(stat -c %s big) bytes (with DWARF); gmon.out $(stat -c %s gmon.out) bytes"
echo "medians of $runs interleaved runs, stdout to /dev/null; $(date -u +%Y-%m-%d)"
echo
echo "| command | CPU time (median) | wall time (median) | peak RSS (median) |"
echo "|---|---|---|---|"
for i in "${!cmds[@]}"; do
  printf '| `%s` | %.3f s | %.3f s | %.1f MiB |\n' "${labels[$i]}" "${mc[$i]}" "${mt[$i]}" "$(echo "${mm[$i]}" | awk '{ print $1 / 1024 }')"
done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
echo "Ratios of medians (CPU time; wall time in parentheses):"
echo "- flat: gprof -b -p / profil-report --gprof -b -p: $(ratio "${mc[0]}" "${mc[1]}")x faster ($(ratio "${mt[0]}" "${mt[1]}")x)," \
  "memory $(ratio "${mm[1]}" "${mm[0]}")x of gprof's"
echo "- flat: gprof -b -p / profil-report default report: $(ratio "${mc[0]}" "${mc[2]}")x faster ($(ratio "${mt[0]}" "${mt[2]}")x)," \
  "memory $(ratio "${mm[2]}" "${mm[0]}")x of gprof's"
echo "- call graph: gprof -b / profil-report --gprof -b: $(ratio "${mc[3]}" "${mc[4]}")x faster ($(ratio "${mt[3]}" "${mt[4]}")x)," \
  "memory $(ratio "${mm[4]}" "${mm[3]}")x of gprof's"
echo "- call graph: gprof -b / profil-report default report: $(ratio "${mc[3]}" "${mc[2]}")x faster ($(ratio "${mt[3]}" "${mt[2]}")x)," \
  "memory $(ratio "${mm[2]}" "${mm[3]}")x of gprof's"
if [[ $has_lines == yes ]]; then
  echo "- lines: gprof -b -p -l / profil-report --lines: $(ratio "${mc[5]}" "${mc[6]}")x faster ($(ratio "${mt[5]}" "${mt[6]}")x)," \
    "memory $(ratio "${mm[6]}" "${mm[5]}")x of gprof's"
  echo "- lines: gprof -b -p -l / profil-report --gprof -b -p -l: $(ratio "${mc[5]}" "${mc[7]}")x faster ($(ratio "${mt[5]}" "${mt[7]}")x)," \
    "memory $(ratio "${mm[7]}" "${mm[5]}")x of gprof's"
else
  echo "- lines: profil-report has no --lines yet; not measured"
fi
d=$n_default
echo "- default output: gprof / profil-report --gprof: $(ratio "${mc[$d]}" "${mc[$((d + 1))]}")x faster ($(ratio "${mt[$d]}" "${mt[$((d + 1))]}")x)," \
  "memory $(ratio "${mm[$((d + 1))]}" "${mm[$d]}")x of gprof's"
d=$((n_default + 2))
echo "- default output by lines: gprof -l / profil-report --gprof -l: $(ratio "${mc[$d]}" "${mc[$((d + 1))]}")x faster ($(ratio "${mt[$d]}" "${mt[$((d + 1))]}")x)," \
  "memory $(ratio "${mm[$((d + 1))]}" "${mm[$d]}")x of gprof's"
gprof big $gm >want-d.txt
"$bin" --gprof big $gm >got-d.txt
gprof -b -p big $gm >want-p.txt
"$bin" --gprof -b -p big $gm >got-p.txt
gprof -b big $gm >want-b.txt
"$bin" --gprof -b big $gm >got-b.txt
gprof -b -p -l big $gm >want-pl.txt
"$bin" --gprof -b -p -l big $gm >got-pl.txt
gprof -l big $gm >want-l.txt
"$bin" --gprof -l big $gm >got-l.txt
for m in p b d pl l; do
  case $m in p) flag="-b -p" ;; b) flag="-b" ;; d) flag="(default)" ;; pl) flag="-b -p -l" ;; l) flag="-l" ;; esac
  if cmp -s "want-$m.txt" "got-$m.txt"; then
    echo "- \`--gprof $flag\` output identical to \`gprof $flag\` ($(wc -l <"want-$m.txt") lines)"
  else
    echo "- WARNING: \`--gprof $flag\` output differs from gprof's (see $work/want-$m.txt, got-$m.txt)"
  fi
done
