#!/usr/bin/env bash
# Seed corpus of the `analyze` fuzz target (layout: check.rs), written to corpus/analyze/:
# the base profile under several flag bytes, every gmon file of fixtures/malformed and
# fixtures/gcc-pg with the base ELF, and whole raw ELFs (fixtures/malformed/prog,
# the base ELF) with their profiles.
# With --base, first rebuild base/prog and base/prog.gmon (gcc -pg -g; see base/README.md).
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
if [[ ${1:-} == --base ]]; then
  gcc -pg -g -O1 -fno-inline -o base/prog "$root/fixtures/flat/corpus/cycles.c"
  (cd base && rm -f gmon.out && ./prog >/dev/null && mv gmon.out prog.gmon)
fi
out=corpus/analyze
mkdir -p "$out"
# seed NAME FLAGS ELF-PART-FILE GMON-FILE
seed() {
  local n
  n=$(stat -c %s "$3")
  {
    printf "\\x$(printf %02x "$2")\\x$(printf %02x $((n & 255)))\\x$(printf %02x $((n >> 8)))"
    cat "$3" "$4"
  } >"$out/$1"
}
: >/tmp/profil-fuzz-empty
for f in 0 2 4 8 16 32 64 128 192 206; do
  seed "base-$f" "$f" /tmp/profil-fuzz-empty base/prog.gmon
done
for g in "$root"/fixtures/malformed/*.gmon "$root"/fixtures/gcc-pg/*.gmon; do
  seed "gmon-$(basename "$g")" 0 /tmp/profil-fuzz-empty "$g"
done
seed raw-base 1 base/prog base/prog.gmon
seed raw-loop2 1 "$root/fixtures/malformed/prog" "$root/fixtures/malformed/good.gmon"
rm -f /tmp/profil-fuzz-empty
echo "$(ls "$out" | wc -l) seeds in $out"
