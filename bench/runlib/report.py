"""The Markdown report: machine and versions, the figures table, configuration and method."""
import glob
import os
import platform
import re
import socket
import subprocess

from .proc import KAFKA_LIB, ROOT
from .settings import BUDGET_VARIANT, SLOW_ANSWER_MS, daemon_settings_text, settings_label
from .stats import med
from .table import fmt_num, target_basis_notes
from .wide import wide_markdown
from .variants import PLAIN_1K_NOTE_CHARS, TOAST_MIX, TOAST_PARTIAL_PERCENT, VARIANTS_ORDER


def proc_line(path, prefix):
    """The text after 'prefix ... :' of the first such line in a /proc file, or None."""
    with open(path) as f:
        for line in f:
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    return None


def machine_info():
    model = proc_line("/proc/cpuinfo", "model name") or "?"
    mem_kib = proc_line("/proc/meminfo", "MemTotal")
    mem = f"{int(mem_kib.split()[0]) / 1024 / 1024:.1f} GiB" if mem_kib else "?"
    return {"cpu_model": model, "cores": os.cpu_count(), "memory": mem, "kernel": platform.release(),
            "hostname": socket.gethostname()}


def versions(broker_version):
    def cmd(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"
    kcat = subprocess.run(["kcat", "-V"], capture_output=True, text=True).stdout
    m = re.search(r"Version ([^\s]+)", kcat)
    lib = re.search(r"librdkafka ([0-9.]+)", kcat)
    jars = glob.glob(os.path.join(KAFKA_LIB, "kafka-server-*.jar"))
    return {
        "commit": cmd(["git", "-C", ROOT, "rev-parse", "HEAD"]),
        "worktree_dirty": bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                              capture_output=True, text=True).stdout.strip()),
        "gxx": cmd(["g++", "--version"]),
        "librdkafka": cmd(["pkg-config", "--modversion", "rdkafka"]),
        "kafka": broker_version or (re.search(r"kafka-server-(.+)\.jar", jars[0]).group(1) if jars else "?"),
        "java": subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0],
        "kcat": (m.group(1) if m else "?") + (f" (librdkafka {lib.group(1)})" if lib else ""),
        "python": platform.python_version(),
    }



def stream_text(p, partial=""):
    """A produced stream as the Configuration section states it; partial: text after the tombstone count."""
    return (f"{p['records']:,} records ({p['tombstones']:,} tombstones{partial}), {p['tables']} tables, "
            f"{p['topics']} topics x {p['partitions']} partitions, avg value {p['avg_value_bytes']:.0f} B, "
            f"{(p['key_bytes'] + p['value_bytes']) / 1e6:.0f} MB key+value")


