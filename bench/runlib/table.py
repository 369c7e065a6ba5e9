"""The report's figures table: one row per figure, with its baseline, ratio and target."""
from .settings import BUDGET_VARIANT, SLOW_ANSWER_MS, settings_label
from .stats import parse_duration_s
from .variants import AVRO_DECODE, PLAIN_1K_DECODE, PLAIN_1K_NOTE_CHARS, VARIANTS_ORDER


def fmt_num(v, digits=1):
    if v is None:
        return "–"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}" if abs(v) >= 1 or v == 0 else f"{v:.3f}"


def spread_text(s):
    return f"{fmt_num(s['min'])}–{fmt_num(s['max'])} (±{s['spread_pct'] / 2:.0f}%)"


def row(label, s, unit, base_label=None, base=None, target=None, target_ok=None, ratio=None):
    if s is None:
        return None
    spread = spread_text(s)
    r = ratio if ratio is not None else (s["median"] / base["median"] if base and base["median"] else None)
    b = f"{base_label} {fmt_num(base['median'])}" if base else (base_label or "")
    t = "" if target is None else target + (" ✅" if target_ok else " ❌" if target_ok is not None else "")
    return {"figure": label, "unit": unit, "median": s["median"], "min": s["min"], "max": s["max"], "n": s["n"],
            "baseline": b, "ratio": r, "target": t, "_spread": spread}


def at_least(s, bound):
    return {"target": f"≥ {bound}", "target_ok": s["median"] >= bound}


def at_most(s, bound, unit=""):
    """The target '≤ bound unit'; met or not by the median, unknown without a figure."""
    return {"target": f"≤ {bound}{unit}", "target_ok": s["median"] <= bound if s else None}


def switch_rows(rows, label, figs):
    """The pipeline thread's context switches per million records (absent in older reports)."""
    rows.append(row(f"{label}: pipeline thread waits per million records (voluntary switches)",
                    figs.get("pipeline_thread_sleeps_per_m"), ""))
    rows.append(row(f"{label}: pipeline thread preemptions per million records (involuntary switches)",
                    figs.get("pipeline_thread_preempted_per_m"), ""))


