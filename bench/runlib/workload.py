"""What the end-to-end sections feed the daemon: the streams produced into Kafka by the
shared generator (bench-kafka produce) and the Doris tables they load into."""
from . import proc
from .fixtures import Emulator
from .proc import json_line, kafka_tool, log, run, wait_committed_argv


class Env:
    """What the end-to-end sections share: the broker, the streams produced so far and the
    1,000-table state the recovery section restarts on."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.broker = None
        self.produced = {}
        self.state_1k = None
        self.emu_1k = None
        self.info_1k = None


def raw_ddl(db, table, seq=False, properties="", extra_columns="", model="UNIQUE"):
    # The raw columns of plain (schemaless) records, as tests/pipeline/e2e_harness.cpp raw_ddl().
    return (f"CREATE TABLE `{db}`.`{table}` (`id` BIGINT NOT NULL, `customer_id` BIGINT NULL, `amount` STRING NULL, "
            "`quantity` INT NULL, `status` VARCHAR(16) NULL, `created_at` BIGINT NULL, `updated_at` VARCHAR(64) NULL, "
            "`ship_date` INT NULL, `is_gift` SMALLINT NULL, `note` STRING NULL, `tags` STRING NULL"
            + (", `seq` BIGINT NULL" if seq else "") + extra_columns + ") "
            f"{model} KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\"" + properties + ")")


def typed_ddl(db, table):
    # Records with the schema envelope decode to typed values: the generator's own DDL
    # (tools/workload Generator::create_table_sql).
    return (f"CREATE TABLE `{db}`.`{table}` (`id` BIGINT NOT NULL, `customer_id` BIGINT NULL, "
            "`amount` DECIMAL(18,4) NULL, `quantity` INT NULL, `status` VARCHAR(16) NULL, `created_at` DATETIME(6) NULL, "
            "`updated_at` DATETIME(6) NULL, `ship_date` DATE NULL, `is_gift` SMALLINT NULL, `note` VARCHAR(2048) NULL, "
            "`tags` JSON NULL) UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1 "
            "PROPERTIES (\"replication_num\" = \"1\", \"enable_unique_key_merge_on_write\" = \"true\")")


def flexible_ddl(db, table):
    # Doris 3.1+ flexible partial updates (issue 14 item 1).
    return raw_ddl(db, table, properties=", \"enable_unique_key_merge_on_write\" = \"true\", "
                                         "\"enable_unique_key_skip_bitmap_column\" = \"true\"")


def sequence_ddl(db, table):
    return raw_ddl(db, table, seq=True, properties=", \"function_column.sequence_type\" = \"BIGINT\"")


def sequence_routing(tables):
    return "routing:\n  tables:\n" + "".join(
        f"    shop.orders_{i}:\n      sequence_col: seq\n      sequence_from_source_position: true\n"
        for i in range(tables))


class RunSpec:
    """What a daemon run of a variant sets up beyond the plain 8-table run."""

    def __init__(self, ddl=None, yaml="", delivery="", kafka_properties="", count_only=True):
        self.ddl, self.yaml, self.delivery, self.kafka_properties = ddl, yaml, delivery, kafka_properties
        # False: the emulator stores the rows (the freshness section reads them back).
        self.count_only = count_only



def produce_argv(broker, name, records, tables, topics, seed=2024, extra_args=()):
    """extra_args: further `bench-kafka produce` options (--format, --note-chars, --mix, --toast-*)."""
    return kafka_tool(broker, "produce", "--records", str(records), "--tables", str(tables), "--partitions", "4",
                      "--topics", str(topics), "--server", name, "--db", "shop", "--seed", str(seed),
                      "--format", "plain", *extra_args)  # a later --format wins


def produce(env, name, records, tables, topics, extra_args=(), warm=True):
    out, _ = run(produce_argv(env.broker, name, records, tables, topics, extra_args=extra_args), timeout=3600)
    info = json_line(out)
    info["bytes"] = info["key_bytes"] + info["value_bytes"]
    info["topic_regex"] = f"^{name}\\\\.shop\\\\..*"   # YAML-escaped for the daemon config
    info["regex"] = f"^{name}\\.shop\\..*"
    info["server"] = name
    info["produce_args"] = ["--format", "plain", *extra_args]
    env.produced[name] = info
    if not warm:
        return info
    # Warm-up: the first group request on a fresh broker creates __consumer_offsets
    # (~3 s measured); do it here so the first measured repetition does not pay it.
    run(wait_committed_argv(env.broker, f"warmup-{name}", info["regex"], 3), timeout=120, check=False)
    # Warm-up read, not counted: the broker JIT-compiles its fetch path while the
    # first consumer of its run reads (C2 compiler threads took ~16% of the machine
    # in a profile), and that was always the daemon's first repetition: 15-20%
    # slower than the next ones, against a baseline that ran on a warm broker.
    run(kafka_tool(env.broker, "count", "--topic-regex", info["regex"]), timeout=600)
    log(f"produced {name}: {info}")
    return info


def make_emulator(name, tables, ddl=None, answer_delay_ms=0, count_only=True):
    emu = Emulator(proc.TMP, name, count_only=count_only)
    emu.sql("", "CREATE DATABASE shop")
    for i in range(tables):
        emu.sql("shop", (ddl or raw_ddl)("shop", f"orders_{i}"))
    if answer_delay_ms:
        emu.fault({"type": "delay_response", "ms": answer_delay_ms, "count": -1})
    return emu
