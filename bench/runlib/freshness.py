"""Freshness (issue 36 item 2): how long after its source commit a row becomes visible in Doris.

A paced producer writes insert-only Debezium records whose source.ts_ms is the wall clock when each
is sent, at shares of the daemon's measured maximum rate; the daemon (its configured epoch
interval) loads them into DUPLICATE KEY tables of a storing emulator, with source.ts_ms in a column
of each row. The emulator's txn list says when each txn became visible and keeps a DUPLICATE KEY
table's rows in that order, so every row gets its own visible time: freshness = visible - source
time, per row. The daemon's /status freshness gauge (now - newest committed source time, per table)
is sampled during the run and checked against the same figure computed from the emulator's rows.

The topics keep the broker's clock (message.timestamp.type=LogAppendTime), and every row carries its
Kafka partition and offset (routing.computed_columns): after the run the bench reads each record's
Kafka timestamp back (`bench-kafka timestamps`), so freshness is also reported from the moment the
broker appended the record, which leaves out the time the record took to reach Kafka."""
import bisect
import json
import os
import re
import subprocess
import time

from . import proc
from .fixtures import Daemon
from .pipeline import daemon_run
from .proc import http, json_line, kafka_tool, log, run, spawn, stop, wait_committed_argv
from .stats import parse_duration_s
from .workload import RunSpec, make_emulator, produce, produce_argv, raw_ddl

INSERT_ONLY = "1,0,0,0"  # no deletes: every record is one row of the DUPLICATE KEY table
SOURCE_TS_COLUMN = "src_ts"
PARTITION_COLUMN, OFFSET_COLUMN = "kafka_partition", "kafka_offset"
DECODING_YAML = (f"decoding:\n  extra_columns:\n    source_ts: {SOURCE_TS_COLUMN}\n"
                 f"routing:\n  computed_columns:\n    {PARTITION_COLUMN}: partition\n    {OFFSET_COLUMN}: offset\n")
# The topics' timestamps are the broker's append time, read back per record after the run.
TOPIC_CONFIG = ["--topic-config", "message.timestamp.type=LogAppendTime"]
TABLES = 8


def fresh_ddl(db, table):
    return raw_ddl(db, table, extra_columns=f", `{SOURCE_TS_COLUMN}` BIGINT NULL, `{PARTITION_COLUMN}` INT NULL, "
                   f"`{OFFSET_COLUMN}` BIGINT NULL", model="DUPLICATE")


def spec():
    return RunSpec(ddl=fresh_ddl, yaml=DECODING_YAML, count_only=False)


def quantiles(values):
    if not values:
        return None
    v = sorted(values)
    def q(p):
        return v[min(len(v) - 1, int(p * len(v)))]
    return {"n": len(v), "p50": q(0.5), "p99": q(0.99), "max": v[-1], "min": v[0]}


def visible_rows(emu):
    """({table: [(visible_unix_ms, source_ts_ms, kafka partition, kafka offset)]} of every row,
    [(visible_unix_ms, newest, oldest source_ts_ms)] per txn), from the emulator's txns and rows."""
    txns = json.loads(http("GET", f"http://{emu.fe}/_emulator/txns?db=shop", timeout=120)[1])["txns"]
    by_table, per_txn = {}, []
    for t in txns:
        if t["state"] == "VISIBLE":
            by_table.setdefault(t["table"], []).append(t)
    out = {}
    for table, ts in by_table.items():
        ts.sort(key=lambda t: (t["visible_unix_ms"], t["txn_id"]))
        code, text = http("GET", f"http://{emu.fe}/_emulator/tables/shop/{table}/rows", timeout=600)
        if code != 200:
            raise RuntimeError(f"rows of shop.{table}: {code} {text[:300]}")
        lines = text.splitlines()
        if sum(t["rows"] for t in ts) != len(lines):
            raise RuntimeError(f"shop.{table}: {len(lines)} rows, its visible txns loaded {sum(t['rows'] for t in ts)}")
        rows, i = [], 0
        for t in ts:
            parsed = [json.loads(line) for line in lines[i:i + t["rows"]]]
            src = [j[SOURCE_TS_COLUMN] for j in parsed]
            rows.extend((t["visible_unix_ms"], j[SOURCE_TS_COLUMN], j[PARTITION_COLUMN], j[OFFSET_COLUMN]) for j in parsed)
            if src:
                per_txn.append((t["visible_unix_ms"], max(src), min(src), t["label"]))
            i += t["rows"]
        out[table] = rows
    return out, per_txn