def build_table(res):
    rows = []
    d = res.get("decode", {}).get("figures")
    if d:
        # Both plain rows are records without a schema envelope: with the
        # generator's per-table type hints (a library option), and untyped, as
        # the daemon decodes them (values pass through, validated).
        for fmt, label, tgt in (("plain", "plain, type hints", 500), ("plain-untyped", "plain, untyped (daemon)", 500),
                                ("plain-doris", "plain, typed by the Doris table", None),
                                ("plain-doris+transforms", "plain, typed by the Doris table, rename + filter", None),
                                ("schema", "schema", 250), ("schema+transforms", "schema, rename + filter", None),
                                ("flattened", "flattened", None)):
            if fmt not in d:
                continue
            s = d[fmt]["mb_per_s"]
            rows.append(row(f"decode {label} MB/s per core", s, "MB/s", "simdjson pass", d[fmt]["baseline_mb_per_s"],
                            **(at_least(s, tgt) if tgt else {})))
            rows.append(row(f"decode {label} records/s per core", d[fmt]["records_per_s"], "rec/s"))
        if AVRO_DECODE in d and "cpu_ratio_vs_schema" in d[AVRO_DECODE]:
            a = d[AVRO_DECODE]
            rows.append(row("decode schema envelope as Avro (Confluent framing, schemas cached) records/s per core",
                            a["records_per_s"], "rec/s", "JSON", d["schema"]["records_per_s"]))
            r = a["cpu_ratio_vs_schema"]
            rows.append(row("decode schema envelope as Avro: CPU per record over JSON's (same records)", r, "×",
                            f"JSON {fmt_num(d['schema']['cpu_ns_per_record']['median'])} ns, Avro "
                            f"{fmt_num(a['cpu_ns_per_record']['median'])} ns", target="≤ 1",
                            target_ok=r["median"] <= 1, ratio=r["median"]))
        if PLAIN_1K_DECODE in d:
            rows.append(row(f"decode plain 1 KB (--note-chars {PLAIN_1K_NOTE_CHARS}), typed by the e2e tables' columns "
                            "(daemon) records/s per core", d[PLAIN_1K_DECODE]["records_per_s"], "rec/s"))
    d = res.get("doris", {}).get("figures")
    if d:
        s = d["one_stream_mb_s"]
        rows.append(row("stream load, one stream into emulator BE (count-only)", s, "MB/s", "discard sink",
                        d["sink_mb_s"], **at_least(s, 500)))
        rows.append(row("stream load, one stream, gzip", d["one_stream_gzip_mb_s"], "MB/s", "discard sink gzip",
                        d["sink_gzip_mb_s"]))
        s = d["rss_per_stream_kib"]
        rows.append(row("memory per open stream (1,000 streams)", s, "KiB", **at_most(s, 256)))
    d = res.get("emulator", {}).get("figures")
    if d:
        s = d["loopback_http_ingest_MBps"]
        rows.append(row("emulator ingest, UNIQUE KEY, loopback HTTP", s, "MB/s", "in-process",
                        d["in_process_ingest_MBps"], **at_least(s, 300)))
    for key, label in (("pipeline", "e2e 8 tables"), ("pipeline1k", "e2e 1,000 tables"),
                       ("pipeline1k_budget", f"e2e 1,000 tables, {settings_label(BUDGET_VARIANT)}"),
                       ("pipeline1k_slow", f"e2e 1,000 tables, Doris answering after {SLOW_ANSWER_MS} ms")):
        p = res.get(key, {}).get("figures")
        if not p:
            continue
        dd = p["daemon"]
        if "plain_consumer" in p:
            rows.append(row(f"{label}: cdc2doris records/s", dd["records_per_s"], "rec/s", "plain consumer",
                            p["plain_consumer"]["records_per_s"], "ratio ≥ 0.40",
                            p["ratio_vs_plain_consumer"]["median"] >= 0.40,
                            ratio=p["ratio_vs_plain_consumer"]["median"]))
            if dd.get("records_per_s_after_assign"):
                rows.append(row(f"{label}: cdc2doris records/s after partition assignment", dd["records_per_s_after_assign"],
                                "rec/s", "plain consumer", p["plain_consumer"]["records_per_s"]))
            if dd.get("records_per_s_consuming"):
                rows.append(row(f"{label}: cdc2doris records/s consuming (assignment to last record read; no final "
                                "epoch wait)", dd["records_per_s_consuming"], "rec/s", "plain consumer",
                                p["plain_consumer"]["records_per_s"]))
            rows.append(row(f"{label}: cdc2doris records/s vs kcat", dd["records_per_s"], "rec/s", "kcat -C -e",
                            p["kcat"]["records_per_s"], ratio=p["ratio_vs_kcat"]["median"]))
            rows.append(row(f"{label}: cdc2doris MB/s", dd["mb_per_s"], "MB/s", "plain consumer",
                            p["plain_consumer"]["mb_per_s"]))
            rows.append(row(f"{label}: CPU seconds (user+sys)", dd["cpu_s"], "s", "plain consumer",
                            p["plain_consumer"]["cpu_s"]))
        else:
            rows.append(row(f"{label}: cdc2doris records/s", dd["records_per_s"], "rec/s"))
            rows.append(row(f"{label}: cdc2doris MB/s", dd["mb_per_s"], "MB/s"))
            rows.append(row(f"{label}: CPU seconds (user+sys)", dd["cpu_s"], "s"))
        tgt_rss = key.startswith("pipeline1k")
        rows.append(row(f"{label}: peak RSS (VmHWM)", dd["peak_rss_mib"], "MiB",
                        "plain consumer" if "plain_consumer" in p else None,
                        p.get("plain_consumer", {}).get("peak_rss_mib") if "plain_consumer" in p else None,
                        "≤ 150 MB" if tgt_rss else None,
                        (dd["peak_rss_mib"]["median"] * 1.048576 <= 150) if tgt_rss else None))
        rows.append(row(f"{label}: pipeline thread CPU-s per million records", dd.get("pipeline_thread_cpu_s_per_m"),
                        "s"))
        rows.append(row(f"{label}: pipeline thread busy (assignment to all committed)",
                        dd.get("pipeline_thread_busy_share"), ""))
        switch_rows(rows, label, dd)
        rows.append(row(f"{label}: epoch commit p50", dd["commit_p50_s"], "s"))
        rows.append(row(f"{label}: epoch commit p99", dd["commit_p99_s"], "s", **at_most(dd["commit_p99_s"], 1, " s")))
    for key in VARIANTS_ORDER:
        v = res.get(key)
        if not v or "figures" not in v:
            continue
        base = v["figures"]["plain_consumer"]
        for mode, run in v["runs"].items():
            f = v["figures"][mode]
            b = base[run["stream"]]
            label = variant_label(v, key, mode)
            ratio = f["ratio_vs_plain_consumer"]["median"]
            tgt = VARIANT_TARGETS.get((key, mode), {})
            rt = tgt.get("ratio")
            rows.append(row(f"{label}: cdc2doris records/s", f["records_per_s"], "rec/s", "plain consumer",
                            b["records_per_s"], f"ratio ≥ {rt}" if rt else None, (ratio >= rt) if rt else None,
                            ratio=ratio))
            rows.append(row(f"{label}: cdc2doris records/s consuming (no final epoch wait)",
                            f["records_per_s_consuming"], "rec/s", "plain consumer", b["records_per_s"]))
            ceiling_rows(rows, label, v, run["stream"], f)
            if "ratio_vs_json" in f:  # the schema variant's Avro mode against its JSON mode (issue 34)
                rows.append(row(f"{label}: cdc2doris records/s, Avro over JSON (same records)", f["ratio_vs_json"],
                                "×", ratio=f["ratio_vs_json"]["median"]))
                rows.append(row(f"{label}: cdc2doris CPU per record, Avro over JSON (same records)",
                                f["cpu_ratio_vs_json"], "×", ratio=f["cpu_ratio_vs_json"]["median"]))
            ceiling = decode_ceiling(res, key)
            if ceiling:
                rows.append(row(f"{label}: decoding alone on one core (bench-decode, same records)", ceiling, "rec/s",
                                "plain consumer", b["records_per_s"]))
            rows.append(row(f"{label}: cdc2doris MB/s", f["mb_per_s"], "MB/s", "plain consumer", b["mb_per_s"]))
            cpu_t = cpu_target(decode_cpu_basis(res, key, mode))
            rows.append(row(f"{label}: CPU-s per million records", f["cpu_s_per_m"], "s", "plain consumer",
                            b["cpu_s_per_m"], f"≤ {cpu_t:.2f} (1.5 × bench-decode)" if cpu_t else None,
                            (f["cpu_s_per_m"]["median"] <= cpu_t) if cpu_t else None))
            rows.append(row(f"{label}: pipeline thread CPU-s per million records",
                            f.get("pipeline_thread_cpu_s_per_m"), "s"))
            rows.append(row(f"{label}: pipeline thread busy (assignment to all committed)",
                            f.get("pipeline_thread_busy_share"), ""))
            switch_rows(rows, label, f)
            rows.append(row(f"{label}: peak RSS (VmHWM)", f["peak_rss_mib"], "MiB", "plain consumer",
                            b["peak_rss_mib"], **at_most(f["peak_rss_mib"], 150, " MiB")))
            rows.append(row(f"{label}: epoch commit p99", f["commit_p99_s"], "s", **at_most(f["commit_p99_s"], 1, " s")))
            # The broker and the emulator share the machine's cores with the daemon (absent in older reports).
            rows.append(row(f"{label}: Kafka broker CPU-s during the run", f.get("broker_cpu_s"), "s"))
            rows.append(row(f"{label}: emulator CPU-s during the run", f.get("emulator_cpu_s"), "s"))
            rows.append(row(f"{label}: machine busy (all cores)", f.get("machine_busy_share"), ""))
            rows.append(row(f"{label}: daemon minor page faults", f.get("minor_faults"), ""))
            if key == "toast":
                interval = parse_duration_s(res["config"]["epoch_interval"]) if "config" in res else None
                per_min = 60 / interval if interval else None
                rows.append(row(f"{label}: epochs per minute (assignment to all committed)", f["epochs_per_min"],
                                "/min", "interval-driven", {"median": per_min} if per_min else None))
                no_early = mode in ("flexible", "sequence", "no_partial")
                rows.append(row(f"{label}: epochs ended early", f["epochs_ended_early_total"], "",
                                target="0" if no_early else None,
                                target_ok=(f["epochs_ended_early_total"]["max"] == 0) if no_early else None))
                rows.append(row(f"{label}: loads per table per epoch (mean)", f["loads_per_table_epoch_mean"], ""))
                rows.append(row(f"{label}: loads per table per epoch (max)", f["loads_per_table_epoch_max"], "",
                                target="≤ 3" if mode in ("flexible", "sequence") else None,
                                target_ok=(f["loads_per_table_epoch_max"]["max"] <= 3)
                                if mode in ("flexible", "sequence") else None))
                if "ratio_vs_no_partial" in f:
                    r80 = mode in ("flexible", "sequence")
                    nf = v["figures"]["no_partial"]["records_per_s"]
                    rows.append(row(f"{label}: records/s vs the stream without partial rows", f["records_per_s"],
                                    "rec/s", "no partial rows", nf, "ratio ≥ 0.80" if r80 else None,
                                    (f["ratio_vs_no_partial"]["median"] >= 0.8) if r80 else None,
                                    ratio=f["ratio_vs_no_partial"]["median"]))
    r = res.get("recovery", {}).get("figures")
    if r:
        for k, label in (("clean", "restart-to-consuming, clean state"),
                         ("tables_1k", "restart-to-consuming, 1,000 tables in state")):
            s = r[k]["to_consuming_log_s"]
            rows.append(row(f"{label} (log line)", s, "s", **at_most(s, 2, " s")))
            rows.append(row(f"{label} (/readyz 200)", r[k]["to_readyz_200_s"], "s"))
    f = res.get("failover", {}).get("figures")
    if f:
        rows.append(row("fail-over after SIGKILL of 1 of 2 members: partitions reassigned (session.timeout.ms 2 s)",
                        f["to_reassigned_s"], "s"))
        rows.append(row("fail-over after SIGKILL of 1 of 2 members: records produced after the kill committed "
                        "(includes producing them)", f["to_caught_up_s"], "s"))
    return [x for x in rows if x]


