"""Wide deployments (issue 36 item 3): many target tables across many partitions.

--wide-tables tables fed from --wide-partitions partitions (topics of 4 partitions, table i in
topic t{i % topics}); a backlog of --wide-rounds x 8 records per table is produced first, then one
daemon run with the default settings reads it all (the daemon_run of the 8-table run). Reported:
peak RSS, start-up to the first committed epoch, epoch commit p50/p99, and what the group's
commits hold (partitions with a committed offset and their metadata bytes: the daemon writes every
assigned partition at each epoch's commit point)."""
import threading

from .pipeline import daemon_run
from .proc import json_line, kafka_tool, log, run
from .workload import produce

RECORDS_PER_TABLE_ROUND = 8


def section_wide(env):
    cfg = env.cfg
    tables, partitions = cfg.wide_tables, cfg.wide_partitions
    if partitions % 4:
        raise SystemExit("--wide-partitions must be a multiple of 4 (topics of 4 partitions)")
    records = RECORDS_PER_TABLE_ROUND * tables * cfg.wide_rounds
    info = produce(env, "wide", records, tables, partitions // 4)
    argv = kafka_tool(env.broker, "commit-size", "--group", "wide-cdc2doris-1", "--topic-regex", info["regex"])
    # While the daemon runs, the group's commits are read every 0.5 s: an epoch's commit point writes
    # pending metadata (its table list) that the commit after Doris' replaces with a short marker, so the
    # largest seen is a lower bound of the commit point's size, the last one what an idle group holds.
    stop, seen = threading.Event(), []

    def sample():
        while not stop.wait(0.5):
            try:
                seen.append(json_line(run(argv, timeout=60)[0]))
            except RuntimeError:
                pass  # no commit yet
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        res, emu, _, _ = daemon_run(env, info, "wide", tables, 1)
    finally:
        stop.set()
        sampler.join(90)
    emu.close()
    size = json_line(run(argv, timeout=300)[0])
    size["largest_seen_metadata_bytes"] = max((x["metadata_bytes"] for x in seen), default=None)
    size["largest_seen_max_metadata_bytes"] = max((x["max_metadata_bytes"] for x in seen), default=None)
    size["samples"] = len(seen)
    log(f"wide: {tables} tables, {partitions} partitions: peak RSS {res['peak_rss_mib']:.0f} MiB, first commit after "
        f"{res['start_to_first_commit_s']} s, commit p99 {res['commit_p99_s']} s; group commit {size}")
    return {"tables": tables, "partitions": partitions, "rounds": cfg.wide_rounds, "produced": info, "daemon": res,
            "commit_size": size}


def wide_markdown(w):
    d, s = w["daemon"], w["commit_size"]

    def num(v, fmt="{:.2f}"):
        return "–" if v is None else fmt.format(v)
    per_part = s["metadata_bytes"] / s["committed_partitions"] if s["committed_partitions"] else None
    return ["", "## Wide deployment", "",
            f"{w['tables']:,} tables across {w['partitions']:,} partitions ({w['partitions'] // 4} topics x 4); a backlog "
            f"of {w['rounds']} x {RECORDS_PER_TABLE_ROUND} records per table ({w['produced']['records']:,} records), "
            "one run, daemon defaults.", "",
            "| figure | value | target |", "|---|---:|---|",
            f"| peak RSS (VmHWM) | {num(d['peak_rss_mib'], '{:.0f}')} MiB | ≤ 1 GiB "
            + ("✅" if d["peak_rss_mib"] <= 1024 else "❌") + " |",
            f"| start-up to the first committed epoch | {num(d['start_to_first_commit_s'])} s | ≤ 60 s "
            + ("" if d["start_to_first_commit_s"] is None else "✅" if d["start_to_first_commit_s"] <= 60 else "❌")
            + " |",
            f"| start-up to partitions assigned | {num(d['start_to_assigned_s'])} s | |",
            f"| epochs committed | {num(d['commit_count'], '{:.0f}')} | |",
            f"| epoch commit p50 / p99 | {num(d['commit_p50_s'])} / {num(d['commit_p99_s'])} s | p99 ≤ 5 s "
            + ("" if d["commit_p99_s"] is None else "✅" if d["commit_p99_s"] <= 5 else "❌") + " |",
            f"| all committed after | {num(d['wall_s'])} s ({num(d['records_per_s'], '{:,.0f}')} records/s) | |",
            f"| group commit: partitions with an offset | {s['committed_partitions']:,} of {s['partitions']:,} | |",
            f"| group commit at the end: metadata bytes (total / per partition / largest) | {s['metadata_bytes']:,} / "
            f"{num(per_part, '{:,.0f}')} / {s['max_metadata_bytes']:,} | |",
            f"| group commit during the run, largest seen in {s['samples']} samples: metadata bytes total / largest "
            f"partition's | {num(s['largest_seen_metadata_bytes'], '{:,}')} / "
            f"{num(s['largest_seen_max_metadata_bytes'], '{:,}')} | |"]
