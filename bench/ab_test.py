#!/usr/bin/env python3
"""bench/ab's comparison (bench/runlib/ab.py) on made-up figures tables: which direction is
better per figure, when a difference is called slower or faster and when noise, and figures
only one side has. Runs no benchmark.

usage: ab_test.py REPO_ROOT
"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "bench"))
from runlib import ab  # noqa: E402

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def row(figure, unit, median, ratio=None):
    return {"figure": figure, "unit": unit, "median": median, "min": median, "max": median, "n": 1,
            "baseline": "", "ratio": ratio, "target": ""}


def tables(*rounds):
    return [[row(*r) for r in rnd] for rnd in rounds]


check(ab.direction("e2e 8 tables: cdc2doris records/s", "rec/s") == 1, "rec/s: higher is better")
check(ab.direction("decode plain MB/s per core", "MB/s") == 1, "MB/s: higher is better")
check(ab.direction("e2e 8 tables: CPU seconds (user+sys)", "s") == -1, "seconds: lower is better")
check(ab.direction("e2e 8 tables: peak RSS (VmHWM)", "MiB") == -1, "MiB: lower is better")
check(ab.direction("e2e x: pipeline thread waits per million records (voluntary switches)", "") == -1,
      "a count per million records: lower is better")
check(ab.direction("e2e x: Kafka broker CPU-s during the run", "s") == 0, "the broker's CPU is no verdict")
check(ab.direction("e2e x: machine busy (all cores)", "") == 0, "machine busy is no verdict")
check(ab.direction("e2e x: epochs per minute (assignment to all committed)", "/min") == 0, "epochs/min: no verdict")

REC = "e2e 8 tables: cdc2doris records/s"
CPU = "e2e 8 tables: CPU seconds (user+sys)"
# Head 20% fewer records/s with tight spreads: slower. Head 20% less CPU: faster.
rows = {r["figure"]: r for r in ab.compare(
    tables([(REC, "rec/s", 100_000, 0.5), (CPU, "s", 2.0)], [(REC, "rec/s", 102_000, 0.52), (CPU, "s", 2.1)],
           [(REC, "rec/s", 98_000, 0.49), (CPU, "s", 1.9)]),
    tables([(REC, "rec/s", 80_000, 0.4), (CPU, "s", 1.6)], [(REC, "rec/s", 81_000, 0.41), (CPU, "s", 1.6)],
           [(REC, "rec/s", 79_000, 0.39), (CPU, "s", 1.62)]))}
check(rows[REC]["verdict"] == "slower", f"20% fewer records/s is slower, got {rows[REC]['verdict']!r}")
check(abs(rows[REC]["change"] + 0.2) < 1e-9, f"change -20%, got {rows[REC]['change']}")
check(rows[CPU]["verdict"] == "faster", f"20% less CPU is faster, got {rows[CPU]['verdict']!r}")

# 10% apart, but one side's repetitions spread ±25%: noise, not a change.
rows = {r["figure"]: r for r in ab.compare(
    tables([(REC, "rec/s", 100_000)], [(REC, "rec/s", 150_000)], [(REC, "rec/s", 110_000)]),
    tables([(REC, "rec/s", 99_000)], [(REC, "rec/s", 100_000)], [(REC, "rec/s", 101_000)]))}
check(rows[REC]["verdict"] == "same within noise", f"inside the spread is noise, got {rows[REC]['verdict']!r}")
# 4% apart with no spread at all: under the 5% floor.
rows = {r["figure"]: r for r in ab.compare(tables([(CPU, "s", 2.0)]), tables([(CPU, "s", 2.08)]))}
check(rows[CPU]["verdict"] == "same within noise", f"4% is under the floor, got {rows[CPU]['verdict']!r}")

# A figure one side lacks (a section that failed, or is new) is listed, not dropped.
rows = {r["figure"]: r for r in ab.compare(tables([(REC, "rec/s", 1.0), (CPU, "s", 2.0)]),
                                           tables([(REC, "rec/s", 1.0), ("new figure", "s", 1.0)]))}
check(rows[CPU]["verdict"] == "only in base", "a figure only the base has is listed")
check(rows["new figure"]["verdict"] == "only in head", "a figure only the head has is listed")

md = ab.markdown(ab.compare(tables([(REC, "rec/s", 100_000, 0.5)], [(REC, "rec/s", 90_000, 0.46)]),
                            tables([(REC, "rec/s", 80_000, 0.4)], [(REC, "rec/s", 82_000, 0.41)])), "base", "head")
check(len(md) == 3 and "95,000 (90,000–100,000), ratio 0.48" in md[2] and "81,000 (80,000–82,000)" in md[2],
      f"markdown row shows both medians with their ranges and ratios: {md[2] if len(md) > 2 else md}")
check("-14.7%" in md[2] and "slower" in md[2], f"markdown row shows the change and the verdict: {md[2]}")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("bench/ab comparison: all checks passed")