CEILING_NAMES = {"ceiling_consumer": "the daemon's consumer (bench-ceiling)",
                 "ceiling_decode": "decode-and-discard (bench-ceiling --decode)"}


def ceiling_rows(rows, label, v, stream, f):
    """The daemon against its honest ceilings (issue 36): its own consumer with its own settings, and that
    consumer plus its decoder, rows thrown away. Absent in older reports."""
    for c, name in CEILING_NAMES.items():
        cf = v["figures"].get(c, {}).get(stream)
        if not cf or f"ratio_vs_{c}" not in f:
            continue
        decode = c == "ceiling_decode"
        rows.append(row(f"{label}: ceiling, {name}, records/s", cf["records_per_s"], "rec/s", "plain consumer",
                        v["figures"]["plain_consumer"][stream]["records_per_s"]))
        ratio = f[f"ratio_vs_{c}"]
        rows.append(row(f"{label}: cdc2doris records/s vs {name}", ratio, "", target="≥ 0.8" if decode else None,
                        target_ok=(ratio["median"] >= 0.8) if decode else None, ratio=ratio["median"]))
        cons = f.get(f"consuming_ratio_vs_{c}")
        rows.append(row(f"{label}: cdc2doris records/s consuming vs {name} after assignment", cons, "",
                        ratio=cons["median"] if cons else None))
        rows.append(row(f"{label}: ceiling, {name}, CPU-s per million records", cf["cpu_s_per_m"], "s"))
        cpu = f[f"cpu_ratio_vs_{c}"]
        rows.append(row(f"{label}: cdc2doris CPU per record vs {name}", cpu, "×", target="≤ 1.25" if decode else None,
                        target_ok=(cpu["median"] <= 1.25) if decode else None, ratio=cpu["median"]))


