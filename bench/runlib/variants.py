"""End-to-end variants of the 8-table run (issue 18 item 1, issue 14 "Speed"): the schema
envelope, 1 KB plain values and a TOAST-heavy stream in the load modes of issue 14."""
import os

from . import proc
from .fixtures import Registry
from .pipeline import baseline_count, ceiling_run, daemon_run
from .proc import log
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
# The schema variant's stream again, in Avro (issue 34 item 4): the same generator records re-encoded by
# bench-kafka produce --format avro, read by the daemon through a real registry. bench-ceiling decodes JSON
# only, so this stream has no ceilings.
AVRO_STREAM = "e2eschemaavro"


def avro_yaml(url):
    return f"decoding:\n  format: avro\n  schema_registry:\n    url: \"{url}\"\n"


def register_schemas(registry, path):
    """Registers bench-kafka's schemas in id order; the registry must give each the id the records carry."""
    with open(path) as f:
        for line in f:
            sid, subject, schema = line.rstrip("\n").split("\t", 2)
            got = registry.register(subject, schema)
            if got != int(sid):
                raise RuntimeError(f"the registry gave {subject} id {got}, the records carry {sid}")
TOAST_ARGS = ["--mix", TOAST_MIX, "--toast-tables", "8", "--toast-partial-percent", str(TOAST_PARTIAL_PERCENT)]


def variants(cfg):
    return {
        "schema": {
            "label": "e2e schema envelope",
            "records": cfg.records_schema,
            "streams": {"e2eschema": ["--format", "schema"],
                        AVRO_STREAM: ["--format", "avro", "--avro-schemas",
                                      os.path.join(proc.TMP or "", f"{AVRO_STREAM}.schemas")]},
            # The registry's URL is known once it runs: section_variant fills the avro mode's YAML.
            "runs": {"schema": ("e2eschema", RunSpec(ddl=typed_ddl)), "avro": (AVRO_STREAM, RunSpec(ddl=typed_ddl))},
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
    registry = None
    try:
        for s, a in v["streams"].items():
            args, records = a if isinstance(a, tuple) else (a, v["records"])
            info[s] = produce(env, s, records, 8, 0, args)
            if s == AVRO_STREAM:
                log("== starting the schema registry (Apicurio)")
                registry = Registry(proc.TMP)
                register_schemas(registry, args[args.index("--avro-schemas") + 1])
                for mode, (stream, spec) in v["runs"].items():
                    if stream == AVRO_STREAM:
                        spec.yaml = avro_yaml(registry.url)
        return variant_runs(env, cfg, v, info)
    finally:
        if registry:
            registry.close()


def variant_runs(env, cfg, v, info):
    out = {"label": v["label"], "produced": info, "runs": {m: {"stream": st, "daemon": []} for m, (st, _) in
                                                         v["runs"].items()},
           "plain_consumer": {s: [] for s in info},
           "ceiling_consumer": {s: [] for s in info}, "ceiling_decode": {s: [] for s in info}}
    # The ceilings of a stream run on the config of the first mode that reads it (its DDL: the column
    # types the decoder reads from Doris for schemaless records).
    ceiling_spec = {}
    for stream, spec in v["runs"].values():
        if stream != AVRO_STREAM:
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
    if "avro" in out["runs"]:
        # Avro against JSON on the same records, per repetition (the two ran back to back).
        avro, json_ = out["runs"]["avro"]["daemon"], out["runs"]["schema"]["daemon"]
        out["figures"]["avro"]["ratio_vs_json"] = ratio_summary(avro, json_)
        out["figures"]["avro"]["cpu_ratio_vs_json"] = ratio_summary(avro, json_, "cpu_s_per_m")
        # Both modes must have loaded the same number of rows, or they did not do the same work.
        out["figures"]["avro"]["rows_equal_json"] = all(
            x["emulator_stats"]["rows"] == y["emulator_stats"]["rows"] for x, y in zip(avro, json_))
    if "no_partial" in out["runs"]:
        full = out["runs"]["no_partial"]["daemon"]
        for mode, r in out["runs"].items():
            if mode != "no_partial":
                out["figures"][mode]["ratio_vs_no_partial"] = ratio_summary(r["daemon"], full)
    return out

