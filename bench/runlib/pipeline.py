"""End-to-end daemon runs: one measured run from process start until the consumer group
committed everything, the bare-consumer baselines beside it, and the sections built of
them (the 8- and 1,000-table pipeline, memory)."""
import json
import os
import re
import subprocess
import time

from . import proc
from .fixtures import Daemon, write_daemon_config
from .proc import (BIN, free_port, http, json_line, kafka_tool, log, machine_busy_s, pid_cpu_s, run, run_rusage,
                   spawn, stop, wait_committed_argv)
from .stats import fig, hist_quantile, ratio_summary
from .workload import RunSpec, make_emulator, produce, typed_ddl


def loads_per_table_epoch(emu):
    """Committed Stream Loads per (table, epoch) from the emulator's txn list: labels end in
    `_{epoch}` (part 0) or `_{epoch}-{n}` (part n), see core/doris/label.cpp."""
    txns = json.loads(http("GET", f"http://{emu.fe}/_emulator/txns?db=shop", timeout=30)[1])["txns"]
    per = {}
    for t in txns:
        if t["state"].upper() not in ("COMMITTED", "VISIBLE"):
            continue
        m = re.search(r"_(\d+)(?:-\d+)?$", t["label"])
        if m:
            key = (t["table"], m.group(1))
            per[key] = per.get(key, 0) + 1
    if not per:
        return {"loads_per_table_epoch_mean": None, "loads_per_table_epoch_max": None}
    return {"loads_per_table_epoch_mean": sum(per.values()) / len(per), "loads_per_table_epoch_max": max(per.values())}