# Issue 18 / issue 14 targets of the variants (ratio: vs the bare consumer's records/s;
# cpu_vs_decode: CPU-s per million records at most this times bench-decode's on the same records).
VARIANT_TARGETS = {("schema", "schema"): {"ratio": 0.6, "cpu_vs_decode": 1.5}, ("plain1k", "plain1k"): {"ratio": 0.6}}


def variant_label(v, key, mode):
    return v["label"] + ("" if mode == key else f", {mode.replace('_', ' ')}")


def decode_cpu_basis(res, key, mode):
    """(factor, bench-decode's schema records/s per core) a variant's CPU target is built from, or None."""
    factor = VARIANT_TARGETS.get((key, mode), {}).get("cpu_vs_decode")
    decode = res.get("decode", {}).get("figures", {}).get("schema")
    return (factor, decode["records_per_s"]) if factor and decode else None


def decode_ceiling(res, key):
    """bench-decode's records/s per core on a variant's own records, where the report has it: what a
    pipeline thread that decodes every record could reach if it did nothing else."""
    d = res.get("decode", {}).get("figures", {})
    return d[PLAIN_1K_DECODE]["records_per_s"] if key == "plain1k" and PLAIN_1K_DECODE in d else None


def cpu_target(basis):
    """CPU-s per million records: factor x the decoder's own CPU for a million records on one core."""
    return basis[0] * 1e6 / basis[1]["median"] if basis else None


