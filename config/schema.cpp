#include "config/schema.hpp"

#include <array>
#include <string>

namespace cdc2doris::config {

namespace {
// Keep grouped by section; docs/configuration.md lists them in this order.
constexpr std::array kKeys = std::to_array<KeySpec>({
    // ---------------------------------------------------------------- kafka
    {"kafka.bootstrap_servers", "string", "(required)", "Kafka bootstrap servers, `host:port[,host:port...]`."},
    {"kafka.group_id", "string", "cdc2doris",
     "Consumer group. Offsets are committed to it after every epoch so standard lag tools work."},
    {"kafka.instance_id", "string", "(the host name)",
     "This instance's stable identity in the consumer group: `group.instance.id` (static membership) and "
     "`{instance_id}` in `delivery.label_prefix`. Unique per live instance of a group: a second live instance "
     "with the same id fences the first, which stops with an error. A StatefulSet pod name fits."},
    {"kafka.static_membership", "boolean", "true",
     "Join with `group.instance.id` = `instance_id`: a restarted instance gets its partitions back without a "
     "rebalance; a stopped one keeps them until `session.timeout.ms` (see docs/operations.md)."},
    {"kafka.on_offset_gap", "enum(fail|skip)", "fail",
     "When the next offset to read was deleted (retention, DeleteRecords) before it was loaded: `fail` stops the "
     "daemon (exit 1) naming the partition, the offset, the log start and the remedies; `skip` continues at the "
     "log start (logged, `cdc2doris_offset_gaps_skipped_total`). Global, for every topic. Never skips inside a "
     "replay. A partition nobody has an offset for still starts per `auto.offset.reset` (default earliest)."},
    {"kafka.on_group_offsets_lost", "enum(fail|stored|beginning)", "fail",
     "A partition the consumer group has no offset for while this instance's state has one inside the log: the "
     "topic was deleted and re-created, or the group's offsets expired, or `group_id` changed (Kafka cannot tell "
     "which). `fail` stops the daemon (exit 1) naming the partition; `stored` continues at the stored offset "
     "(expiry, rename); `beginning` reads the partition from its log start (re-created topic). A stored offset "
     "above the high watermark is always a re-created topic and is read from its start (logged, "
     "`cdc2doris_topics_recreated_total`). Set it for one restart, then remove it."},
    {"kafka.topics", "list<string>", "(required unless topic_regex)", "Topics to consume."},
    {"kafka.topic_regex", "string", "",
     "A regex subscription (POSIX extended, as librdkafka compiles it), e.g. `^dbserver1\\..*`."},
    {"kafka.properties", "map<string,string>", "{}",
     "librdkafka properties passed through verbatim (SASL/SSL, fetch sizes...). Values of keys holding secrets "
     "(`sasl.password`, `ssl.key.password`, `sasl.jaas.config`, ...) are redacted everywhere. "
     "`enable.auto.commit` must stay false. Unless given here, cdc2doris sets `queued.max.messages.kbytes` 32768, "
     "`queued.min.messages` 10000000 and `fetch.max.bytes` 8388608 (full catch-up speed within ~150 MiB RSS, see "
     "docs/kafka-source.md). librdkafka itself judges names, values and combinations when the "
     "configuration is loaded; files they name (`ssl.ca.location`, ...) are read by `run` and `check --connect`. "
     "Tested examples for TLS, SASL/SCRAM and PLAIN over TLS, mutual TLS and Kerberos (GSSAPI), and the errors "
     "Kafka's refusals give: docs/operations.md \"Security\"."},
    // ---------------------------------------------------------------- doris
    {"doris.fe", "list<string>", "(required)",
     "FE HTTP addresses: `host:port`, `http://host:port` or `https://host:port`. Several give failover. Credentials "
     "in a URL are never printed."},
    {"doris.user", "string", "root", "Doris user for Basic auth."},
    {"doris.password", "string", "\"\"", "Doris password. Prefer `password_file` or `${ENV}`.", true},
    {"doris.password_file", "string", "", "File whose content (trailing newline stripped) is the password."},
    {"doris.route", "enum(fe|direct)", "fe",
     "`fe`: PUT to an FE and follow its redirect to a BE; `direct`: PUT to BEs (`backends`, else discovered)."},
    {"doris.backends", "list<string>", "[]", "Static BE list `host:port` for `route: direct`."},
    {"doris.address_rewrite", "map<string,string>", "{}",
     "BE address as Doris reports it (`host:port` or `host`) -> address reachable from the daemon "
     "(Kubernetes, Docker)."},
    {"doris.precommit_timeout", "duration", "1h",
     "Doris' FE `stream_load_default_precommit_timeout_second` (3600): how long Doris keeps a pre-committed txn "
     "before aborting it. Within it (less 5 minutes for clock skew) a label Doris no longer knows was committed and "
     "forgotten (`label_num_threshold`), so its epoch is not re-read. Never set it above Doris' value.",
     false, at_least(1000)},
    {"doris.tls.ca_file", "string", "", "PEM CA bundle for https FEs and the https BEs they redirect to (default: system CAs)."},
    {"doris.tls.verify", "boolean", "true", "Verify the FE certificate."},
    {"doris.tls.verify_hostname", "boolean", "true", "Check the certificate's name against the host."},
    {"doris.load_headers", "map<string,string>", "{}",
     "Stream Load headers for every table (e.g. `max_filter_ratio`). Full-row loads send `strict_mode: true` "
     "unless this or a table's `headers` sets it (a value Doris cannot convert then fails the load instead of "
     "becoming NULL)."},
    {"doris.gzip", "boolean", "false", "Send load bodies gzip-compressed (`compress_type: gz`)."},
    {"doris.buffer_bytes", "size", "1MiB", "Per-table load buffer; writers block when it is full.", false, at_least(1)},
    {"doris.io_threads", "integer", "1", "Threads running the HTTP client.", false, between(1, 256)},
    {"doris.connect_timeout", "duration", "5s", "TCP/TLS connect timeout.", false, at_least(1)},
    {"doris.request_timeout", "duration", "30s", "Timeout of one 2PC/metadata request.", false, at_least(1)},
    {"doris.load_timeout", "duration", "300s", "Wait for Doris' answer after a load body ended.", false, at_least(1)},
    {"doris.max_attempts", "integer", "4", "Attempts for idempotent requests (2PC, probes, metadata).", false,
     between(1, 100)},
    // ---------------------------------------------------------------- routing
    {"routing.include", "list<string>", "[] (all)", "Regexes over the source `db.table`; only matches are loaded."},
    {"routing.exclude", "list<string>", "[]", "Regexes over the source `db.table` never loaded."},
    {"routing.target", "string", "{db}.{table}",
     "Target template `db.table` with `{db}`, `{schema}`, `{table}`, e.g. `ods_{db}.{table}`."},
    {"routing.rules", "list<map>", "[]",
     "Ordered many-to-one rules; the first whose `match` regex matches the source `db.table` wins."},
    {"routing.rules.*.match", "string", "(required)", "Regex over the source `db.table`."},
    {"routing.rules.*.target", "string", "(required)",
     "Target `db.table` template; `$1`..`$9` are the regex groups, `{db}` etc. as above."},
    {"routing.map", "map<string,string>", "{}", "Explicit source `db.table` -> target `db.table`."},
    {"routing.auto_create", "boolean", "false",
     "Create a target table that does not exist from the first record's schema (docs/schema-evolution.md)."},
    {"routing.schema_evolution", "enum(off|add|full)", "add",
     "What a source column the table lacks or a changed column does: `off` (not loaded; counted and logged once), "
     "`add` (added, widened), `full` (also dropped, renamed). DDL runs between epochs."},
    {"routing.truncate", "enum(apply|ignore|fail)", "(apply for UNIQUE KEY tables, ignore for the others)",
     "What a source TRUNCATE (Debezium `op: t`) does: `apply` runs `TRUNCATE TABLE` in Doris between epochs, "
     "exactly once; `ignore` skips it; `fail` stops the daemon naming the record and the table. Counted in "
     "`cdc2doris_truncates_total{table,action}`; rules in docs/schema-evolution.md (\"TRUNCATE\")."},
    {"routing.delete_mode", "enum(hard|soft|ignore)", "hard",
     "What a source delete (and a tombstone that deletes a key) does: `hard` deletes the Doris row (delete sign); "
     "`soft` keeps it with `soft_delete_column` true (and `deleted_at_column` set) and every other row of the table "
     "carries it false; `ignore` drops the delete (`cdc2doris_records_skipped_total{reason=\"delete_ignored\"}`, "
     "logged at debug). Rules in docs/decoding.md (\"Delete modes\")."},
    {"routing.soft_delete_column", "string", "__deleted",
     "Soft deletes: the BOOLEAN flag column (the name Debezium's ExtractNewRecordState rewrite mode uses). "
     "Auto-created tables get it."},
    {"routing.deleted_at_column", "string", "\"\" (none)",
     "Soft deletes: a DATETIME(3) column set to the delete's `source.ts_ms` (wall clock of `decoding.time_zone`), "
     "NULL on every other row. Auto-created tables get it."},
    {"routing.create_properties", "map<string,string>", "{}",
     "PROPERTIES of auto-created tables (e.g. `replication_num`, `replication_allocation`); merged over the "
     "defaults `enable_unique_key_merge_on_write`, `light_schema_change` (true) and `replication_num` (3)."},
    {"routing.create_database_properties", "map<string,string>", "{}",
     "PROPERTIES of a target database that auto_create finds missing and creates (`CREATE DATABASE IF NOT "
     "EXISTS`; e.g. `replication_allocation`). Needs CREATE_PRIV on it (docs/schema-evolution.md)."},
    {"routing.tables.*.key_model", "enum(unique|duplicate)", "(from Doris)",
     "Override the key model (otherwise read from Doris' `_schema`)."},
    {"routing.tables.*.sequence_col", "string", "", "Doris sequence column (`function_column.sequence_col`)."},
    {"routing.tables.*.sequence_from_source_position", "boolean", "false",
     "Fill the sequence column from the source position (binlog file/pos, LSN)."},
    {"routing.tables.*.headers", "map<string,string>", "{}",
     "Extra Stream Load headers for this table (`strict_mode: \"false\"` turns the default strict mode off)."},
    {"routing.tables.*.key_columns", "list<string>", "(from the Kafka key)",
     "Primary-key columns when the Kafka key does not carry them."},
    {"routing.tables.*.auto_create", "boolean", "(routing.auto_create)", "Create this table when it does not exist."},
    {"routing.tables.*.schema_evolution", "enum(off|add|full)", "(routing.schema_evolution)",
     "Schema-evolution policy of this table."},
    {"routing.tables.*.truncate", "enum(apply|ignore|fail)", "(routing.truncate)",
     "What a source TRUNCATE does to this table."},
    {"routing.tables.*.delete_mode", "enum(hard|soft|ignore)", "(routing.delete_mode)",
     "What a source delete does to this table, e.g. `routing: {tables: {ods.orders: {delete_mode: soft, "
     "deleted_at_column: deleted_at}}}`."},
    {"routing.tables.*.soft_delete_column", "string", "(routing.soft_delete_column)",
     "The soft-delete flag column of this table."},
    {"routing.tables.*.deleted_at_column", "string", "(routing.deleted_at_column)",
     "The deleted-at column of this table; `\"\"`: none."},
    {"routing.tables.*.properties", "map<string,string>", "{}",
     "PROPERTIES when this table is auto-created, over `routing.create_properties`."},
    {"routing.tables.*.buckets", "integer", "0 (AUTO)", "Buckets when this table is auto-created; 0: `BUCKETS AUTO`.",
     false, between(0, 100000)},
    {"routing.tables.*.flexible_partial_updates", "boolean", "false",
     "Create the table with `enable_unique_key_skip_bitmap_column` (flexible partial updates, Doris 3.1+)."},
    {"routing.tables.*.columns", "list<string>", "[]",
     "Schemaless records: the columns to auto-create the table with, `name TYPE` each (keys from `key_columns` or "
     "the Kafka key)."},
    {"routing.tables.*.new_column_type", "string", "\"\" (refuse)",
     "Schemaless records: the Doris type a JSON key the table lacks is added as (policy add/full); empty: such a "
     "record is a bad record."},
    {"routing.tables.*.decimal_scales", "map<string,integer>", "{}",
     "Schemaless records: columns whose values are Debezium Decimal bytes (base64) of this scale, converted to the "
     "exact decimal text, e.g. a DECIMAL(65,30) beyond Doris' 38 digits into a STRING column. A value that is not "
     "such bytes is a bad record."},
    {"routing.tables.*.epoch_units", "map<string,enum(s|ms|us|ns)>", "{} (by the column's scale)",
     "Schemaless records: the unit of epoch integers per DATETIME column. Default: the Doris column's scale, as "
     "Debezium's adaptive precision mode writes it (DATETIME(0-3) ms, (4-6) us); set it for "
     "time.precision.mode=connect (ms) or nanoseconds (ns)."},
    // ---------------------------------------------------------------- delivery
    {"delivery.label_prefix", "string", "cdc2doris_{instance_id}",
     "Label prefix; labels are `{prefix}_{db}_{table}_{epoch}`. Unique per instance writing to one Doris: "
     "`{instance_id}` in it is replaced by `kafka.instance_id` (`.` becomes `_`). Unset, a state that recorded "
     "epochs under a prefix (e.g. the old default `cdc2doris`) keeps it."},
    {"delivery.epoch_interval", "duration", "10s", "Checkpoint interval: every epoch ends (pre-commit, commit).",
     false, at_least(1)},
    {"delivery.epoch_max_bytes", "size", "2GiB", "An epoch also ends when one table's load reaches this size.",
     false, at_least(1)},
    {"delivery.epoch_max_rows", "integer", "10000000", "... or this many rows.", false, at_least(1)},
    {"delivery.memory_cap", "size", "256MiB", "Rows buffered in the daemon; Kafka partitions pause above it.", false,
     at_least(1)},
    {"delivery.open_transaction_budget", "integer", "800",
     "Open + pre-committed txns per Doris database; keep it below `max_running_txn_num_per_db` (1000 on Doris "
     "2.1/3.0; on 2.0 and older the limit is 100: set 80). With more active tables than this, epochs end early. "
     "Refused by Doris' running-transaction limit, the daemon halves it for that database (logged).",
     false, between(1, kIntMax)},
    {"delivery.unproven_epoch", "string", "\"\" (none)",
     "`<epoch>:committed` or `<epoch>:replay`: the operator's verdict on an epoch the daemon stopped on because "
     "Doris forgot a txn of a table that is not UNIQUE KEY (docs/operations.md, \"An epoch Doris forgot\"); "
     "`<label prefix>:<epoch>:...` for another instance's epoch pending in the consumer group. Applies to that "
     "epoch only. Remove it once the epoch is committed."},
    {"delivery.max_loads_per_table", "integer", "8",
     "Stream Loads one table may hold within one epoch when its rows change column set (TOAST partial rows, "
     "key-only deletes) and the table has no flexible partial updates; reaching it ends the epoch early.",
     false, between(1, kIntMax)},
    {"delivery.end_epoch_when_caught_up", "boolean", "true",
     "When a backlog has been read to its end (polls came at least half full, 5,000 records or 4 MiB, then one "
     "waited its whole timeout for nothing), end the epoch at once rather than at `epoch_interval`: the backlog's last rows are visible "
     "sooner. Once per backlog; a steady stream still gets one epoch per interval."},
    {"delivery.bad_records", "enum(fail|skip|dead_letter)", "fail",
     "What a record that cannot be decoded does: stop the daemon, skip it (logged, counted), or copy it to "
     "`dead_letter_topic`."},
    {"delivery.dead_letter_topic", "string", "", "Topic for `bad_records: dead_letter`."},
    {"delivery.shutdown_deadline", "duration", "30s",
     "On SIGTERM: time to finish and commit the current epoch before exiting non-zero.", false, at_least(0)},
    {"delivery.backoff_base", "duration", "200ms", "First retry delay (capped exponential, full jitter).", false,
     at_least(1)},
    {"delivery.backoff_max", "duration", "10s", "Retry delay cap (at least `backoff_base`).", false, at_least(1)},
    // ---------------------------------------------------------------- decoding
    {"decoding.envelope", "enum(auto|schema|plain|flattened)", "auto",
     "Debezium JSON shape: detected, with schema envelope, without, or ExtractNewRecordState output."},
    {"decoding.time_zone", "string", "UTC", "IANA zone for ZonedTimestamp/ZonedTime values."},
    {"decoding.binary_mode", "enum(base64|hex)", "base64", "How bytes columns are written."},
    {"decoding.toast_placeholder", "string", "__debezium_unavailable_value",
     "Debezium's `unavailable.value.placeholder`."},
    {"decoding.max_record_bytes", "size", "16MiB", "Larger records are bad records.", false, at_least(1)},
    {"decoding.max_depth", "integer", "32", "Deeper nesting makes a bad record.", false, between(1, 1024)},
    {"decoding.flattened.deleted_field", "string", "__deleted", "ExtractNewRecordState delete marker field."},
    {"decoding.flattened.op_field", "string", "__op", "ExtractNewRecordState op field."},
    {"decoding.extra_columns.op", "string", "", "If set, a column receiving the op (`c`/`u`/`d`/`r`)."},
    {"decoding.extra_columns.source_ts", "string", "", "If set, a column receiving `source.ts_ms`."},
    // ---------------------------------------------------------------- state, admin, logging
    {"state.dir", "string", "/var/lib/cdc2doris", "RocksDB checkpoint directory (one daemon per directory)."},
    {"state.retention_epochs", "integer", "100", "Committed epochs kept for `state show`.", false, between(1, kIntMax)},
    {"admin.listen", "string", "127.0.0.1:8080",
     "Admin HTTP (`/healthz`, `/readyz`, `/metrics`, `/status`): `HOST:PORT`, HOST an IP address (`[::1]` for IPv6) "
     "or a name resolved at startup (`localhost`); port 0 picks a free one."},
    {"admin.token", "string", "\"\"",
     "Bearer token required on `/status` and `/metrics` (`Authorization: Bearer TOKEN`; otherwise 401 with "
     "`WWW-Authenticate: Bearer`). Empty: no authentication. Prefer `token_file` or `${ENV}`.",
     true},
    {"admin.token_file", "string", "",
     "File whose content (trailing newline stripped) is `admin.token` (a Kubernetes Secret volume)."},
    {"admin.probes_require_token", "boolean", "false",
     "Also require the token on `/healthz` and `/readyz` (open by default: kubelet probes send no token)."},
    {"admin.tls.cert_file", "string", "",
     "PEM certificate (chain) for HTTPS on the admin endpoint; with `key_file`. Empty: plain HTTP. "
     "`cdc2doris status --config` trusts exactly this certificate.", false},
    {"admin.tls.key_file", "string", "", "PEM private key of `admin.tls.cert_file`.", false},
    {"admin.kafka_grace", "duration", "15s",
     "`/readyz` fails once Kafka is unreachable, or a configured topic is missing, for longer (at once if Kafka never answered).",
     false, at_least(1)},
    {"admin.doris_failure_grace", "duration", "0s",
     "`/readyz` fails once Doris loads or commits have failed for longer without a success in between. `0s`: from "
     "the first failed load or commit until one succeeds again, across every retry (no 200 between retries).",
     false, at_least(0)},
    {"admin.stall_timeout", "duration", "120s",
     "`/readyz` fails once the epoch machine has not advanced for longer (at least 2 x `delivery.epoch_interval`).",
     false, at_least(1)},
    {"admin.heartbeat_timeout", "duration", "10m",
     "`/healthz` fails and the systemd watchdog starves once the pipeline thread made no progress for longer; keep it above `doris.load_timeout`.",
     false, at_least(1)},
    {"admin.lag_refresh_interval", "duration", "3s",
     "How often watermarks and committed offsets are queried for lag, also while nothing is consumed.", false,
     at_least(1)},
    {"logging.level", "enum(trace|debug|info|warn|error)", "info", "Log level."},
    {"logging.format", "enum(text|json)", "text", "Log line format."},
});
}  // namespace

std::span<const KeySpec> schema() { return kKeys; }

const KeySpec* find_key(std::string_view path) {
  for (const auto& k : kKeys)
    if (k.path == path) return &k;
  return nullptr;
}

bool is_section(std::string_view path) {
  for (const auto& k : kKeys)
    if (k.path.size() > path.size() && k.path.substr(0, path.size()) == path && k.path[path.size()] == '.')
      return true;
  return false;
}

std::string type_with_bounds(const KeySpec& k) {
  std::string out(k.type);
  if (!k.bounds) return out;
  auto show = [&](int64_t v) {
    std::string n = std::to_string(v);
    if (k.type == "duration") return n + "ms";
    if (k.type == "size") return n + "B";
    return n;
  };
  const bool open_max = k.bounds->max == std::numeric_limits<int64_t>::max() || k.bounds->max == kIntMax;
  return out + (open_max ? " (>= " + show(k.bounds->min) + ")" : " (" + show(k.bounds->min) + ".." + show(k.bounds->max) + ")");
}

}  // namespace cdc2doris::config