def daemon_run(env, info, name, tables, rep, extra_delivery="", spec=None, answer_delay_ms=0):
    """One measured daemon run from process start to 'group committed everything'.
    spec: a RunSpec (DDL, extra YAML, Kafka properties) for the variants; None = the plain 8-table setup."""
    spec = spec or RunSpec()
    emu = make_emulator(f"{name}-{rep}", tables, spec.ddl, answer_delay_ms, spec.count_only)
    state = os.path.join(proc.TMP, f"state-{name}-{rep}")
    group = f"{name}-cdc2doris-{rep}"
    # What else ran on the machine meanwhile: the broker and the emulator share its cores with
    # the daemon, so a daemon that waits may be waiting for them (or for the machine).
    others0 = (pid_cpu_s(env.broker.proc.pid), pid_cpu_s(emu.proc.pid), machine_busy_s())
    d = Daemon(proc.TMP, f"daemon-{name}-{rep}", env.broker, emu, group, info["topic_regex"], state,
               f"{name}r{rep}", env.cfg.epoch_interval, extra_delivery + spec.delivery,
               kafka_props=spec.kafka_properties, extra_yaml=spec.yaml)
    waiter = spawn(wait_committed_argv(env.broker, group, info["regex"], 3600), stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, text=True)
    t_consumed = t_first_commit = None
    peak_rss_seen = 0.0
    samples = []
    last_sample = 0.0
    try:
        while True:
            if d.proc.poll() is not None:
                raise RuntimeError(f"daemon exited {d.proc.returncode}; see {d.logpath}")
            if waiter.poll() is not None:
                t_done = time.monotonic()
                break
            now = time.monotonic()
            if now - last_sample >= 0.25:
                last_sample = now
                cpu, hwm, rss, thr = d.proc_stats()
                peak_rss_seen = max(peak_rss_seen, rss or 0)
                m = d.metrics()
                consumed = m.get("cdc2doris_records_consumed_total") if m else None
                samples.append({"t": round(now - d.t0, 2), "cpu_s": cpu, "rss_mib": rss, "consumed": consumed})
                if t_consumed is None and consumed is not None and consumed >= info["records"]:
                    t_consumed = now
                if t_first_commit is None and m and m["_commit_buckets"] and m["_commit_buckets"][-1][1] > 0:
                    t_first_commit = now
            time.sleep(0.05)
        wout, _ = waiter.communicate()
        if waiter.returncode != 0:
            raise RuntimeError(f"wait-committed failed: {wout}")
        cpu, hwm, rss, thr = d.proc_stats()
        pipeline_cpu, thread_cpu = d.thread_cpu_s()
        sleeps, preempted = d.pipeline_thread_switches()
        others1 = (pid_cpu_s(env.broker.proc.pid), pid_cpu_s(emu.proc.pid), machine_busy_s())
        m = d.metrics() or {}
        if t_consumed is None and m.get("cdc2doris_records_consumed_total", 0) >= info["records"]:
            t_consumed = t_done
    finally:
        stop(waiter)
    wall = t_done - d.t0
    buckets = m.get("_commit_buckets", [])
    emu_stats = emu.stats()
    commits = buckets[-1][1] if buckets else None
    early = {k[k.index('"') + 1:k.rindex('"')]: v for k, v in m.items()
             if k.startswith("cdc2doris_epochs_ended_early_total{")}
    consuming_s = (t_consumed - d.t_assigned) if (d.t_assigned and t_consumed and t_consumed > d.t_assigned) else None
    res = {
        "wall_s": wall,
        "records_per_s": info["records"] / wall,
        "mb_per_s": info["bytes"] / 1e6 / wall,
        "consumed_s": (t_consumed - d.t0) if t_consumed else None,
        "start_to_consuming_s": (d.t_consuming - d.t0) if d.t_consuming else None,
        "start_to_assigned_s": (d.t_assigned - d.t0) if d.t_assigned else None,
        # The first epoch committed (the commit histogram's count moved; sampled every 0.25 s).
        "start_to_first_commit_s": (t_first_commit - d.t0) if t_first_commit else None,
        # Rate once the group assigned the partitions (excludes start-up and the group join).
        "records_per_s_after_assign": (info["records"] / (t_done - d.t_assigned)) if d.t_assigned else None,
        # Rate from assignment until the last record was consumed (/metrics, sampled every 0.25 s): the
        # pipeline's throughput without the wait for the last epoch to end and commit, which with 1 s
        # epochs adds 0.1-1 s depending on where the data ends.
        "records_per_s_consuming": (info["records"] / (t_consumed - d.t_assigned))
        if (d.t_assigned and t_consumed and t_consumed > d.t_assigned) else None,
        "cpu_s": cpu,
        "cpu_s_per_gb": cpu / (info["bytes"] / 1e9),
        "cpu_s_per_m": cpu / (info["records"] / 1e6),
        "peak_rss_mib": hwm,
        "minor_faults": d.minor_faults(),
        "broker_cpu_s": others1[0] - others0[0],
        "emulator_cpu_s": others1[1] - others0[1],
        # Share of the machine's CPU time (all cores) that was busy, whatever ran.
        "machine_busy_share": (others1[2][0] - others0[2][0]) / max(1e-9, others1[2][1] - others0[2][1]),
        "threads": thr,
        # The one thread that polls, decodes and loads: its CPU per record, and how busy it was from partition
        # assignment until everything was committed (1.0 = on a core the whole time).
        "pipeline_thread_cpu_s": pipeline_cpu,
        "pipeline_thread_cpu_s_per_m": pipeline_cpu / (info["records"] / 1e6) if pipeline_cpu is not None else None,
        "pipeline_thread_busy_share": (pipeline_cpu / (t_done - d.t_assigned))
        if (pipeline_cpu is not None and d.t_assigned and t_done > d.t_assigned) else None,
        "thread_cpu_s": thread_cpu,
        # Its context switches: waits it chose (voluntary) and preemptions by another thread (involuntary).
        "pipeline_thread_sleeps_per_m": sleeps / (info["records"] / 1e6),
        "pipeline_thread_preempted_per_m": preempted / (info["records"] / 1e6),
        "commit_p50_s": hist_quantile(buckets, 0.5) if buckets else None,
        "commit_p99_s": hist_quantile(buckets, 0.99) if buckets else None,
        "epochs_committed": m.get("cdc2doris_last_committed_epoch"),
        "commit_count": buckets[-1][1] if buckets else None,
        "commit_buckets": [[("+Inf" if le == float("inf") else le), c] for le, c in buckets],
        "records_consumed_total": m.get("cdc2doris_records_consumed_total"),
        "emulator_stats": emu_stats,
        # Epoch cadence (issue 14): epochs per minute while consuming, early ends by reason, and the
        # Stream Loads (committed txns in the emulator) per table and epoch.
        # Committed epochs per minute from partition assignment until everything was committed.
        "epochs_per_min": (commits / ((t_done - d.t_assigned) / 60)) if (commits and d.t_assigned) else None,
        "epochs_ended_early": early,
        # "caught up" ends the epoch holding the backlog's last records: once per run, not a split.
        "epochs_ended_early_total": sum(v for k, v in early.items() if k != "caught up"),
        **loads_per_table_epoch(emu),
    }
    t_stop = time.monotonic()
    res["exit_code"] = d.close()
    res["shutdown_s"] = time.monotonic() - t_stop
    if env.cfg.keep_samples:
        res["samples"] = samples
    log(f"{name} rep {rep}: {info['records']} records in {wall:.2f} s = {res['records_per_s']:.0f} rec/s, "
        f"{res['mb_per_s']:.1f} MB/s, cpu {cpu:.1f} s, HWM {hwm:.0f} MiB, commit p99 {res['commit_p99_s']}; "
        f"broker cpu {res['broker_cpu_s']:.1f} s, emulator cpu {res['emulator_cpu_s']:.1f} s, "
        f"machine busy {res['machine_busy_share']:.0%}, minor faults {res['minor_faults']}; "
        f"threads (CPU-s) {res['thread_cpu_s']}")
    return res, emu, state, d


