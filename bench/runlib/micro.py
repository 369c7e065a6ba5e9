"""The micro-benchmark sections (decode, doris, emulator): one process of an existing bench
program per repetition, its output folded in unchanged."""
from .proc import BIN, json_line, log, run
from .stats import summary
from .variants import AVRO_DECODE, PLAIN_1K_DECODE, PLAIN_1K_NOTE_CHARS


def repeat(cfg, name, argv, timeout, parse, describe):
    """Runs argv once per repetition; parse(stdout) is the repetition's record, describe(record, stdout) its log."""
    reps = []
    for i in range(cfg.reps):
        out, _ = run(argv, timeout=timeout)
        reps.append(parse(out))
        log(f"{name} rep {i + 1}: {describe(reps[-1], out)}")
    return reps


def section_decode(cfg):
    def decode_reps(name, extra, describe):
        argv = [BIN["decode"], "--records", str(cfg.decode_records), "--seconds", str(cfg.decode_seconds), *extra]
        return repeat(cfg, name, argv, 600, lambda out: json_line(out, "BENCH_JSON"), describe)

    reps = decode_reps("decode", [], lambda r, _: ", ".join(f"{x['format']} {x['mb_per_s']} MB/s" for x in r["results"]))
    plain_1k_args = ["--format", "plain-raw", "--note-chars", str(PLAIN_1K_NOTE_CHARS)]
    reps_1k = decode_reps("decode plain 1 KB", plain_1k_args,
                          lambda r, _: ", ".join(f"{x['records_per_s']:.0f} records/s" for x in r["results"]))
    for rep, rep_1k in zip(reps, reps_1k):
        rep["results"] += [dict(r, format=PLAIN_1K_DECODE) for r in rep_1k["results"]]
    figs = {}
    for fmt in ("plain", "plain-untyped", "plain-doris", "plain-doris+transforms", "schema", "schema+transforms",
                "flattened", PLAIN_1K_DECODE, AVRO_DECODE):
        rows = [next((r for r in rep["results"] if r["format"] == fmt), None) for rep in reps]
        if None in rows:  # a bench-decode of an older revision (bench/ab) has no such variant
            continue
        figs[fmt] = {k: summary([r[k] for r in rows]) for k in
                     ("mb_per_s", "records_per_s", "baseline_mb_per_s", "ratio_to_baseline", "avg_record_bytes",
                      "cpu_ns_per_record", "bridge_cpu_ns_per_record", "json_avg_record_bytes")
                     if all(k in r for r in rows)}
    if AVRO_DECODE in figs and "cpu_ns_per_record" in figs.get("schema", {}):
        # Issue 34 item 4: Avro's decode CPU per record over JSON's on the same records, per repetition (the
        # two ran in the same process, one after the other).
        pairs = [(next(r for r in rep["results"] if r["format"] == AVRO_DECODE),
                  next(r for r in rep["results"] if r["format"] == "schema")) for rep in reps]
        figs[AVRO_DECODE]["cpu_ratio_vs_schema"] = summary([a["cpu_ns_per_record"] / j["cpu_ns_per_record"]
                                                            for a, j in pairs])
    return {"args": {"records": cfg.decode_records, "seconds": cfg.decode_seconds,
                     PLAIN_1K_DECODE: " ".join(plain_1k_args)},
            "runs": reps, "figures": figs}


def section_doris(cfg):
    reps = repeat(cfg, "doris-load", [BIN["doris"], "--seconds", str(cfg.doris_seconds), "--streams", "1000"], 900,
                  json_line, lambda r, _: f"{r['one_stream_mb_s']} MB/s, {r['rss_per_stream_kib']} KiB/stream")
    keys = ("one_stream_mb_s", "one_stream_gzip_mb_s", "sink_mb_s", "sink_gzip_mb_s", "rss_per_stream_kib",
            "client_cpu_s_per_gb", "finish_all_s")
    return {"args": {"seconds": cfg.doris_seconds, "streams": 1000, "count_only": True}, "runs": reps,
            "figures": {k: summary([r[k] for r in reps]) for k in keys}}


def parse_key_values(out):
    return {k: float(v) for k, v in (w.split("=", 1) for w in out.split() if "=" in w)}


def section_emulator(cfg):
    reps = repeat(cfg, "emulator", [BIN["emu_ingest"], str(cfg.emu_rows), "3"], 900, parse_key_values,
                  lambda _, out: out.strip())
    return {"args": {"rows": cfg.emu_rows, "loads": 3, "table": "UNIQUE KEY, ~500-byte JSON rows"}, "runs": reps,
            "figures": {k: summary([r[k] for r in reps]) for k in ("in_process_ingest_MBps", "loopback_http_ingest_MBps",
                                                                     "avg_row_bytes")}}
