#!/usr/bin/env python3
"""The depth table of cfi-cost.sh (issue 22).

usage: cfi_cost_table.py RAW HIGH_HZ "SETTING..."

RAW has one line per run: hz depth repetition setting variant cpu_seconds walks cut_short.
Figures are medians over the repetitions; a setting is paired with PCs only of the same build
(`pcs` or `pcs-fp`) in the same repetition, run next to it in time, so the machine's load
drifts out of the difference.
"""

import sys
from statistics import median


def main():
    raw, high, names = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
    runs, variant = {}, {}
    with open(raw) as f:
        for line in f:
            hz, d, r, name, var, cpu, walks, cut = line.split()
            runs[int(hz), int(d), int(r), name] = (float(cpu), int(walks), int(cut))
            variant[name] = var
    reps = sorted({k[2] for k in runs})
    print(f"| depth | setting | build | CPU at 1000 Hz (median, s) | over PCs only at 1000 Hz "
          f"(median of pairs) | CPU at {high} Hz (median, s) | walks at {high} Hz | cut short "
          f"| µs per sample (median of pairs) |")
    print("|---|---|---|---|---|---|---|---|---|")
    per = {}
    for d in (5, 30, 128):
        for s in names:
            base = "pcs-fp" if variant[s] == "fp" else "pcs"
            low = [runs[1000, d, r, s] for r in reps]
            hi = [runs[high, d, r, s] for r in reps]
            walks = sum(h[1] for h in hi)
            over = us = "—"
            if s != base:
                over = "%+.2f%%" % (100 * median(runs[1000, d, r, s][0] / runs[1000, d, r, base][0] - 1
                                                 for r in reps))
                pairs = [1e6 * (runs[high, d, r, s][0] - runs[high, d, r, base][0]) / runs[high, d, r, s][1]
                         for r in reps if runs[high, d, r, s][1]]
                if pairs:
                    per[s, d] = median(pairs)
                    us = "%.2f" % per[s, d]
            cut = "%.0f%%" % (100 * sum(h[2] for h in hi) / walks) if walks else "—"
            print(f"| {d} | {s} | {variant[s]} | {median(x[0] for x in low):.3f} | {over} | "
                  f"{median(x[0] for x in hi):.3f} | {walks / len(hi):.0f} | {cut} | {us} |")
    print()
    for s in names:
        if (s, 5) in per and (s, 128) in per:
            print(f"Per frame, {s}: (µs per sample at depth 128 − at depth 5) / 123 = "
                  f"{(per[s, 128] - per[s, 5]) / 123:.4f} µs.")


if __name__ == "__main__":
    main()
