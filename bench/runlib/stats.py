"""Figures over repetitions, and what the daemon's /metrics says."""
import re
import statistics


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values),
            "spread_pct": (100.0 * (max(values) - min(values)) / statistics.median(values))
            if statistics.median(values) else 0.0, "values": values}


def fig(runs, keys):
    return {k: summary([r.get(k) for r in runs]) for k in keys}


def ratio_summary(runs, bases, key="records_per_s"):
    """`key` (records/s) of run i over base i (repetitions run back to back)."""
    return summary([r[key] / b[key] for r, b in zip(runs, bases) if r.get(key) and b.get(key)])


def med(s):
    return None if not s else s["median"]


def hist_quantile(buckets, q):
    """Prometheus-style quantile from cumulative buckets [(le, count)], linear within the bucket."""
    total = buckets[-1][1]
    if total == 0:
        return None
    rank = q * total
    prev_le, prev_c = 0.0, 0
    for le, c in buckets:
        if c >= rank:
            if le == float("inf"):
                return prev_le  # beyond the last finite bucket: its lower bound
            if c == prev_c:
                return le
            return prev_le + (le - prev_le) * (rank - prev_c) / (c - prev_c)
        prev_le, prev_c = le, c
    return buckets[-1][0]


def parse_metrics(text):
    m = {}
    buckets = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, _, value = line.rpartition(" ")
        if name.startswith("cdc2doris_epoch_commit_duration_seconds_bucket"):
            le = re.search(r'le="([^"]+)"', name).group(1)
            buckets.append((float("inf") if le == "+Inf" else float(le), float(value)))
        else:
            try:
                m[name] = float(value)
            except ValueError:
                pass
    m["_commit_buckets"] = sorted(buckets)
    return m


def parse_duration_s(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", str(text))
    if not m:
        return None
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]