def consumer_figures(info, wall, cpu, maxrss_kib, **extra):
    return {"wall_s": wall, "records_per_s": info["records"] / wall, "mb_per_s": info["bytes"] / 1e6 / wall,
            "cpu_s": cpu, "peak_rss_mib": maxrss_kib / 1024, **extra}


def baseline_count(env, info, rep):
    out, wall, cpu, maxrss = run_rusage(kafka_tool(env.broker, "count", "--topic-regex", info["regex"]))
    j = json_line(out)
    if j["records"] != info["records"]:
        raise RuntimeError(f"plain consumer counted {j['records']} of {info['records']}")
    res = consumer_figures(info, wall, cpu, maxrss, self_reported=j)
    log(f"plain consumer rep {rep}: {res['records_per_s']:.0f} rec/s, {res['mb_per_s']:.1f} MB/s, cpu {cpu:.1f} s")
    return res


def ceiling_run(env, info, name, rep, spec=None, decode=False):
    """bench-ceiling on the config a daemon run of this stream gets (same YAML, fresh group and emulator):
    the daemon's own consumer, with decode the daemon's decoder too, everything after thrown away (issue 36)."""
    spec = spec or RunSpec()
    kind = "decode" if decode else "consumer"
    emu = make_emulator(f"{name}-ceil-{kind}-{rep}", 8, spec.ddl)
    try:
        cfg_path = os.path.join(proc.TMP, f"ceiling-{kind}-{name}-{rep}.yaml")
        write_daemon_config(cfg_path, env.broker, emu, f"{name}-ceiling-{kind}-{rep}", info["topic_regex"],
                            os.path.join(proc.TMP, f"state-ceiling-{name}-{rep}"), f"{name}c{rep}",
                            env.cfg.epoch_interval, f"127.0.0.1:{free_port()}", spec.delivery,
                            kafka_props=spec.kafka_properties, extra_yaml=spec.yaml)
        err_path = cfg_path[:-5] + ".log"
        argv = [BIN["ceiling"], "--config", cfg_path, "--records", str(info["records"])] + (["--decode"] if decode else [])
        out, wall, cpu, maxrss = run_rusage(argv, err_path=err_path)
    finally:
        emu.close()
    j = json_line(out)
    if j["records"] != info["records"] or j.get("decode_errors"):
        raise RuntimeError(f"bench-ceiling {kind} read {j['records']} of {info['records']} records, "
                           f"{j.get('decode_errors')} decode errors; see {err_path}")
    # The librdkafka properties the daemon's Kafka source applied (its own log line, secrets redacted).
    with open(err_path) as f:
        props = next((ln.split("properties=", 1)[1].strip() for ln in f if "Kafka source config:" in ln), None)
    # Timed like the daemon: from process start (its own clock) to the last record; the close is left out.
    res = consumer_figures(info, j["seconds"], cpu, maxrss, self_reported=j, process_wall_s=wall,
                           records_per_s_after_assign=j["records_per_s_after_assign"],
                           cpu_s_per_m=cpu / (info["records"] / 1e6), effective_kafka_properties=props)
    log(f"ceiling ({kind}) rep {rep}: {res['records_per_s']:.0f} rec/s, {res['mb_per_s']:.1f} MB/s, cpu {cpu:.1f} s, "
        f"{res['cpu_s_per_m']:.2f} CPU-s per million")
    return res


def baseline_kcat(env, info, rep):
    # kcat consumes one topic per invocation in simple-consumer mode (-C -e -o
    # beginning); the topics are read one after another and the walls summed.
    out, _ = run(["kcat", "-L", "-b", env.broker.bootstrap, "-J"], timeout=60)
    topics = sorted(t["topic"] for t in json.loads(out)["topics"] if re.match(info["regex"], t["topic"]))
    wall = cpu = 0.0
    maxrss = 0
    with open(os.devnull, "wb") as null:
        for t in topics:
            _, w, c, r = run_rusage(["kcat", "-C", "-b", env.broker.bootstrap, "-t", t, "-e", "-o", "beginning",
                                     "-q"], stdout=null)
            wall += w
            cpu += c
            maxrss = max(maxrss, r)
    res = consumer_figures(info, wall, cpu, maxrss, topics=len(topics))
    log(f"kcat rep {rep}: {res['records_per_s']:.0f} rec/s, {res['mb_per_s']:.1f} MB/s")
    return res


