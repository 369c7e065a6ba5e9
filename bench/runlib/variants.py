"""End-to-end variants of the 8-table run (issue 18 item 1, issue 14 "Speed"): the schema
envelope, 1 KB plain values and a TOAST-heavy stream in the load modes of issue 14."""
from .pipeline import baseline_count, ceiling_run, daemon_run
from .stats import fig, ratio_summary, summary
from .workload import RunSpec, flexible_ddl, produce, sequence_ddl, sequence_routing, typed_ddl

# Each variant produces its own
# streams once, then per repetition runs the daemon once per run mode and the
# bare consumer once per stream. A new variant is one entry here plus its rows
# in build_table(); `--only` takes its key.
TOAST_MIX = "0.25,0.65,0.07,0.03"   # insert, update, delete, pk change: update-heavy
TOAST_PARTIAL_PERCENT = 48           # of the TOAST tables' updates: ~30% of all change rows
PLAIN_1K_NOTE_CHARS = 300            # ~1 KB average plain value
# The decode section's figure for the plain 1 KB stream's records, decoded as the daemon decodes them
# (typed by the raw columns of the e2e tables): a thread that decodes and sends every record cannot
# beat it, so the report sets the plain 1 KB ratio target next to it.
PLAIN_1K_DECODE = "plain1k-raw"
# The schema-envelope records in Confluent's Avro framing (issue 34 item 4), read as decoding.format avro
# reads them; bench-decode runs it right after "schema" on the same records.
AVRO_DECODE = "schema-avro"
TOAST_ARGS = ["--mix", TOAST_MIX, "--toast-tables", "8", "--toast-partial-percent", str(TOAST_PARTIAL_PERCENT)]


def variants(cfg):
    return {
        "schema": {
            "label": "e2e schema envelope",
            "records": cfg.records_schema,
            "streams": {"e2eschema": ["--format", "schema"]},
            "runs": {"schema": ("e2eschema", RunSpec(ddl=typed_ddl))},
        },
        "plain1k": {
            "label": "e2e plain 1 KB values",
            "records": cfg.records,
            "streams": {"e2eplain1k": ["--note-chars", str(PLAIN_1K_NOTE_CHARS)]},
            "runs": {"plain1k": ("e2eplain1k", RunSpec())},
        },
        "toast": {
            "label": "e2e TOAST-heavy",
            "records": cfg.records_toast,
            "streams": {"e2etoast": TOAST_ARGS, "e2etoastfull": ["--mix", TOAST_MIX],
                        # A load per run of column sets ends an epoch on the load bound every few hundred
                        # records (~700 rec/s measured): a tenth of the stream, its first records.
                        "e2etoastruns": (TOAST_ARGS, max(cfg.records_toast // 10, 10_000))},
            "runs": {"flexible": ("e2etoast", RunSpec(ddl=flexible_ddl)),
                     "sequence": ("e2etoast", RunSpec(ddl=sequence_ddl, yaml=sequence_routing(8))),
                     "runs": ("e2etoastruns", RunSpec()),
                     "no_partial": ("e2etoastfull", RunSpec())},
        },
    }


VARIANTS_ORDER = ("schema", "plain1k", "toast")
# bench-ceiling runs (issue 36): the daemon's own consumer, and that consumer plus its decoder.
CEILINGS = ("ceiling_consumer", "ceiling_decode")
VARIANT_KEYS = ("wall_s", "records_per_s", "mb_per_s", "records_per_s_consuming", "cpu_s", "cpu_s_per_m",
                "peak_rss_mib", "commit_p50_s", "commit_p99_s", "commit_count", "epochs_per_min",
                "epochs_ended_early_total", "loads_per_table_epoch_mean", "pipeline_thread_cpu_s_per_m",
                "pipeline_thread_busy_share", "pipeline_thread_sleeps_per_m", "pipeline_thread_preempted_per_m",
                "loads_per_table_epoch_max", "broker_cpu_s", "emulator_cpu_s", "machine_busy_share", "minor_faults")


def section_variant(env, key):
    cfg = env.cfg
    v = variants(cfg)[key]
    # A stream is its produce arguments, or (arguments, records) when it has its own size.
    info = {}
    for s, a in v["streams"].items():
        args, records = a if isinstance(a, tuple) else (a, v["records"])
        info[s] = produce(env, s, records, 8, 0, args)
    out = {"label": v["label"], "produced": info, "runs": {m: {"stream": st, "daemon": []} for m, (st, _) in
                                                         v["runs"].items()},
           "plain_consumer": {s: [] for s in info},
           "ceiling_consumer": {s: [] for s in info}, "ceiling_decode": {s: [] for s in info}}
    # The ceilings of a stream run on the config of the first mode that reads it (its DDL: the column
    # types the decoder reads from Doris for schemaless records).
    ceiling_spec = {}
    for stream, spec in v["runs"].values():
        ceiling_spec.setdefault(stream, spec)
    for rep in range(1, cfg.reps + 1):
        for mode, (stream, spec) in v["runs"].items():
            res, emu, _, _ = daemon_run(env, info[stream], f"{stream}-{mode}", 8, rep, spec=spec)
            emu.close()
            out["runs"][mode]["daemon"].append(res)
        for s in info:
            out["plain_consumer"][s].append(baseline_count(env, info[s], rep))
            if cfg.ceilings and s in ceiling_spec:
                out["ceiling_consumer"][s].append(ceiling_run(env, info[s], s, rep, ceiling_spec[s]))
                out["ceiling_decode"][s].append(ceiling_run(env, info[s], s, rep, ceiling_spec[s], decode=True))
    for s, reps in out["plain_consumer"].items():
        for r in reps:
            r["cpu_s_per_m"] = r["cpu_s"] / (info[s]["records"] / 1e6)
    base_keys = ("records_per_s", "mb_per_s", "cpu_s", "cpu_s_per_m", "peak_rss_mib")
    out["figures"] = {"plain_consumer": {s: fig(r, base_keys) for s, r in out["plain_consumer"].items()}}
    for c in CEILINGS:
        out["figures"][c] = {s: fig(r, base_keys + ("records_per_s_after_assign",)) for s, r in out[c].items() if r}
    for mode, r in out["runs"].items():
        f = fig(r["daemon"], VARIANT_KEYS)
        base = out["plain_consumer"][r["stream"]]
        # Ratio per repetition (daemon rep i vs the bare consumer's rep i on the same topics).
        f["ratio_vs_plain_consumer"] = ratio_summary(r["daemon"], base)
        for c in CEILINGS:
            ceil = out[c][r["stream"]]
            if ceil:
                f[f"ratio_vs_{c}"] = ratio_summary(r["daemon"], ceil)
                f[f"cpu_ratio_vs_{c}"] = ratio_summary(r["daemon"], ceil, "cpu_s_per_m")
                # Without start-up, the group join and the last epoch's commit on either side.
                f[f"consuming_ratio_vs_{c}"] = summary([d["records_per_s_consuming"] / b["records_per_s_after_assign"]
                                                        for d, b in zip(r["daemon"], ceil)
                                                        if d.get("records_per_s_consuming")])
        out["figures"][mode] = f
    if "no_partial" in out["runs"]:
        full = out["runs"]["no_partial"]["daemon"]
        for mode, r in out["runs"].items():
            if mode != "no_partial":
                out["figures"][mode]["ratio_vs_no_partial"] = ratio_summary(r["daemon"], full)
    return out