def write_markdown(path, res, table):
    m, v, c = res["machine"], res["versions"], res["config"]
    L = [f"# cdc2doris benchmark report — {res['date']} — {v['commit'][:10]}", ""]
    L.append(f"Command: `{res['command']}` ({'quick' if c['quick'] else 'full'} run, {c['reps']} repetitions; "
             f"median and min–max over repetitions; ± is half the spread relative to the median). "
             f"Total time {res['elapsed_s'] / 60:.1f} min.")
    L.append("")
    L.append("## Machine and versions")
    L.append(f"- CPU: {m['cpu_model']}, {m['cores']} cores, {m['memory']} RAM, kernel {m['kernel']}")
    L.append(f"- Load average (1/5/15 min) at start: {res['loadavg_start']}, at end: {res['loadavg_end']} "
             "(the machine is shared: other engineers were building and testing during the run)")
    L.append(f"- Commit {v['commit']}{' (tracked files modified)' if v['worktree_dirty'] else ''}; {v['gxx']}; "
             f"librdkafka {v['librdkafka']}; Kafka {v['kafka']} ({v['java']}); kcat {v['kcat']}; "
             f"daemon binary built {v.get('daemon_binary_mtime', '?')}")
    if v.get("note"):
        L.append(f"- Note: {v['note']}")
    L.append("")
    L.append("## Figures")
    L.append("")
    L.append("| figure | median | min–max | baseline (median) | ratio | target |")
    L.append("|---|---:|---:|---|---:|---|")
    for r in table:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
        L.append(f"| {r['figure']} | {fmt_num(r['median'], 2 if r['unit'] == 's' else 1)} {r['unit']} | "
                 f"{r['_spread']} | {r['baseline']} | {ratio} | {r['target']} |")
    L.append("")
    notes = target_basis_notes(res)
    if notes:
        L.extend(notes)
        L.append("")
    L.append("## Configuration")
    for k, val in c.items():
        if k != "method":
            L.append(f"- `{k}`: {val}")
    for key in ("pipeline", "pipeline1k", "pipeline1k_budget", "pipeline1k_slow"):
        if key in res:
            L.append(f"- {key} data: {stream_text(res[key]['produced'])}")
    for key in VARIANTS_ORDER:
        for sname, p in res.get(key, {}).get("produced", {}).items():
            partial = (f", {p.get('partial_rows', 0):,} partial rows ({100 * p.get('partial_rows', 0) / p['records']:.1f}%), "
                       f"{p.get('key_only_deletes', 0):,} key-only deletes") if p.get("partial_rows") else ""
            L.append(f"- {key} stream `{sname}` (`bench-kafka produce {' '.join(p.get('produce_args', []))}`): "
                     f"{stream_text(p, partial)}")
    if res.get("memory"):
        L.append("")
        L.append("## Memory against prefetch and memory cap")
        L.append("")
        L.append("| stream | queued.max.messages.kbytes | delivery.memory_cap | fetch.max.bytes | records/s (median) | "
                 "peak RSS MiB (median) | CPU-s per million | runs |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for pt in res["memory"]["points"]:
            f = pt["figures"]
            stream = {"e2e8": "8 tables", "schema": "schema envelope"}.get(pt.get("stream", "e2e8"), pt.get("stream"))
            L.append(f"| {stream} | {pt['kbytes']} | {pt['memory_cap']} | {pt.get('fetch_max_bytes', 'default')} | "
                     f"{fmt_num(med(f['records_per_s']))} | "
                     f"{fmt_num(med(f['peak_rss_mib']))} | {fmt_num(med(f['cpu_s_per_m']), 2)} | {f['records_per_s']['n']} |")
    if res.get("freshness"):
        L.extend(freshness_markdown(res["freshness"]))
    if res.get("wide"):
        L.extend(wide_markdown(res["wide"]))
    L.append("")
    L.append("## Method")
    L.extend(c.get("method", []))
    L.append("")
    if res.get("errors"):
        L.append("## Errors")
        for e in res["errors"]:
            L.append(f"- {e}")
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def freshness_markdown(fr):
    """The freshness table (issue 36 item 2): per epoch interval and rate, visible - source time per row."""
    mr = fr["max_rate_run"]
    L = ["", "## Freshness (visible in Doris − source.ts_ms, per row)", "",
         f"Maximum rate of the daemon on this stream and setup: {fmt_num(fr['max_rate'])} records/s ('consuming' "
         f"rate of a {mr['records_consumed_total'] or 0:,.0f}-record backlog, epoch interval of the run "
         f"configuration). Each paced run produces for {fr['seconds']:g} s. One run per row"
         + (f" ({fr['reps']} repetitions of each interval and rate)." if fr.get("reps", 1) > 1 else "."), "",
         "| epoch interval | share of max | records/s asked | achieved | rows | p50 s | p99 s | max s | target p99 | "
         "/status gauge − truth min / p50 / p99 / max s (samples) |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in fr["runs"]:
        f, g = r["freshness_s"], r.get("gauge_minus_truth_s")
        tgt = "" if r.get("target_p99_s") is None else f"≤ {r['target_p99_s']:g} s " + ("✅" if r["target_met"] else "❌")
        gtxt = (f"{g['min']:+.3f} / {g['p50']:+.3f} / {g['p99']:+.3f} / {g['max']:+.3f} ({g['n']}"
                + (f", {r['gauge_behind_share']:.0%} behind" if r.get("gauge_behind_share") is not None else "") + ")"
                if g else "no samples")
        L.append(f"| {r['epoch_interval']} | {r['share_of_max']:.0%} | {fmt_num(r['rate_target'])} | "
                 f"{fmt_num(r['rate_achieved'])} | {f['n']:,} | {f['p50']:.3f} | {f['p99']:.3f} | {f['max']:.3f} | "
                 f"{tgt} | {gtxt} |")
    appended = [r for r in fr["runs"] if r.get("freshness_from_append_s")]
    if appended:
        L += ["", "The same rows measured from the broker's append time (topics with "
              "`message.timestamp.type=LogAppendTime`; each row's Kafka timestamp read back by its partition and "
              "offset): visible − append time leaves out the time a record took to reach Kafka, which append − "
              "source time shows.", "",
              "| epoch interval | share of max | run | rows | visible − append p50 / p99 / max s | target p99 | "
              "visible − source p50 / p99 / max s | append − source p50 / p99 / max s |",
              "|---|---:|---:|---:|---|---|---|---|"]
        for r in appended:
            a, f, g = r["freshness_from_append_s"], r["freshness_s"], r["append_minus_source_s"]
            tgt = ("" if r.get("target_p99_s") is None
                   else f"≤ {r['target_p99_s']:g} s " + ("✅" if r["target_met_from_append"] else "❌"))
            L.append(f"| {r['epoch_interval']} | {r['share_of_max']:.0%} | {r.get('rep', 1)} | {a['n']:,} | "
                     f"{a['p50']:.3f} / {a['p99']:.3f} / {a['max']:.3f} | {tgt} | "
                     f"{f['p50']:.3f} / {f['p99']:.3f} / {f['max']:.3f} | {g['p50']:.3f} / {g['p99']:.3f} / {g['max']:.3f} |")
    parts = [r for r in fr["runs"] if r.get("txn_newest_row_age_s")]
    if parts:
        L += ["", "Where the time goes, per txn (one table's part of an epoch): the age of its newest row when the txn "
              "became visible (reading it, the rest of the epoch, closing and committing), and the source-time span "
              "of its rows (how much of the stream one epoch holds).", "",
              "| epoch interval | share of max | txns | newest row age p50 / p99 / max s | source span p50 / p99 / max s "
              "| producer send → broker ack p50 / p99 / max ms |",
              "|---|---:|---:|---|---|---|"]
        for r in parts:
            a, sp, ack = r["txn_newest_row_age_s"], r["txn_source_span_s"], r.get("producer_ack_ms")
            ack_txt = f"{ack['p50']:.0f} / {ack['p99']:.0f} / {ack['max']:.0f}" if ack else "–"
            L.append(f"| {r['epoch_interval']} | {r['share_of_max']:.0%} | {a['n']:,} | {a['p50']:.3f} / {a['p99']:.3f} / "
                     f"{a['max']:.3f} | {sp['p50']:.3f} / {sp['p99']:.3f} / {sp['max']:.3f} | {ack_txt} |")
    return L


def method_text(cfg, defaults):
    return [
        "- End to end: records are produced once per variant with the shared generator (tools/workload) by "
        "`bench-kafka produce` into a real Kafka broker (KRaft, one JVM, properties as tools/fixtures/kafka_broker.cpp, "
        "1 GiB heap). After producing, the topics are read once by `bench-kafka count`, not counted, so that no "
        "measured run pays for the broker's JIT compiling its fetch path (before this, the first repetition of a "
        "section was 15-20% slower). Each repetition starts a fresh Doris emulator in `--count-only --no-fsync` "
        "mode (bodies are "
        "parsed for row counts and 2PC is real, rows are not stored, so the emulator is not what is measured), "
        "creates the raw-column UNIQUE KEY tables, and starts `cdc2doris run` with a fresh state dir and consumer "
        "group. The wall time runs from process start until `bench-kafka wait-committed` sees the group's committed "
        "offsets equal the high watermarks of every partition (polled every 100 ms). records/s and MB/s = produced "
        "records / key+value bytes over that wall time. 'consuming' = records / (time the last record was counted "
        "by the daemon's records_consumed_total, polled every 0.25 s, minus the time of partition assignment): the "
        "pipeline's rate without the wait for the last epoch to end and commit. CPU = utime+stime from "
        "/proc/PID/stat and peak RSS = VmHWM "
        "at that moment; minor page faults from the same stat line. Broker and emulator CPU = their utime+stime over "
        "the same interval (they share the machine's cores with the daemon); machine busy = the non-idle share of all "
        "cores from /proc/stat over it (1.0 = every core busy, whatever ran). Pipeline thread = the daemon's main "
        "thread (it polls, decodes and loads), its utime+stime from /proc/PID/task/PID/stat at that moment; busy = "
        "that over the time from partition assignment until everything was committed (1.0 = on a core throughout); "
        "the JSON has every thread's CPU by name (the daemon names its threads); its waits and preemptions = "
        "voluntary_ctxt_switches and nonvoluntary_ctxt_switches from /proc/PID/task/PID/status at that moment, per "
        "million records. "
        "Epoch commit p50/p99 come from the daemon's `cdc2doris_epoch_commit_duration_seconds` "
        "histogram (linear interpolation inside the bucket, so they are only as fine as the buckets 5 ms..30 s). "
        f"Daemon settings of the 8-table run: {daemon_settings_text(cfg, defaults, {})}.",
        "- Baselines, run right after each daemon repetition against the same topics: `bench-kafka count` (librdkafka "
        "consumer, assign from the beginning, counts records and bytes up to the high watermarks, no group commit) and "
        "`kcat -C -e -o beginning -q` to /dev/null, one invocation per topic, walls summed (kcat reads one topic per "
        "invocation in this mode). Both are timed from process start to exit; CPU and max RSS from wait4().",
        "- 1,000 tables: `--tables 1000` of the same generator, the records of table i go to topic `t{i % 8}` "
        "(8 topics x 4 partitions, same keys and partition function). cdc2doris routes by the record's `source` "
        "db/table (default `{db}.{table}`), so it writes 1,000 target tables; this avoids 4,000 Kafka partitions on a "
        "2-core machine. Daemon settings of the 1,000-table run: "
        f"{daemon_settings_text(cfg, defaults, {})}; of its variant '{settings_label(BUDGET_VARIANT)}': "
        f"{daemon_settings_text(cfg, defaults, BUDGET_VARIANT)}. With a budget below the number of active tables, "
        "epochs end early. 'Doris answering after N ms': the same run and settings, the emulator holding each Stream "
        f"Load answer {SLOW_ANSWER_MS} ms (fault `delay_response`, count -1), as a BE that flushes and pre-commits "
        "before it answers; the count-only emulator otherwise answers at once and hides round trips per load.",
        "- Recovery: clean = fresh state dir and group, 8 tables; 1,000 tables = restart on the state left by the last "
        "1,000-table run after its graceful shutdown (all epochs committed, so the lingering set is empty, but every "
        "one of the 1,000 tables is probed). Timed from process start to the 'consuming; epoch N open' log line "
        "and to /readyz answering 200 (polled every 10 ms).",
        "- Variants (schema, plain1k, toast): measured exactly like the 8-table run (same daemon settings, fresh "
        "emulator, state and group per repetition), each on its own topics produced once by the same generator: "
        "`schema` = Debezium's default JsonConverter output (`{\"schema\",\"payload\"}` on key and value, "
        "~4.5 KB values) into typed tables (the generator's DDL), and its `avro` mode: the same generator records "
        "re-encoded as Debezium's Avro converter writes them (`bench-kafka produce --format avro`, Confluent "
        "framing, ~270 B values) on their own topics, their schemas registered in a real Apicurio Registry "
        "(tests/registry, started by bench/run) and read with `decoding.format: avro` through its Confluent API; "
        "run right after the JSON mode in each repetition, with no ceilings (bench-ceiling decodes JSON only); "
        "`plain1k` = the plain stream with a longer "
        f"VARCHAR payload (`--note-chars {PLAIN_1K_NOTE_CHARS}`, ~1 KB values); `toast` = an update-heavy mix "
        f"(`--mix {TOAST_MIX}`) where every table behaves like a PostgreSQL table with a TOASTed column: "
        f"{TOAST_PARTIAL_PERCENT}% of updates send Debezium's placeholder for `note` (a partial row) and deletes "
        "carry no before-image (key-only deletes), run in the three modes of docs/architecture.md 'Column sets': "
        "flexible partial updates (tables with enable_unique_key_skip_bitmap_column), a sequence column filled "
        "from the source position (`routing.tables.*.sequence_col`), and a load per run of equal column sets "
        "(plain tables); plus the same generator and mix without partial rows. After each repetition's daemon "
        "runs, `bench-kafka count` reads each variant stream once (the ratio is per repetition, daemon vs bare "
        "consumer on the same topics). CPU-s per million = CPU seconds / records. Epochs per minute = committed epochs "
        "(commit histogram count) over the time from partition assignment until everything was committed; the "
        "interval-driven count is 60 s / delivery.epoch_interval. The load-per-run mode reads a tenth of the "
        "TOAST stream (its first records, same generator and seed): it ends an epoch on the load bound every few "
        "hundred records. Early ends = the sum of "
        "`cdc2doris_epochs_ended_early_total` except reason `caught up` (the end of the backlog, once per run). "
        "Loads per table per epoch = committed txns in the emulator grouped "
        "by table and by the epoch in their label (part n of an epoch has label `..._{epoch}-{n}`). The schema "
        "variant's CPU target is 1.5 x bench-decode's CPU per record for the schema format (same generator, seed "
        "and table count) from the decode section of the same report. The plain 1 KB variant's ratio target is set "
        "next to bench-decode on that variant's records (`--format plain-raw --note-chars "
        f"{PLAIN_1K_NOTE_CHARS}`: typed by the raw columns of the e2e tables, as the daemon decodes them), run "
        "once per repetition of the decode section: the pipeline thread decodes every record, so it cannot go "
        "faster than that figure.",
        "- Ceilings (issue 36): after each repetition's bare consumer, `bench-ceiling` runs twice per variant stream "
        "on the YAML the daemon gets (same DDL, fresh emulator and consumer group): it builds the daemon's own "
        "Kafka source from that config (kafka::make_kafka_source on Config::source_config(): the daemon's effective "
        "librdkafka properties, forced settings and defaults included, and its backlog waker; the JSON keeps the "
        "property line the source logged), joins the group, polls with delivery.poll_timeout and "
        "delivery.poll_max_messages and throws the records away ('the daemon's consumer'); with `--decode` every "
        "record also goes through decode::Decoder built as the pipeline builds it (decoding options, routing's "
        "per-table settings, Doris column types read from the emulator) and the rows are thrown away "
        "('decode-and-discard'). Timed from process start to the last record by its own clock (like the daemon's "
        "wall, which also ends at the commit of the last epoch); CPU and max RSS from wait4(). Ratios are per "
        "repetition: the daemon's records/s over the ceiling's, the daemon's CPU-s per million records over the "
        "ceiling's; 'consuming' = the daemon's consuming rate over the ceiling's rate from assignment to the last "
        "record.",
        "- Freshness: insert-only plain records (`--mix 1,0,0,0`, 8 tables x 4 partitions) into DUPLICATE KEY "
        "tables of a storing emulator (not count-only), `decoding.extra_columns.source_ts` writing source.ts_ms "
        "into a column. The maximum rate is the daemon's 'consuming' rate on a pre-produced backlog of "
        f"{cfg.records_freshness:,} such records. Each paced run: fresh topics, emulator, state and group; the daemon "
        "started and assigned its partitions first, then `bench-kafka produce --rate R` writes "
        f"R x {cfg.freshness_seconds:g} s records with every ts_ms (source.ts_ms among them) = the wall clock when "
        "each is handed to librdkafka, before its linger.ms 20 batching (the generator alone makes ~50k records/s "
        "here, so the first 65,536 records are generated up front and sent round robin). Visible time per row: the emulator's `visible_unix_ms` of its txn "
        "(a DUPLICATE KEY table keeps rows in the order txns became visible; rows are matched to txns by count). "
        "The /status gauge is sampled every 0.25 s while the producer writes (from 2 s after its start); for each "
        "sample and table, truth = sample time − the newest source.ts_ms among the rows visible by then (the "
        "gauge's definition applied to the emulator), and gauge − truth is reported. The paced runs' topics are "
        "created with `message.timestamp.type=LogAppendTime` and every row also gets its Kafka partition and "
        "offset (`routing.computed_columns`); after the run `bench-kafka timestamps` reads every record's Kafka "
        "timestamp back (all of them must be LogAppendTime) and visible − append time is reported per row next to "
        "visible − source time. Same host and clock for all.",
        f"- Wide: `--wide-tables` ({cfg.wide_tables:,}) tables fed from `--wide-partitions` ({cfg.wide_partitions:,}) "
        "partitions in topics of 4 (table i in topic t{i % topics}), a backlog of `--wide-rounds` "
        f"({cfg.wide_rounds}) x 8 records per table, one daemon run with its defaults against a count-only emulator "
        "holding the tables (created before the daemon starts). Start-up to the first commit = process start to "
        "the first /metrics sample (every 0.25 s) whose commit histogram counts an epoch. The group's commits are "
        "read with `bench-kafka commit-size` every 0.5 s during the run and once after it: partitions with an "
        "offset and their metadata bytes (an epoch's commit point writes pending metadata that the commit after "
        "Doris' replaces with a short marker, so the largest seen is a lower bound of the commit point's size).",
        "- Memory: the 8-table stream of the pipeline section (and, with `--memory-streams e2e8,schema`, the "
        "schema-envelope stream of the variants, typed tables), one daemon run per stream, setting and repetition "
        "(settings interleaved within a repetition), with `kafka.properties.queued.max.messages.kbytes`, "
        "`delivery.memory_cap` and `kafka.properties.fetch.max.bytes` as listed ('default' = the daemon's own); "
        "peak RSS = VmHWM when the group committed everything.",
        "- decode / doris / emulator: the existing bench programs (bench/decode, bench/doris, bench/emulator), their "
        "JSON (or key=value) output folded in unchanged, one process per repetition. bench-decode's `schema-avro` "
        "(issue 34): the `schema` variant's records re-encoded as Debezium's Avro converter writes them (Avro "
        "schemas after AvroData's conventions, Confluent framing, bench/decode/connect_avro.cpp) and read as "
        "`decoding.format: avro` reads them: unframe, the schema id's core/avro ConnectBridge (writer schemas "
        "cached before the clock starts; the registry is asked once per id, never per record), then the same "
        "Decoder; every record's rows are compared with the JSON path's first and must be equal JSON values. CPU per "
        "record is the decoding thread's CPU time (CLOCK_THREAD_CPUTIME_ID); the Avro/JSON ratio is per "
        "repetition.",
    ]
