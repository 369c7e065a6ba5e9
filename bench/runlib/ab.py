"""bench/ab's comparison: the figures of two programs measured in alternation by bench/run,
one figure per side and repetition, folded into medians and a verdict per figure.

A report compared with an older report from another day compares two machines as much as
two programs: on this VM the same binary ran bench-decode at 581 MB/s one day and at
300 MB/s two days later. Alternating the two sides in one script puts the drift on both."""
import statistics

# Figures about the environment the daemon runs in, not about the daemon: no verdict.
CONTEXT = ("Kafka broker CPU", "emulator CPU", "machine busy", "pipeline thread busy", "epochs per minute",
           "epochs ended early", "loads per table per epoch")
# Counts that are better when smaller although their unit is empty.
LOWER_COUNTS = ("per million records", "minor page faults")
# A difference below this share of the base median is never called a change.
MIN_CHANGE = 0.05


def direction(figure, unit):
    """+1: higher is better, -1: lower is better, 0: no verdict for this figure."""
    if any(c in figure for c in CONTEXT):
        return 0
    if unit in ("MB/s", "rec/s"):
        return 1
    if unit in ("s", "MiB", "KiB"):
        return -1
    if any(c in figure for c in LOWER_COUNTS):
        return -1
    return 0


def collect(tables):
    """tables: one bench/run figures table (JSON 'table') per repetition ->
    {figure: {"unit": u, "values": [per repetition], "ratios": [...]}} in first-seen order."""
    out = {}
    for table in tables:
        for row in table:
            if row.get("median") is None:
                continue
            f = out.setdefault(row["figure"], {"unit": row["unit"], "values": [], "ratios": []})
            f["values"].append(row["median"])
            if row.get("ratio") is not None:
                f["ratios"].append(row["ratio"])
    return out


def spread(values):
    """Half the range over the median: the ± a repetition moved."""
    m = statistics.median(values)
    return (max(values) - min(values)) / 2 / abs(m) if m else 0.0


def verdict(figure, unit, base_values, head_values):
    """(change of head vs base as a share of base's median, verdict text).

    'slower'/'faster' only when the medians differ by more than MIN_CHANGE and by more than the
    larger of the two sides' spreads; else 'same within noise'."""
    b, h = statistics.median(base_values), statistics.median(head_values)
    change = (h - b) / abs(b) if b else 0.0
    d = direction(figure, unit)
    if d == 0:
        return change, ""
    noise = max(MIN_CHANGE, spread(base_values), spread(head_values))
    if abs(change) <= noise:
        return change, "same within noise"
    return change, "faster" if change * d > 0 else "slower"


def compare(base_tables, head_tables):
    """Rows for every figure both sides have, in the base's order, then figures only one side has."""
    base, head = collect(base_tables), collect(head_tables)
    rows = []
    for figure, b in base.items():
        h = head.get(figure)
        if h is None:
            rows.append({"figure": figure, "unit": b["unit"], "base": b, "head": None, "change": None,
                         "verdict": "only in base"})
            continue
        change, v = verdict(figure, b["unit"], b["values"], h["values"])
        rows.append({"figure": figure, "unit": b["unit"], "base": b, "head": h, "change": change, "verdict": v})
    for figure, h in head.items():
        if figure not in base:
            rows.append({"figure": figure, "unit": h["unit"], "base": None, "head": h, "change": None,
                         "verdict": "only in head"})
    return rows


def fmt(x):
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def cell(side):
    if side is None:
        return "—"
    v = side["values"]
    text = f"{fmt(statistics.median(v))} ({fmt(min(v))}–{fmt(max(v))})" if len(v) > 1 else fmt(v[0])
    if side["ratios"]:
        text += f", ratio {statistics.median(side['ratios']):.2f}"
    return text


def markdown(rows, base_name, head_name):
    lines = [f"| figure | unit | {base_name} median (min–max) | {head_name} median (min–max) | change | verdict |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        change = "" if r["change"] is None else f"{r['change'] * 100:+.1f}%"
        lines.append(f"| {r['figure']} | {r['unit']} | {cell(r['base'])} | {cell(r['head'])} | {change} | {r['verdict']} |")
    return lines


def counts(rows):
    out = {}
    for r in rows:
        if r["verdict"]:
            out[r["verdict"]] = out.get(r["verdict"], 0) + 1
    return out