def epoch_timeline(per_txn, t0_ms):
    """Per epoch (from the txn labels, `..._{epoch}[-part]`), in seconds after the producer's start: its
    oldest and newest source time, and when its first and last txn became visible."""
    by = {}
    for v, hi, lo, label in per_txn:
        m = re.search(r"_(\d+)(?:-\d+)?$", label)
        if m:
            e = by.setdefault(int(m.group(1)), [float("inf"), 0, float("inf"), 0])
            e[0], e[1], e[2], e[3] = min(e[0], lo), max(e[1], hi), min(e[2], v), max(e[3], v)
    return [{"epoch": k, "source_from_s": round((e[0] - t0_ms) / 1000, 3), "source_to_s": round((e[1] - t0_ms) / 1000, 3),
             "visible_from_s": round((e[2] - t0_ms) / 1000, 3), "visible_to_s": round((e[3] - t0_ms) / 1000, 3)}
            for k, e in sorted(by.items())]


def gauge_check(samples, rows):
    """The /status gauge against the emulator: at each sample time, now - the newest source time among the
    rows visible by then (the gauge's definition applied to what Doris shows). Returns the differences
    gauge - truth in seconds (positive: the gauge reports older data than is visible) and both series."""
    newest = {}  # table -> (visible times, running max of source time)
    for table, rs in rows.items():
        vis, run_max, m = [], [], 0
        for v, s, *_ in sorted(rs):
            m = max(m, s)
            vis.append(v)
            run_max.append(m)
        newest[f"shop.{table}"] = (vis, run_max)
    diffs, gauge, truth = [], [], []
    for s in samples:
        for table, (now_ms, newest_ms) in s["tables"].items():
            if table not in newest or not newest_ms:
                continue
            vis, run_max = newest[table]
            i = bisect.bisect_right(vis, now_ms)
            if i == 0:
                continue
            g, t = (now_ms - newest_ms) / 1000, (now_ms - run_max[i - 1]) / 1000
            diffs.append(g - t)
            gauge.append(g)
            truth.append(t)
    return diffs, gauge, truth


def append_times(env, name, regex):
    """{(topic, partition): (first offset, [Kafka timestamp ms in offset order])} of the run's topics; refuses
    records whose timestamp is not the broker's append time."""
    path = os.path.join(proc.TMP, f"timestamps-{name}.tsv")
    out, _ = run(kafka_tool(env.broker, "timestamps", "--topic-regex", regex, "--out", path), timeout=600)
    summary = json_line(out)
    if summary["log_append_time"] != summary["records"]:
        raise RuntimeError(f"{name}: {summary} — the topics do not keep LogAppendTime")
    ts = {}
    with open(path) as f:
        for line in f:
            topic, part, first, values = line.rstrip("\n").split("\t")
            ts[(topic, int(part))] = (int(first), [int(x) for x in values.split(",")])
    os.remove(path)
    return ts


def append_latencies(rows, ts, server):
    """Per row, (visible - append time, append time - source time) in seconds."""
    vis_app, app_src = [], []
    for table, rs in rows.items():
        topic = f"{server}.shop.{table}"
        for v, s, p, o in rs:
            first, stamps = ts[(topic, p)]
            a = stamps[o - first]
            vis_app.append((v - a) / 1000)
            app_src.append((a - s) / 1000)
    return vis_app, app_src


def status_sample(d):
    """{table: (now_ms the gauge was computed at, newest_source_unix_ms)} from /status."""
    code, text = http("GET", f"http://{d.admin}/status", timeout=5)
    if code != 200:
        return None
    tables = {}
    for t, j in json.loads(text).get("tables", {}).items():
        if j.get("freshness_seconds") is not None and j.get("newest_source_unix_ms"):
            tables[t] = (j["newest_source_unix_ms"] + round(j["freshness_seconds"] * 1000), j["newest_source_unix_ms"])
    return {"tables": tables}


