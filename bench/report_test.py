#!/usr/bin/env python3
"""bench/run's report renders from every JSON in bench/results, and under the figures
table it names the bench-decode figure the schema variant's CPU target is built from
(issue 18): the same median, n, min and max as the decode section of that JSON, and
the same target as the table's cell; and the line under it, the bare consumer's CPU on
the same records plus the decoder's next to the daemon's. The plain 1 KB variant's ratio
target is set next to bench-decode on that variant's records (its decode row, its ceiling
row and its note agree with the JSON), checked on a report given that figure. Runs no
benchmark.

usage: report_test.py REPO_ROOT
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

root = sys.argv[1]
run = os.path.join(root, "bench", "run")
render = os.path.join(root, "bench", "render_report.py")
failures = []
checked_notes = 0


def check(cond, msg):
    if not cond:
        failures.append(msg)


def num(text):
    return float(text.replace(",", ""))


with tempfile.TemporaryDirectory() as tmp:
    paths = sorted(glob.glob(os.path.join(root, "bench", "results", "*.json")))
    check(paths, "no reports in bench/results")
    for path in paths:
        name = os.path.basename(path)
        out = os.path.join(tmp, "report.md")
        r = subprocess.run([sys.executable, render, run, path, out], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{name}: rendering failed: {r.stderr[-1000:]}")
            continue
        with open(out) as f:
            md = f.read()
        with open(path) as f:
            res = json.load(f)
        notes = re.findall(r"^- e2e schema envelope: the CPU-s per million records target ≤ ([\d.]+) is 1\.5 × "
                           r"bench-decode's schema figure of this report: ([\d,]+) records/s per core, median of "
                           r"(\d+) \(min–max ([\d,]+)–([\d,]+) \(±\d+%\)\) = ([\d.]+) CPU-s per million records\.$",
                           md, re.M)
        decode = res.get("decode", {}).get("figures", {}).get("schema")
        if not (decode and "schema" in res):
            check(not notes, f"{name}: a decode note without the decode section and the schema variant")
            continue
        checked_notes += 1
        check(len(notes) == 1, f"{name}: {len(notes)} notes on the schema CPU target, want 1")
        if not notes:
            continue
        target, median, n, lo, hi, per_m = notes[0]
        s = decode["records_per_s"]
        check(abs(num(median) - s["median"]) < 1, f"{name}: note median {median}, decode section {s['median']}")
        check(int(n) == s["n"], f"{name}: note n {n}, decode section {s['n']}")
        check(abs(num(lo) - s["min"]) < 1 and abs(num(hi) - s["max"]) < 1,
              f"{name}: note min–max {lo}–{hi}, decode section {s['min']}–{s['max']}")
        check(abs(float(per_m) - 1e6 / s["median"]) < 0.01, f"{name}: note CPU-s per million {per_m}")
        check(abs(float(target) - 1.5e6 / s["median"]) < 0.01, f"{name}: note target {target}")
        cell = re.search(r"^\| e2e schema envelope: CPU-s per million records \|.*\| ≤ ([\d.]+) \(1\.5 × bench-decode\)",
                         md, re.M)
        check(cell is not None and cell.group(1) == target,
              f"{name}: the table's target cell ({cell.group(1) if cell else 'none'}) is not the note's {target}")
        # The line under it: the bare consumer's and the decoder's CPU on the same records, and the daemon's.
        parts = re.search(r"^  Reading the same records with the bare librdkafka consumer took ([\d.]+) CPU-s per "
                          r"million \(median\): with decoding, ([\d.]+) \(([\d.]+) × bench-decode\) before anything "
                          r"is sent to Doris; the daemon used ([\d.]+)\.$", md, re.M)
        check(parts is not None, f"{name}: no line with the bare consumer's and the decoder's CPU under the note")
        if parts:
            v = res["schema"]
            fetch = v["figures"]["plain_consumer"][v["runs"]["schema"]["stream"]]["cpu_s_per_m"]["median"]
            decode_cpu = 1e6 / s["median"]
            check(abs(float(parts.group(1)) - fetch) < 0.01, f"{name}: bare consumer CPU {parts.group(1)}, JSON {fetch}")
            check(abs(float(parts.group(2)) - (fetch + decode_cpu)) < 0.01, f"{name}: sum {parts.group(2)}")
            check(abs(float(parts.group(3)) - (fetch + decode_cpu) / decode_cpu) < 0.01,
                  f"{name}: factor {parts.group(3)}")
            daemon = v["figures"]["schema"]["cpu_s_per_m"]["median"]
            check(abs(float(parts.group(4)) - daemon) < 0.01, f"{name}: daemon CPU {parts.group(4)}, JSON {daemon}")
check(checked_notes > 0, "no report in bench/results has both the decode section and the schema variant")


def render_json(res, tmp):
    src, out = os.path.join(tmp, "in.json"), os.path.join(tmp, "out.md")
    with open(src, "w") as f:
        json.dump(res, f)
    r = subprocess.run([sys.executable, render, run, src, out], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"rendering a report for the plain 1 KB ceiling failed: {r.stderr[-1000:]}")
        return ""
    with open(out) as f:
        return f.read()


# The plain 1 KB ceiling: the newest report with both sections, rendered without a bench-decode
# figure for the plain 1 KB records (as reports before it: no ceiling lines) and with a known one.
plain1k_checked = 0
for path in reversed(paths):
    with open(path) as f:
        res = json.load(f)
    if "plain1k" not in res or "figures" not in res.get("decode", {}):
        continue
    with tempfile.TemporaryDirectory() as tmp:
        res["decode"]["figures"].pop("plain1k-raw", None)
        md = render_json(res, tmp)
        check("decoding alone on one core" not in md, f"{os.path.basename(path)}: a ceiling row without its figure")
        ceiling = {"median": 400000.0, "min": 380000.0, "max": 420000.0, "n": 3, "spread_pct": 10.0}
        res["decode"]["figures"]["plain1k-raw"] = {"records_per_s": ceiling}
        md = render_json(res, tmp)
    v = res["plain1k"]
    consumer = v["figures"]["plain_consumer"][v["runs"]["plain1k"]["stream"]]["records_per_s"]["median"]
    row_re = (r"^\| e2e plain 1 KB values: decoding alone on one core \(bench-decode, same records\) \| 400,000 rec/s \| "
              r"380,000–420,000 \(±5%\) \| plain consumer ([\d,]+) \| ([\d.]+) \|")
    m = re.search(row_re, md, re.M)
    check(m is not None, "no plain 1 KB ceiling row")
    if m:
        check(abs(num(m.group(1)) - consumer) < 1, f"ceiling row consumer {m.group(1)}, JSON {consumer}")
        check(abs(float(m.group(2)) - 400000 / consumer) < 0.01, f"ceiling row ratio {m.group(2)}")
    check(re.search(r"^\| decode plain 1 KB \(--note-chars 300\), typed by the e2e tables' columns \(daemon\) "
                    r"records/s per core \| 400,000 rec/s \|", md, re.M) is not None, "no plain 1 KB decode row")
    note = re.search(r"^- e2e plain 1 KB values: the ratio target ≥ 0\.6 is ([\d,]+) records/s \(the bare consumer's "
                     r"median ([\d,]+)\), a budget of ([\d.]+) µs per record on the pipeline thread; decoding alone "
                     r"takes 2\.50 µs \(bench-decode, 400,000 records/s per core, min–max 380,000–420,000 \(±5%\)\)"
                     r"(, the pipeline thread used ([\d.]+) µs)?\.$", md, re.M)
    check(note is not None, "no note on the plain 1 KB ratio target")
    if note:
        check(abs(num(note.group(1)) - 0.6 * consumer) < 1, f"note target {note.group(1)}, want 0.6 × {consumer}")
        check(abs(float(note.group(3)) - 1e6 / (0.6 * consumer)) < 0.01, f"note budget {note.group(3)}")
        thread = v["figures"]["plain1k"].get("pipeline_thread_cpu_s_per_m", {}).get("median")
        check((note.group(5) is not None) == (thread is not None) and
              (thread is None or abs(float(note.group(5)) - thread) < 0.01), f"note thread {note.group(5)}, JSON {thread}")
    plain1k_checked += 1
    break
check(plain1k_checked == 1, "no report in bench/results has the decode section and the plain 1 KB variant")

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print(f"bench reports render ({checked_notes} with the schema CPU target's decode figure checked, "
      "and the plain 1 KB ceiling on one)")
