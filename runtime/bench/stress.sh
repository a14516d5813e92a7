#!/bin/sh
# The long versions of the runtime stress cases (issue 9), whose quick versions run in CI:
# 16 threads for ~10 s, 100 forked children exiting together, an exec chain of 10 programs,
# SIGTERM at 200 pseudo-random moments, a program with its own SIGPROF handler, a program that
# closes stdout/stderr before exit, and a read-only working directory. They are the tests of
# analyzer/tests/integration/runtime_e2e/ named stress_* (plus the own-SIGPROF one), run one at a time
# with PROFIL_STRESS=long, which selects the full sizes. Every one checks: exit status as
# without the profiler, nothing killed, every profile file whole (it parses) or absent, no
# temporary left behind.
#
# Usage (from anywhere): runtime/bench/stress.sh    -> output also in runtime/bench/stress-last-run.txt
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out="$root/runtime/bench/stress-last-run.txt"
{
    echo "# runtime/bench/stress.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
    start=$(date +%s)
    PROFIL_STRESS=long cargo test -q -p profil-report --test integration -- \
        --test-threads=1 --nocapture stress_ a_program_using_the_profiling_timer 2>&1
    echo "# wall time: $(( $(date +%s) - start )) s"
} | tee "$out"