def live_run(env, interval, share, max_rate, seconds, rep=1):
    rate = max(1, int(share * max_rate))
    name = f"fr{interval.replace('.', '_')}{round(share * 100)}r{rep}"
    info = produce(env, name, 0, TABLES, 0, ["--mix", INSERT_ONLY, *TOPIC_CONFIG], warm=False)  # the topics only
    emu = make_emulator(name, TABLES, fresh_ddl, count_only=False)
    group = f"{name}-cdc2doris"
    d = Daemon(proc.TMP, f"daemon-{name}", env.broker, emu, group, info["topic_regex"], f"{proc.TMP}/state-{name}",
               name, interval, extra_yaml=DECODING_YAML)
    producer = waiter = None
    try:
        deadline = time.monotonic() + 90
        while d.t_assigned is None:
            if d.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"daemon not assigned its partitions; see {d.logpath}")
            time.sleep(0.05)
        time.sleep(0.5)
        records = int(rate * seconds)
        producer = spawn(produce_argv(env.broker, name, records, TABLES, 0, extra_args=[
            "--mix", INSERT_ONLY, "--rate", str(rate), *TOPIC_CONFIG]), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        samples = []
        t_prod0 = time.time() * 1000
        while producer.poll() is None:
            s = status_sample(d)
            if s:
                samples.append(s)
            time.sleep(0.25)
        t_prod1 = time.time() * 1000
        pout, perr = producer.communicate()
        if producer.returncode != 0:
            raise RuntimeError(f"paced producer exited {producer.returncode}: {perr[-2000:]}")
        produced = json_line(pout)
        waiter = spawn(wait_committed_argv(env.broker, group, info["regex"], 600), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
        wout, _ = waiter.communicate(timeout=660)
        if waiter.returncode != 0:
            raise RuntimeError(f"wait-committed: {wout}")
        metrics = d.metrics() or {}
    finally:
        for p in (producer, waiter):
            stop(p)
        d.close()
    ts = append_times(env, name, info["regex"])
    try:
        rows, per_txn = visible_rows(emu)
    finally:
        emu.close()
    lat = [(v - s) / 1000 for rs in rows.values() for v, s, _, _ in rs]
    vis_app, app_src = append_latencies(rows, ts, info["server"])
    if len(lat) != records:
        raise RuntimeError(f"{name}: {len(lat)} rows visible of {records} produced")
    # The gauge while the source is writing (after a 2 s start); once it stops, the gauge grows with the quiet.
    live = [s for s in samples if any(now >= t_prod0 + 2000 and now <= t_prod1 for now, _ in s["tables"].values())]
    diffs, gauge, truth = gauge_check(live, rows)
    bucket = metrics.get("_commit_buckets", [])
    res = {"epoch_interval": interval, "share_of_max": share, "rep": rep, "rate_target": rate, "records": records,
           "rate_achieved": records / produced["produce_s"], "produce_s": produced["produce_s"],
           "freshness_s": quantiles(lat), "status_samples": len(live),
           # The same rows from the broker's append time (LogAppendTime), and the source-to-Kafka part.
           "freshness_from_append_s": quantiles(vis_app), "append_minus_source_s": quantiles(app_src),
           # Where the time goes, per txn (a table's part of an epoch): the age of its newest row when it became
           # visible (reading, the epoch's close and the commit), and the source-time span of its rows.
           "txn_newest_row_age_s": quantiles([(v - hi) / 1000 for v, hi, _, _ in per_txn]),
           "txn_source_span_s": quantiles([(hi - lo) / 1000 for _, hi, lo, _ in per_txn]),
           "epochs": epoch_timeline(per_txn, t_prod0),
           # produce() to the broker's acknowledgement in the paced producer: the source-to-Kafka part.
           "producer_ack_ms": produced.get("ack_ms"),
           "status_gauge_s": quantiles(gauge), "truth_at_samples_s": quantiles(truth),
           "gauge_minus_truth_s": quantiles(diffs), "abs_gauge_minus_truth_s": quantiles([abs(x) for x in diffs]),
           # Samples taken between a table's rows becoming visible and the daemon marking their epoch committed.
           "gauge_behind_share": (sum(1 for x in diffs if x > 0.001) / len(diffs)) if diffs else None,
           "epochs_committed": bucket[-1][1] if bucket else None}
    f = res["freshness_s"]
    log(f"freshness {interval} at {share:.0%} ({rate} rec/s, achieved {res['rate_achieved']:.0f}): p50 {f['p50']:.3f} s, "
        f"p99 {f['p99']:.3f} s, max {f['max']:.3f} s; from append time p50 {res['freshness_from_append_s']['p50']:.3f} s, "
        f"p99 {res['freshness_from_append_s']['p99']:.3f} s; /status gauge - truth p50 "
        f"{(res['gauge_minus_truth_s'] or {}).get('p50')} s over {len(diffs)} table samples")
    return res


def section_freshness(env):
    cfg = env.cfg
    # The daemon's maximum rate on this stream and setup (storing emulator, DUPLICATE KEY tables): a backlog
    # read from the start, the 'consuming' rate (assignment to the last record read).
    backlog = produce(env, "frmax", cfg.records_freshness, TABLES, 0, ["--mix", INSERT_ONLY])
    res, emu, _, _ = daemon_run(env, backlog, "frmax", TABLES, 1, spec=spec())
    emu.close()
    max_rate = res["records_per_s_consuming"] or res["records_per_s"]
    out = {"max_rate_run": res, "max_rate": max_rate, "seconds": cfg.freshness_seconds,
           "reps": cfg.freshness_reps, "runs": []}
    # Repetitions outermost: a burst of load from elsewhere on the machine hits one repetition of each row.
    for rep in range(1, cfg.freshness_reps + 1):
        for interval in cfg.freshness_intervals.split(","):
            for share in (0.5, 0.9):
                out["runs"].append(live_run(env, interval, share, max_rate, cfg.freshness_seconds, rep))
    for r in out["runs"]:
        bound = parse_duration_s(r["epoch_interval"]) + 0.5
        r["target_p99_s"] = bound if r["share_of_max"] == 0.5 else None
        r["target_met"] = (r["freshness_s"]["p99"] <= bound) if r["share_of_max"] == 0.5 else None
        r["target_met_from_append"] = (r["freshness_from_append_s"]["p99"] <= bound) if r["share_of_max"] == 0.5 else None
    return out