def section_pipeline(env, name, records, tables, topics, with_baselines, extra_delivery="", info=None,
                     answer_delay_ms=0):
    cfg = env.cfg
    info = info or produce(env, name, records, tables, topics)
    out = {"produced": info, "daemon": [], "plain_consumer": [], "kcat": [], "extra_delivery_config": extra_delivery,
           "emulator_answer_delay_ms": answer_delay_ms}
    for rep in range(1, cfg.reps + 1):
        res, emu, state, _ = daemon_run(env, info, name, tables, rep, extra_delivery, answer_delay_ms=answer_delay_ms)
        out["daemon"].append(res)
        if name == "e2e1k" and not extra_delivery and rep == cfg.reps:
            env.state_1k, env.emu_1k, env.info_1k = state, emu, info
        else:
            emu.close()
        if with_baselines:
            out["plain_consumer"].append(baseline_count(env, info, rep))
            out["kcat"].append(baseline_kcat(env, info, rep))
    keys = ("wall_s", "records_per_s", "mb_per_s", "consumed_s", "start_to_consuming_s", "start_to_assigned_s",
            "records_per_s_after_assign", "records_per_s_consuming", "cpu_s", "cpu_s_per_gb",
            "peak_rss_mib", "commit_p50_s", "commit_p99_s", "commit_count", "shutdown_s", "broker_cpu_s",
            "emulator_cpu_s", "machine_busy_share", "minor_faults", "pipeline_thread_cpu_s_per_m",
            "pipeline_thread_busy_share", "pipeline_thread_sleeps_per_m", "pipeline_thread_preempted_per_m")
    out["figures"] = {"daemon": fig(out["daemon"], keys)}
    if with_baselines:
        out["figures"]["plain_consumer"] = fig(out["plain_consumer"], ("wall_s", "records_per_s", "mb_per_s", "cpu_s",
                                                                         "peak_rss_mib"))
        out["figures"]["kcat"] = fig(out["kcat"], ("wall_s", "records_per_s", "mb_per_s", "cpu_s"))
        # Ratio per repetition (daemon rep i vs plain consumer rep i, run back to back).
        out["figures"]["ratio_vs_plain_consumer"] = ratio_summary(out["daemon"], out["plain_consumer"])
        out["figures"]["ratio_vs_kcat"] = ratio_summary(out["daemon"], out["kcat"])
    return out


def memory_streams(env):
    """The streams of the memory section: name -> (produced info, DDL of its tables)."""
    cfg = env.cfg
    out = {}
    for s in cfg.memory_streams.split(","):
        if s == "e2e8":
            out[s] = (env.produced.get("e2e8") or produce(env, "e2e8", cfg.records, 8, 0), None)
        elif s == "schema":
            # The schema-envelope stream of the variants section (4.3 KB records: the prefetch holds
            # the fewest of them).
            out[s] = (env.produced.get("e2eschema") or
                      produce(env, "e2eschema", cfg.records_schema, 8, 0, ["--format", "schema"]), typed_ddl)
        else:
            raise SystemExit(f"--memory-streams: unknown stream {s!r} (e2e8, schema)")
    return out


def section_memory(env):
    """Throughput and peak RSS of the 8-table stream (and the schema-envelope stream) against
    librdkafka's prefetch (queued.max.messages.kbytes) and delivery.memory_cap (issue 18 item 3)."""
    cfg = env.cfg
    streams = memory_streams(env)
    points = []
    for stream in streams:
        for spec in cfg.memory_points.split(","):
            kb, cap, fetch = (spec.split(":") + ["default", "default"])[:3]
            points.append({"stream": stream, "kbytes": kb, "memory_cap": cap or "default",
                           "fetch_max_bytes": fetch or "default", "daemon": []})
    for rep in range(1, cfg.reps + 1):
        # Settings interleaved within a repetition: a drift of the machine hits them alike.
        for i, pt in enumerate(points):
            info, ddl = streams[pt["stream"]]
            props = f"    queued.max.messages.kbytes: \"{pt['kbytes']}\"\n" if pt["kbytes"] != "default" else ""
            if pt["fetch_max_bytes"] != "default":
                props += f"    fetch.max.bytes: \"{pt['fetch_max_bytes']}\"\n"
            delivery = f"  memory_cap: {pt['memory_cap']}\n" if pt["memory_cap"] != "default" else ""
            res, emu, _, _ = daemon_run(env, info, f"mem{i}", 8, rep,
                                        spec=RunSpec(ddl=ddl, kafka_properties=props, delivery=delivery))
            emu.close()
            pt["daemon"].append(res)
    for pt in points:
        pt["figures"] = fig(pt["daemon"], ("records_per_s", "records_per_s_consuming", "peak_rss_mib", "cpu_s_per_m"))
    return {"points": points}