def target_basis_notes(res):
    """Lines naming the bench-decode figure behind each CPU target in the table (issue 18), so that a
    reader can judge the target by its value and spread over repetitions."""
    notes = []
    for key in VARIANTS_ORDER:
        v = res.get(key)
        if not v or "figures" not in v:
            continue
        ceiling, rt = decode_ceiling(res, key), VARIANT_TARGETS.get((key, key), {}).get("ratio")
        if ceiling and rt:
            # One thread decodes and hands every record to its load: the ratio target is a time budget
            # per record on that thread, set here next to what decoding alone takes.
            consumer = v["figures"]["plain_consumer"][v["runs"][key]["stream"]]["records_per_s"]["median"]
            f = v["figures"][key]
            thread = f.get("pipeline_thread_cpu_s_per_m", {}).get("median")
            notes.append(f"- {v['label']}: the ratio target ≥ {rt} is {fmt_num(rt * consumer)} records/s (the bare "
                         f"consumer's median {fmt_num(consumer)}), a budget of {1e6 / (rt * consumer):.2f} µs per record "
                         f"on the pipeline thread; decoding alone takes {1e6 / ceiling['median']:.2f} µs "
                         f"(bench-decode, {fmt_num(ceiling['median'])} records/s per core, min–max "
                         f"{spread_text(ceiling)})" + (f", the pipeline thread used {thread:.2f} µs." if thread else "."))
        for mode in v["runs"]:
            basis = decode_cpu_basis(res, key, mode)
            if not basis:
                continue
            factor, dec = basis
            decode_cpu = 1e6 / dec["median"]
            notes.append(f"- {variant_label(v, key, mode)}: the CPU-s per million records target "
                         f"≤ {cpu_target(basis):.2f} is {factor} × bench-decode's schema figure of this report: "
                         f"{fmt_num(dec['median'])} records/s per core, median of {dec['n']} "
                         f"(min–max {spread_text(dec)}) = {decode_cpu:.2f} CPU-s per million records.")
            # What reading and decoding alone cost, so the target can be read against its parts.
            fetch = v["figures"]["plain_consumer"][v["runs"][mode]["stream"]]["cpu_s_per_m"]["median"]
            daemon = v["figures"][mode]["cpu_s_per_m"]["median"]
            notes.append(f"  Reading the same records with the bare librdkafka consumer took {fetch:.2f} CPU-s per "
                         f"million (median): with decoding, {fetch + decode_cpu:.2f} "
                         f"({(fetch + decode_cpu) / decode_cpu:.2f} × bench-decode) before anything is sent to "
                         f"Doris; the daemon used {daemon:.2f}.")
    return notes

