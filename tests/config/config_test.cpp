#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "config/config.hpp"
#include "core/common/redact.hpp"
#include "config/keys.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using config::ConfigError;

namespace {

const char* kMinimal = R"(kafka:
  bootstrap_servers: "k1:9092"
  topics: [a]
doris:
  fe: ["fe1:8030"]
)";

std::string error_of(const std::string& yaml, const std::map<std::string, std::string>& env = {}) {
  try {
    config::load_string(yaml, "test.yaml", &env);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

decode::Change change(const std::string& db, const std::string& table, const std::string& schema = "") {
  decode::Change c;
  c.db = db;
  c.table = table;
  c.schema = schema;
  return c;
}

}  // namespace

TEST_CASE("config: a minimal file gets the documented defaults", "[config]") {
  std::map<std::string, std::string> env;
  auto c = config::load_string(kMinimal, "test.yaml", &env);
  CHECK(c.bootstrap_servers == "k1:9092");
  CHECK(c.topics == std::vector<std::string>{"a"});
  CHECK(c.group_id == "cdc2doris");
  CHECK(c.doris.user == "root");
  // Issue 31: the default names the instance (the host name by default).
  CHECK(c.delivery.label_prefix.rfind("cdc2doris_", 0) == 0);
  CHECK(c.delivery.label_prefix.size() > std::string("cdc2doris_").size());
  CHECK_FALSE(c.label_prefix_explicit);
  CHECK(c.delivery.epoch_interval == std::chrono::seconds(10));
  CHECK(c.delivery.bad_record_policy == pipeline::BadRecordPolicy::Fail);
  CHECK_FALSE(c.source_config().read_headers);  // nothing copies headers without a dead-letter queue
  CHECK(c.delivery.open_txn_budget_per_db == 800);
  CHECK(c.delivery.end_epoch_when_caught_up);
  CHECK(c.delivery.check_rows);
  CHECK(c.state_dir == "/var/lib/cdc2doris");
  CHECK(c.admin_listen == "127.0.0.1:8080");
  CHECK(c.target_template == "{db}.{table}");
}

TEST_CASE("config: every key of the schema is accepted by the parser", "[config]") {
  // Keeps config/keys.cpp and the parser in step: a key documented but not
  // parsed (or the reverse) fails here.
  const std::string full = R"Y(kafka:
  bootstrap_servers: "k:9092"
  group_id: g
  instance_id: pod-0
  static_membership: true
  on_offset_gap: skip
  on_group_offsets_lost: stored
  topics: [a, b]
  topic_regex: "^dbserver1\\..*"
  properties: {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "cdc2doris", "sasl.password": "kafka-secret-1"}
doris:
  fe: ["https://fe1:8443", "fe2:8030"]
  user: loader
  password: "doris-secret-2"
  route: direct
  backends: ["be1:8040"]
  address_rewrite: {"10.0.0.5:8040": "127.0.0.1:18040"}
  tls: {ca_file: /etc/ssl/ca.pem, verify: true, verify_hostname: false}
  load_headers: {max_filter_ratio: "0.1"}
  gzip: true
  buffer_bytes: 2MiB
  io_threads: 2
  connect_timeout: 3s
  precommit_timeout: 2h
  clock_skew_allowance: 2m
  request_timeout: 20s
  load_timeout: 10m
  max_attempts: 5
routing:
  include: ["shop\\..*"]
  exclude: ["shop\\.tmp_.*"]
  target: "ods_{db}.{table}"
  rules:
    - match: "shop\\.orders_(\\d+)"
      target: "ods.orders"
  map: {"shop.customers": "crm.customers"}
  auto_create: true
  schema_evolution: full
  truncate: ignore
  delete_mode: ignore
  soft_delete_column: gone
  deleted_at_column: gone_at
  column_case: lower
  computed_columns: {src_table: source.table}
  create_properties: {replication_num: "1"}
  create_database_properties: {replication_allocation: "tag.location.default: 1"}
  tables:
    ods.orders:
      key_model: unique
      sequence_col: seq
      sequence_from_source_position: true
      headers: {strict_mode: "true"}
      key_columns: [id]
      epoch_units: {created_at: us}
      decimal_scales: {amount: 30}
      auto_create: false
      schema_evolution: "off"
      properties: {light_schema_change: "true"}
      buckets: 4
      flexible_partial_updates: true
      columns: ["id BIGINT", "note VARCHAR(200)"]
      new_column_type: STRING
      truncate: fail
      delete_mode: soft
      soft_delete_column: is_deleted
      deleted_at_column: ""
      rename: {cust_id: customer_id}
      exclude: [card_number]
      column_case: as_is
      filter: "status != 'draft' AND amount >= 10.5"
      computed_columns: {kafka_offset: offset}
delivery:
  label_prefix: "p1"
  epoch_interval: 5s
  epoch_max_bytes: 1GiB
  epoch_max_rows: 1000000
  memory_cap: 128MiB
  open_transaction_budget: 40
  max_loads_per_table: 4
  unproven_epoch: "12:replay"
  end_epoch_when_caught_up: false
  check_rows: false
  bad_records: dead_letter
  dead_letter_topic: dlq
  shutdown_deadline: 20s
  backoff_base: 100ms
  backoff_max: 5s
decoding:
  envelope: flattened
  time_zone: Asia/Shanghai
  binary_mode: hex
  toast_placeholder: "__toast"
  max_record_bytes: 4MiB
  max_depth: 16
  flattened: {deleted_field: "__del", op_field: "__o"}
  extra_columns: {op: "_op", source_ts: "_ts"}
  format: avro
  topic_formats: {"json\\..*": json}
  avro: {id_bytes: 8, id_kind: global, id_headers: {key_global_id: kg, key_content_id: kc, value_global_id: vg,
                                                     value_content_id: vc}}
  schema_registry: {url: "https://registry:8081/apis/registry/v2", api: apicurio, user: reg, password: "registry-secret-4", timeout: 3s,
                    tls: {ca_file: /etc/r/ca.pem, cert_file: /etc/r/c.pem, key_file: /etc/r/k.pem}}
state:
  dir: /tmp/x
  retention_epochs: 10
admin:
  listen: "0.0.0.0:9000"
  token: "admin-secret-3"
  probes_require_token: true
  tls: {cert_file: /etc/cdc2doris/admin.pem, key_file: /etc/cdc2doris/admin.key}
  kafka_grace: 20s
  doris_failure_grace: 40s
  stall_timeout: 5m
  heartbeat_timeout: 15m
  lag_refresh_interval: 5s
logging:
  level: debug
  format: json
)Y";
  std::map<std::string, std::string> env;
  auto c = config::load_string(full, "full.yaml", &env);
  // Every schema key appears in the document above.
  for (const auto& k : config::schema()) {
    std::string last(k.path.substr(k.path.rfind('.') + 1));
    INFO(k.path);
    if (k.path == "doris.password_file" || k.path == "admin.token_file" ||
        k.path == "decoding.schema_registry.password_file" || k.path == "decoding.schema_registry.bearer_token_file" ||
        k.path == "decoding.schema_registry.bearer_token")
      continue;  // own tests (the token excludes `user`), and keys_test.cpp's for every secret file
    CHECK(full.find(last + ":") != std::string::npos);
  }
  CHECK(c.topics == std::vector<std::string>{"a", "b", "^dbserver1\\..*"});
  CHECK(c.delivery.skip_offset_gaps);
  CHECK(c.source_config().skip_offset_gaps);
  CHECK(c.delivery.on_group_offsets_lost == pipeline::PipelineConfig::LostGroupOffsets::Stored);
  CHECK(c.auto_create);
  CHECK(c.schema_evolution == schema::Policy::Full);
  {
    auto router = config::make_router(c);
    auto s = router->settings({"ods", "orders"});
    CHECK_FALSE(s.auto_create);
    CHECK(s.schema_evolution == schema::Policy::Off);
    CHECK(s.create.properties == std::map<std::string, std::string>{{"light_schema_change", "true"}, {"replication_num", "1"}});
    CHECK(s.create.buckets == 4);
    CHECK(s.create.flexible_partial_updates);
    REQUIRE(s.columns.size() == 2);
    CHECK(s.columns[1].name == "note");
    CHECK(s.columns[1].type == "VARCHAR(200)");
    CHECK(s.new_column_type == "STRING");
    CHECK(s.decimal_scales == std::map<std::string, int>{{"amount", 30}});
    CHECK(s.create.database_properties ==
          std::map<std::string, std::string>{{"replication_allocation", "tag.location.default: 1"}});
    CHECK(s.truncate == pipeline::TruncatePolicy::Fail);
    auto other = router->settings({"ods", "items"});
    CHECK(other.auto_create);
    CHECK(other.schema_evolution == schema::Policy::Full);
    CHECK(other.truncate == pipeline::TruncatePolicy::Ignore);
    CHECK(s.deletes == decode::DeleteOptions{decode::DeleteMode::Soft, "is_deleted", ""});
    CHECK_FALSE(other.deletes);
    CHECK(c.decoding.deletes == decode::DeleteOptions{decode::DeleteMode::Ignore, "gone", "gone_at"});
    // Unset: decided by the key model (core/pipeline/truncate.cpp).
    CHECK_FALSE(config::make_router(config::load_string(kMinimal, "m.yaml", &env))->settings({"a", "b"}).truncate);
  }
  CHECK_THAT(error_of("kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\nrouting:\n  truncate: drop\n"),
             Catch::Contains("routing.truncate"));
  CHECK_THAT(error_of("kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\nrouting:\n  tables:\n    a.b:\n      columns: [id]\n"),
             Catch::Contains("routing.tables.a.b.columns[0]: expected 'name TYPE'"));
  CHECK_THAT(error_of("kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\nrouting:\n  tables:\n    a.b:\n      decimal_scales: {c: -1}\n"),
             Catch::Contains("routing.tables.a.b.decimal_scales.c: expected a scale from 0 to 1000"));
  CHECK_THAT(error_of("kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\nrouting:\n  schema_evolution: some\n"),
             Catch::Contains("routing.schema_evolution"));
  CHECK(c.doris.route == doris::Route::DirectBe);
  CHECK(c.doris.buffer_bytes == 2u << 20);
  CHECK(c.doris.timeouts.response == std::chrono::minutes(10));
  CHECK(c.delivery.precommit_timeout_ms == 2 * 3600 * 1000);
  CHECK(c.delivery.clock_skew_allowance_ms == 2 * 60 * 1000);
  CHECK_FALSE(c.doris.tls.verify_hostname);
  CHECK(c.delivery.bad_record_policy == pipeline::BadRecordPolicy::DeadLetter);
  CHECK(c.source_config().read_headers);  // dead letters carry the original headers
  CHECK(c.delivery.memory_cap_bytes == 128u << 20);
  CHECK_FALSE(c.delivery.end_epoch_when_caught_up);
  CHECK_FALSE(c.delivery.check_rows);
  CHECK(c.health.kafka_grace == std::chrono::seconds(20));
  CHECK(c.health.stall_timeout == std::chrono::minutes(5));
  CHECK(c.health.heartbeat_timeout == std::chrono::minutes(15));
  CHECK(c.decoding.envelope == decode::Envelope::Flattened);
  CHECK(c.decoding.binary_mode == decode::BinaryMode::Hex);
  CHECK(c.decoding.flattened.deleted == "__del");
  const auto orders = config::make_router(c)->settings({"ods", "orders"});  // by target (routing_tables_test.cpp)
  CHECK(orders.extra_columns->sequence == "seq");
  CHECK(orders.key_columns == std::vector<std::string>{"id"});
  CHECK(orders.epoch_units.at("created_at") == decode::EpochUnit::Micros);
  CHECK(c.tables.at("ods.orders").unique_key == std::optional<bool>(true));
  CHECK(c.log_format == "json");
  // Secrets: collected, and never in the dump.
  auto secrets = c.secrets();
  CHECK(std::find(secrets.begin(), secrets.end(), "doris-secret-2") != secrets.end());
  CHECK(std::find(secrets.begin(), secrets.end(), "kafka-secret-1") != secrets.end());
  CHECK(std::find(secrets.begin(), secrets.end(), "admin-secret-3") != secrets.end());
  CHECK(std::find(secrets.begin(), secrets.end(), "registry-secret-4") != secrets.end());
  CHECK(c.schema_registry.ca_file == "/etc/r/ca.pem");
  CHECK(c.schema_registry.cert_file == "/etc/r/c.pem");
  CHECK(c.schema_registry.key_file == "/etc/r/k.pem");
  CHECK(c.record_format.format == avro::RecordFormat::Avro);
  CHECK(c.schema_registry.url == "https://registry:8081/apis/registry/v2");
  CHECK(c.schema_registry.api == avro::RegistryApi::Apicurio);
  CHECK(c.record_format.id_bytes == 8);
  CHECK(c.record_format.payload_id == avro::IdKind::Global);
  CHECK(c.record_format.id_headers == avro::IdHeaders{"kg", "kc", "vg", "vc"});
  CHECK(c.record_format.topic_formats ==
        std::vector<std::pair<std::string, avro::RecordFormat>>{{"json\\..*", avro::RecordFormat::Json}});
  CHECK(c.schema_registry.user == "reg");
  CHECK(c.schema_registry.timeout == std::chrono::seconds(3));
  CHECK(c.admin_token == "admin-secret-3");
  CHECK(c.admin_probes_require_token);
  CHECK(c.admin_tls_cert_file == "/etc/cdc2doris/admin.pem");
  CHECK(c.admin_tls_key_file == "/etc/cdc2doris/admin.key");
  auto dump = c.dump();
  CHECK(dump.find("admin-secret-3") == std::string::npos);
  CHECK(dump.find("doris-secret-2") == std::string::npos);
  CHECK(dump.find("kafka-secret-1") == std::string::npos);
  CHECK(dump.find("registry-secret-4") == std::string::npos);
  CHECK(dump.find("[redacted]") != std::string::npos);
}

TEST_CASE("config: every validation error names file:line:col, the key, the value and what was expected", "[config]") {
  struct Case {
    std::string yaml;
    std::string expect;
  };
  const std::string base = kMinimal;
  const std::vector<Case> cases = {
      {base + "delivery:\n  epoch_intervall: 5s\n",
       "test.yaml:7:3: delivery.epoch_intervall: unknown key; expected one of: label_prefix, epoch_interval"},
      {base + "bogus: 1\n", "test.yaml:6:1: bogus: unknown key; expected one of: kafka, doris, routing"},
      {base + "delivery:\n  epoch_interval: soon\n",
       "test.yaml:7:19: delivery.epoch_interval: expected a duration such as 500ms, 10s, 5m, 1h, got 'soon'"},
      {base + "delivery:\n  memory_cap: lots\n",
       "test.yaml:7:15: delivery.memory_cap: expected a size such as 65536, 64KiB, 256MiB, 2GiB, got 'lots'"},
      {base + "delivery:\n  bad_records: ignore\n",
       "test.yaml:7:16: delivery.bad_records: expected one of fail, skip, dead_letter, got 'ignore'"},
      {base + "delivery:\n  bad_records: dead_letter\n", "delivery.dead_letter_topic: is required with bad_records: dead_letter"},
      {base + "delivery:\n  open_transaction_budget: 0\n", "delivery.open_transaction_budget: expected an integer from 1 to 2147483647, got '0'"},
      {base + "delivery:\n  label_prefix: \"a.b\"\n", "delivery.label_prefix: expected letters, digits, '-', '_' or ':'"},
      {"kafka:\n  topics: [a]\ndoris:\n  fe: [x]\n", "test.yaml:1:1: kafka.bootstrap_servers: is required"},
      {"kafka:\n  bootstrap_servers: k\ndoris:\n  fe: [x]\n", "kafka.topics: is required (or kafka.topic_regex)"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\n", "doris.fe: is required"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\n  properties: {enable.auto.commit: \"true\"}\ndoris:\n  fe: [x]\n",
       "kafka.properties.enable.auto.commit: must be false"},
      {base + "routing:\n  include: [\"(\"]\n", "test.yaml:7:13: routing.include[0]: invalid regex '('"},
      {base + "routing:\n  rules:\n    - match: \"a\"\n", "routing.rules[0]: needs both 'match' and 'target'"},
      {base + "routing:\n  map: {\"a.b\": \"nodot\"}\n", "routing.map.a.b: expected a target 'db.table', got 'nodot'"},
      {base + "routing:\n  tables:\n    nodot: {key_model: unique}\n", "routing.tables.nodot: expected a target 'db.table' as the key"},
      {base + "routing:\n  tables:\n    d.t: {key_model: mixed}\n", "routing.tables.d.t.key_model: expected one of unique, duplicate, got 'mixed'"},
      {base + "routing:\n  tables:\n    d.t: {colour: red}\n", "routing.tables.d.t.colour: unknown key; expected one of: key_model"},
      {base + "logging:\n  level: loud\n", "logging.level: expected one of trace, debug, info, warn, error, got 'loud'"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  gzip: maybe\n",
       "test.yaml:6:9: doris.gzip: expected true or false, got 'maybe'"},
      {"kafka: [1, 2\n", "test.yaml:2:1: invalid YAML: end of sequence flow not found"},
      {"- just a list\n", "test.yaml:1:1: expected a map of sections"},
  };
  for (const auto& c : cases) {
    INFO(c.yaml);
    auto err = error_of(c.yaml);
    CHECK_THAT(err, Catch::Contains(c.expect));
  }
}

// Everything `run` would reject (librdkafka, the decoder, the admin server,
// the Doris client) is rejected when the file is loaded, so `check` says so.
TEST_CASE("config: rejects what run would reject, at the value's file:line:col", "[config][validate]") {
  const std::string base = kMinimal;
  struct Case {
    std::string yaml;
    std::string expect;
  };
  const std::vector<Case> cases = {
      // Subscriptions: librdkafka compiles '^' topics as POSIX extended regexes.
      {"kafka:\n  bootstrap_servers: k\n  topic_regex: \"^dbz.(orders\"\ndoris:\n  fe: [x]\n",
       "test.yaml:3:16: kafka.topic_regex: invalid regex '^dbz.(orders': "},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a, \"^b[\"]\ndoris:\n  fe: [x]\n",
       "test.yaml:3:15: kafka.topics[1]: invalid regex '^b['"},
      {base + "routing:\n  exclude: [a, \"b(\"]\n", "test.yaml:7:16: routing.exclude[1]: invalid regex 'b('"},
      {base + "routing:\n  rules:\n    - {match: \"(x\", target: \"a.b\"}\n", "routing.rules[0].match: invalid regex '(x'"},
      // Time zones: judged by the decoder itself.
      {base + "decoding:\n  time_zone: Mars/Olympus_Mons\n",
       "test.yaml:7:14: decoding.time_zone: unknown time zone \"Mars/Olympus_Mons\""},
      // Listen addresses.
      {base + "admin:\n  listen: 8080\n", "test.yaml:7:11: admin.listen: expected HOST:PORT such as 127.0.0.1:8080"},
      {base + "admin:\n  listen: \":8080\"\n", "admin.listen: expected HOST:PORT such as"},
      {base + "admin:\n  listen: \"127.0.0.1:99999\"\n", "admin.listen: expected HOST:PORT with a port from 0 to 65535"},
      {base + "admin:\n  listen: \"no-such-host.invalid:8080\"\n", "admin.listen: expected HOST:PORT with a HOST that resolves"},
      // URLs and addresses.
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [\"fe1:8030\", \"ftp://fe2:8030\"]\n",
       "test.yaml:5:20: doris.fe[1]: expected an http:// or https:// URL or host:port, got 'ftp://fe2:8030'"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [\"ftp://u:hunter2@fe2:8030\"]\n", "got 'ftp://***@fe2:8030'"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  backends: [\"be1\"]\n",
       "test.yaml:6:14: doris.backends[0]: expected host:port, got 'be1'"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  user: \"\"\n", "doris.user: expected a Doris user name"},
      // Ranges, next to the key in the schema.
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  io_threads: 0\n",
       "test.yaml:6:15: doris.io_threads: expected an integer from 1 to 256, got '0'"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  max_attempts: -1\n",
       "test.yaml:6:17: doris.max_attempts: expected an integer from 1 to 100, got '-1'"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  buffer_bytes: 0\n",
       "doris.buffer_bytes: expected a size >= 1 bytes, got '0'"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  request_timeout: 0s\n",
       "doris.request_timeout: expected a duration >= 1ms, got '0s'"},
      {base + "delivery:\n  epoch_interval: 0ms\n", "delivery.epoch_interval: expected a duration >= 1ms"},
      {base + "delivery:\n  epoch_max_rows: -5\n", "delivery.epoch_max_rows: expected an integer >= 1, got '-5'"},
      {base + "delivery:\n  backoff_base: 30s\n", "delivery.backoff_max: must be at least delivery.backoff_base"},
      {base + "decoding:\n  max_depth: 0\n", "decoding.max_depth: expected an integer from 1 to 1024"},
      {base + "state:\n  retention_epochs: 0\n", "state.retention_epochs: expected an integer from 1 to 2147483647"},
      {base + "state:\n  retention_epochs: 3000000000\n", "state.retention_epochs: expected an integer from 1"},
      // librdkafka judges its own properties.
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\n  properties:\n    sesion.timeout.ms: \"2000\"\ndoris:\n  fe: [x]\n",
       "test.yaml:5:5: kafka.properties.sesion.timeout.ms: No such configuration property"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\n  properties:\n    fetch.wait.max.ms: \"soon\"\ndoris:\n  fe: [x]\n",
       "kafka.properties.fetch.wait.max.ms: Invalid value"},
      // Target templates the router cannot fill.
      {base + "routing:\n  target: \"{topic}\"\n", "routing.target: expected a template with {db}, {schema} and {table} only"},
      {base + "routing:\n  target: \"ods_{table}\"\n", "routing.target: expected a target 'db.table' template"},
      {base + "delivery:\n  memory_cap: 99999999999GiB\n", "delivery.memory_cap: expected a size below 8 EiB"},
      // yaml-cpp would keep the first and silently ignore the second.
      {base + "doris:\n  user: other\n", "test.yaml:6:1: doris: duplicate key (first at line 4)"},
      {"kafka:\n  bootstrap_servers: k\n  topics: [a]\n  topics: [b]\ndoris:\n  fe: [x]\n",
       "test.yaml:4:3: kafka.topics: duplicate key (first at line 3)"},
      {base + "routing:\n  tables:\n    d.t: {key_model: unique, key_model: duplicate}\n", "routing.tables.d.t.key_model: duplicate key"},
  };
  for (const auto& c : cases) {
    INFO(c.yaml);
    CHECK_THAT(error_of(c.yaml), Catch::Contains(c.expect));
  }
  // What librdkafka says about a secret's key is shown, never its value.
  auto err = error_of("kafka:\n  bootstrap_servers: k\n  topics: [a]\n  properties:\n    ssl.key.passwrd: hunter2\ndoris:\n  fe: [x]\n");
  CHECK_THAT(err, Catch::Contains("test.yaml:5:5: kafka.properties.ssl.key.passwrd: librdkafka rejects"));
  CHECK(err.find("hunter2") == std::string::npos);
  // Files are the machine's business, not the file's: `check` passes a
  // configuration naming CA bundles that exist only where it will run.
  CHECK_NOTHROW(config::load_string(
      "kafka:\n  bootstrap_servers: k\n  topics: [a]\n  properties:\n    security.protocol: SSL\n"
      "    ssl.ca.location: /nonexistent/kafka-ca.pem\ndoris:\n  fe: [x]\n  tls: {ca_file: /nonexistent/doris-ca.pem}\n",
      "t"));
  // What passes: names resolve to the address the admin server binds.
  CHECK(config::load_string(base + "admin:\n  listen: \"localhost:18080\"\n", "t").admin_listen == "127.0.0.1:18080");
  CHECK(config::load_string(base + "admin:\n  listen: \"[::1]:0\"\n", "t").admin_listen == "::1:0");
  CHECK(config::load_string(base + "decoding:\n  time_zone: Europe/Berlin\n", "t").decoding.time_zone == "Europe/Berlin");
  CHECK(config::load_string(base + "routing:\n  rules: [{match: \"(shop\\\\..*)\", target: \"$1\"}]\n", "t").rules.size() == 1);
}

TEST_CASE("config: redaction by position, never by value: a short password leaves addresses and versions alone",
          "[config][secrets][issue35]") {
  auto c = config::load_string(
      "kafka:\n  bootstrap_servers: 127.0.0.1:9092\n  group_id: cdc2doris\n  topics: [a]\n  properties:\n"
      "    security.protocol: SASL_PLAINTEXT\n    sasl.mechanism: PLAIN\n"
      "    sasl.username: cdc2doris\n    sasl.password: \"1\"\n"
      "    sasl.oauthbearer.config: \"principal=u scope=jaas-pw\"\n"
      "doris:\n  fe: [\"http://loader:fe-pw-9@127.0.0.1:8030\"]\n  password: \"0.1\"\n"
      "  load_headers: {columns: \"a,b\", Authorization: \"Basic cm9vdDowLjE=\"}\n",
      "t");
  const auto secrets = c.secrets();
  CHECK(std::find(secrets.begin(), secrets.end(), "cdc2doris") == secrets.end());
  CHECK(std::find(secrets.begin(), secrets.end(), "0.1") != secrets.end());
  CHECK(std::find(secrets.begin(), secrets.end(), "fe-pw-9") != secrets.end());
  // Text that merely contains a secret's value is never touched.
  for (const std::string line : {"cdc2doris 0.1.0 starting; group cdc2doris", "doris FE 127.0.0.1:8030: authenticated",
                                  "Kafka 127.0.0.1:9092: 1 broker(s)", "password abc, 0.1 and 1 are words"})
    CHECK(redact_secrets(line) == line);
  // Secrets where the text's structure puts them: KEY=VALUE of a secret key, JAAS options, escaped in JSON.
  CHECK(redact_secrets("sasl.password=kpw-77; sasl.mechanism=PLAIN") == "sasl.password=[redacted]; sasl.mechanism=PLAIN");
  CHECK(redact_secrets("sasl.password=[redacted] session.timeout.ms=6000") ==
        "sasl.password=[redacted] session.timeout.ms=6000");  // already hidden at its source: kept as it is
  CHECK(redact_secrets(R"(ScramLoginModule required username="u" password="p w";)") ==
        R"(ScramLoginModule required username="u" password="[redacted]";)");
  CHECK(redact_secrets(R"({"msg":"ssl.key.password=\"k p\" rejected"})") ==
        R"({"msg":"ssl.key.password=\"[redacted]\" rejected"})");
  CHECK(redact_secrets("ssl.key.location=/etc/k.pem") == "ssl.key.location=/etc/k.pem");  // a path helps diagnose
  CHECK(redact_secrets("Authorization: Basic cm9vdDowLjE=\r\nHost: fe") == "Authorization: [redacted]\r\nHost: fe");
  // URL userinfo goes whatever it holds, also Doris <= 1.2's "user@cluster:pw@".
  CHECK(redact_secrets("PUT http://loader:fe-pw-9@fe1:8030/api") == "PUT http://***@fe1:8030/api");
  CHECK(redact_secrets("Location: http://root@default_cluster:zz@be:8040/x") == "Location: http://***@be:8040/x");
  CHECK(redact_secrets("mail root@example.com") == "mail root@example.com");
  // The dump hides each secret field and keeps everything else verbatim.
  const auto dump = c.dump();
  INFO(dump);
  CHECK_THAT(dump, Catch::Contains("bootstrap_servers: 127.0.0.1:9092"));
  CHECK_THAT(dump, Catch::Contains("http://***@127.0.0.1:8030"));
  CHECK_THAT(dump, Catch::Contains("password: \"[redacted]\""));
  CHECK_THAT(dump, Catch::Contains("sasl.password: \"[redacted]\""));
  CHECK_THAT(dump, Catch::Contains("sasl.username: \"[redacted]\""));
  CHECK_THAT(dump, Catch::Contains("Authorization: \"[redacted]\""));
  CHECK_THAT(dump, Catch::Contains("columns: a,b"));
  for (const std::string secret : {"fe-pw-9", "jaas-pw", "cm9vdDowLjE="}) CHECK(dump.find(secret) == std::string::npos);
}

TEST_CASE("config: a secret never appears in an error message", "[config][secrets]") {
  auto err = error_of("kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  password: [\"s3cr3t-value\"]\n");
  CHECK_THAT(err, Catch::Contains("doris.password: expected a string"));
  CHECK_THAT(err, Catch::Contains("hidden: secret"));
  CHECK(err.find("s3cr3t-value") == std::string::npos);
}

TEST_CASE("config: ${VAR} and ${VAR:-default} substitution", "[config][env]") {
  std::map<std::string, std::string> env{{"KAFKA", "k9:9092"}, {"PW", "from-env"}, {"EMPTY", ""}};
  const std::string y =
      "kafka:\n  bootstrap_servers: ${KAFKA}\n  topics: [\"${TOPIC:-orders}\"]\n"
      "doris:\n  fe: [\"${FE:-fe:8030}\"]\n  password: ${PW}\n  user: \"${EMPTY:-root2}\"\n"
      "delivery:\n  label_prefix: \"p$${X}\"\n";
  // "$$" is a literal '$' — but '$' is not a valid label character, so use it elsewhere.
  auto err = error_of(y, env);
  CHECK_THAT(err, Catch::Contains("delivery.label_prefix"));
  auto c = config::load_string(
      "kafka:\n  bootstrap_servers: ${KAFKA}\n  topics: [\"${TOPIC:-orders}\"]\n"
      "doris:\n  fe: [\"${FE:-fe:8030}\"]\n  password: ${PW}\n  user: \"${EMPTY:-root2}\"\n"
      "routing:\n  target: \"$${db}.{table}\"\n",
      "env.yaml", &env);
  CHECK(c.bootstrap_servers == "k9:9092");
  CHECK(c.topics == std::vector<std::string>{"orders"});
  CHECK(c.doris.fe_urls == std::vector<std::string>{"fe:8030"});
  CHECK(c.doris.password == "from-env");
  CHECK(c.doris.user == "root2");  // an empty variable takes the default
  CHECK(c.target_template == "${db}.{table}");
  CHECK_THAT(error_of("kafka:\n  bootstrap_servers: ${NOPE}\n  topics: [a]\ndoris:\n  fe: [x]\n", env),
             Catch::Contains("test.yaml:2:22: kafka.bootstrap_servers: environment variable NOPE is not set"));
}

TEST_CASE("config: password_file is read and its newline stripped", "[config]") {
  test::TempDir d("cfg");
  std::ofstream(d / "pw") << "file-secret\n";
  std::map<std::string, std::string> env;
  auto c = config::load_string(std::string(kMinimal) + "state:\n  dir: /tmp/s\n", "t.yaml", &env);
  CHECK(c.doris.password.empty());
  auto c2 = config::load_string("kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  password_file: " +
                                    (d / "pw").string() + "\n",
                                "t.yaml", &env);
  CHECK(c2.doris.password == "file-secret");
  CHECK_THAT(error_of("kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  password_file: /nonexistent/pw\n"),
             Catch::Contains("doris.password_file: cannot read '/nonexistent/pw'"));
}

TEST_CASE("config: admin.token_file is read like password_file, and probes_require_token needs a token",
          "[config][secrets][issue35]") {
  test::TempDir d("cfg");
  std::ofstream(d / "token") << "file-token\n";
  std::map<std::string, std::string> env;
  const std::string base = "kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\nadmin:\n";
  auto c = config::load_string(base + "  token_file: " + (d / "token").string() + "\n", "t.yaml", &env);
  CHECK(c.admin_token == "file-token");
  CHECK_FALSE(c.admin_probes_require_token);
  CHECK_THAT(c.dump(), Catch::Contains("token: \"[redacted]\""));
  CHECK_THAT(error_of(base + "  token_file: /nonexistent/token\n"),
             Catch::Contains("admin.token_file: cannot read '/nonexistent/token'"));
  CHECK_THAT(error_of(base + "  probes_require_token: true\n"),
             Catch::Contains("admin.probes_require_token: needs admin.token or admin.token_file"));
  CHECK_THAT(error_of(base + "  tls: {cert_file: /x.pem}\n"), Catch::Contains("admin.tls: needs both cert_file and key_file"));
  // A wrong type on the secret key does not echo it.
  const auto err = error_of(base + "  token: [\"tok-3x\"]\n");
  CHECK_THAT(err, Catch::Contains("hidden: secret"));
  CHECK(err.find("tok-3x") == std::string::npos);
}

TEST_CASE("config: docs/configuration.md is generated from the schema and up to date", "[config][docs]") {
  std::ifstream in(std::string(CDC2DORIS_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  INFO("regenerate with: build/dev/daemon/cdc2doris config-reference > docs/configuration.md");
  CHECK(ss.str() == config::reference_markdown());
}

TEST_CASE("routing: exclude, include, explicit map, rules with groups, templates, per-table settings", "[config][routing]") {
  std::map<std::string, std::string> env;
  auto c = config::load_string(R"Y(kafka:
  bootstrap_servers: "k1:9092"
  topics: [a]
doris:
  fe: ["fe1:8030"]
  load_headers: {max_filter_ratio: "0.2"}
routing:
  include: ["shop\\..*", "pg\\.public\\..*"]
  exclude: ["shop\\.tmp_.*"]
  target: "ods_{db}.{table}"
  rules:
    - match: "shop\\.orders_(\\d+)"
      target: "ods.orders_all"
    - match: "shop\\.(audit)_log"
      target: "logs.$1"
  map: {"shop.customers": "crm.customers"}
  tables:
    ods.orders_all:
      key_model: duplicate
      headers: {strict_mode: "true"}
)Y",
                               "r.yaml", &env);
  auto router = config::make_router(c);
  CHECK_FALSE(router->route(change("shop", "tmp_x")));
  CHECK_FALSE(router->route(change("other", "t")));
  CHECK(router->route(change("shop", "customers"))->name() == "crm.customers");
  CHECK(router->route(change("shop", "orders_17"))->name() == "ods.orders_all");
  CHECK(router->route(change("shop", "audit_log"))->name() == "logs.audit");
  CHECK(router->route(change("shop", "products"))->name() == "ods_shop.products");
  CHECK(router->route(change("pg", "items", "public"))->name() == "ods_pg.items");
  auto s = router->settings({"ods", "orders_all"});
  CHECK(s.unique_key == std::optional<bool>(false));
  CHECK(s.headers.at("strict_mode") == "true");
  CHECK(s.headers.at("max_filter_ratio") == "0.2");
  auto known = router->known_targets();
  CHECK(std::find(known.begin(), known.end(), pipeline::Target{"crm", "customers"}) != known.end());
  CHECK(std::find(known.begin(), known.end(), pipeline::Target{"ods", "orders_all"}) != known.end());
}

// Issue 31 (5): two instances started from one configuration on one host
// shared the default label prefix "cdc2doris" and aborted each other's txns.
TEST_CASE("config: the default label prefix names the instance, a state keeps the prefix it recorded", "[config]") {
  const std::string doris = "doris: {fe: [\"fe:8030\"]}\n";
  auto c = config::load_string(
      "kafka: {bootstrap_servers: \"k:9092\", topics: [a], instance_id: pod-1.svc}\n" + doris, "t.yaml");
  CHECK(c.delivery.label_prefix == "cdc2doris_pod-1_svc");
  // A fresh state: the new default.
  CHECK_FALSE(c.keep_recorded_label_prefix({}));
  CHECK(c.delivery.label_prefix == "cdc2doris_pod-1_svc");
  // A state recorded under the old default (and, earlier, another prefix) keeps the newest.
  auto kept = c.keep_recorded_label_prefix({{"older", 10}, {"cdc2doris", 57}});
  REQUIRE(kept);
  CHECK(*kept == "cdc2doris");
  CHECK(c.delivery.label_prefix == "cdc2doris");
  // An explicit prefix is the operator's: never replaced.
  auto e = config::load_string("kafka: {bootstrap_servers: \"k:9092\", topics: [a]}\n" + doris +
                                   "delivery: {label_prefix: mine}\n",
                               "t.yaml");
  CHECK_FALSE(e.keep_recorded_label_prefix({{"cdc2doris", 57}}));
  CHECK(e.delivery.label_prefix == "mine");
  // The operator's verdict on an unproven epoch.
  auto u = config::load_string("kafka: {bootstrap_servers: \"k:9092\", topics: [a]}\n" + doris +
                                   "delivery: {unproven_epoch: \"41:committed\"}\n",
                               "t.yaml");
  CHECK(u.delivery.unproven_epoch == 41);
  CHECK(u.delivery.unproven_epoch_prefix.empty());
  CHECK(u.delivery.unproven_epoch_committed);
  // ... and on another instance's epoch pending in the consumer group.
  auto other = config::load_string("kafka: {bootstrap_servers: \"k:9092\", topics: [a]}\n" + doris +
                                       "delivery: {unproven_epoch: \"cdc2doris_pod-1:41:replay\"}\n",
                                   "t.yaml");
  CHECK(other.delivery.unproven_epoch == 41);
  CHECK(other.delivery.unproven_epoch_prefix == "cdc2doris_pod-1");
  CHECK_FALSE(other.delivery.unproven_epoch_committed);
  CHECK(other.delivery.precommit_timeout_ms == 3600 * 1000);
  CHECK_THROWS_WITH(config::load_string("kafka: {bootstrap_servers: \"k:9092\", topics: [a]}\n" + doris +
                                            "delivery: {unproven_epoch: \":41:replay\"}\n",
                                        "t.yaml"),
                    Catch::Contains("delivery.unproven_epoch"));
  CHECK_THROWS_WITH(config::load_string("kafka: {bootstrap_servers: \"k:9092\", topics: [a]}\n" + doris +
                                            "delivery: {unproven_epoch: \"41:maybe\"}\n",
                                        "t.yaml"),
                    Catch::Contains("delivery.unproven_epoch"));
}

TEST_CASE("config: instance_id names the group member and fills {instance_id} in the label prefix", "[config]") {
  const std::string base = "kafka: {bootstrap_servers: \"k:9092\", topics: [a]}\ndoris: {fe: [\"fe:8030\"]}\n";
  auto c = config::load_string(base + "delivery: {label_prefix: \"cdc-{instance_id}\"}\n", "t.yaml");
  CHECK_FALSE(c.instance_id.empty());  // the host name
  auto named = config::load_string(
      "kafka: {bootstrap_servers: \"k:9092\", topics: [a], instance_id: cdc2doris-1.svc}\ndoris: {fe: [\"fe:8030\"]}\n"
      "delivery: {label_prefix: \"cdc-{instance_id}\"}\n",
      "t.yaml");
  CHECK(named.instance_id == "cdc2doris-1.svc");
  CHECK(named.label_prefix_explicit);
  CHECK(named.delivery.label_prefix == "cdc-cdc2doris-1_svc");
  CHECK(named.source_config().properties.at("group.instance.id") == "cdc2doris-1.svc");
  auto dynamic = config::load_string(
      "kafka: {bootstrap_servers: \"k:9092\", topics: [a], static_membership: false}\ndoris: {fe: [\"fe:8030\"]}\n",
      "t.yaml");
  CHECK_FALSE(dynamic.source_config().properties.contains("group.instance.id"));
  CHECK_THROWS_WITH(config::load_string("kafka: {bootstrap_servers: \"k:9092\", topics: [a], instance_id: \"a b\"}\n"
                                        "doris: {fe: [\"fe:8030\"]}\n",
                                        "t.yaml"),
                    Catch::Contains("kafka.instance_id"));
}

TEST_CASE("config: decoding.format avro needs a usable schema registry URL, never printing its credentials",
          "[config][avro]") {
  const std::string base = "kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\ndecoding:\n";
  CHECK_THAT(error_of(base + "  format: avro\n"), Catch::Contains("decoding.format") &&
                                                       Catch::Contains("avro and auto need decoding.schema_registry.url"));
  CHECK_THAT(error_of(base + "  topic_formats: {\"a.*\": auto}\n"),
             Catch::Contains("decoding.topic_formats") && Catch::Contains("need decoding.schema_registry.url"));
  const std::string registry = "  schema_registry: {url: \"http://r:8081\"}\n";
  CHECK_THAT(error_of(base + registry + "  topic_formats: {\"a(\": auto}\n"),
             Catch::Contains("test.yaml:8:19: decoding.topic_formats.a(") &&
                 Catch::Contains("invalid regex 'a('"));
  CHECK_THAT(error_of(base + registry + "  topic_formats: {\"a.*\": xml}\n"),
             Catch::Contains("decoding.topic_formats.a.*") && Catch::Contains("one of json, avro, auto"));
  CHECK_THAT(error_of(base + registry + "  format: avro\n  avro: {id_kind: global}\n"),
             Catch::Contains("decoding.avro.id_kind") && Catch::Contains("decoding.schema_registry.api: apicurio"));
  CHECK_THAT(error_of(base + registry + "  avro: {id_bytes: 5}\n"), Catch::Contains("decoding.avro.id_bytes"));
  CHECK_THAT(error_of(base + registry + "  avro: {id_headers: {value_global_id: \"\"}}\n"),
             Catch::Contains("decoding.avro.id_headers.value_global_id") && Catch::Contains("a header name"));
  {
    std::map<std::string, std::string> env;
    const auto ordered = config::load_string(
        base + registry + "  topic_formats: {\"b.*\": json, \"a.*\": auto, \"ab\": avro}\n", "t.yaml", &env);
    CHECK(ordered.record_format.topic_formats == std::vector<std::pair<std::string, avro::RecordFormat>>{
                                                     {"b.*", avro::RecordFormat::Json},
                                                     {"a.*", avro::RecordFormat::Auto},
                                                     {"ab", avro::RecordFormat::Avro}});
    CHECK(ordered.record_format.any_avro());
  }
  const std::string userinfo = error_of(base + "  format: avro\n  schema_registry: {url: \"http://u:pw-in-url@r:1\"}\n");
  CHECK_THAT(userinfo, Catch::Contains("decoding.schema_registry.url") &&
                           Catch::Contains("credentials go in user and password"));
  CHECK(userinfo.find("pw-in-url") == std::string::npos);
  CHECK_THAT(error_of(base + "  format: avro\n  schema_registry: {url: \"ftp://r:8081\"}\n"),
             Catch::Contains("expected http[s]://HOST[:PORT][/PATH]"));
  std::map<std::string, std::string> env;
  const auto c = config::load_string(base + "  format: avro\n  schema_registry: {url: \"http://r:8081\"}\n", "t.yaml", &env);
  CHECK(c.record_format.format == avro::RecordFormat::Avro);
  // What the registry keys say together is judged by `check` too, not only
  // when the client is built (check --connect, run).
  const std::string both =
      error_of(base + "  format: avro\n  schema_registry: {url: \"http://r:8081\", user: u, password: pw-4,\n"
                      "                    bearer_token: tok-5}\n");
  CHECK_THAT(both, Catch::Contains("test.yaml:9:35: decoding.schema_registry.bearer_token") &&
                       Catch::Contains("user (basic authentication) and bearer_token exclude each other"));
  CHECK(both.find("tok-5") == std::string::npos);
  CHECK(both.find("pw-4") == std::string::npos);
  CHECK_THAT(error_of(base + "  format: avro\n  schema_registry: {url: \"http://r:8081\", tls: {ca_file: /ca.pem}}\n"),
             Catch::Contains("decoding.schema_registry.tls.ca_file") && Catch::Contains("the URL is http"));
  CHECK_THAT(error_of(base + "  format: avro\n  schema_registry: {url: \"https://r:8081\", tls: {key_file: /k.pem}}\n"),
             Catch::Contains("decoding.schema_registry.tls.key_file") && Catch::Contains("go together"));
  const auto token = config::load_string(
      base + "  format: avro\n  schema_registry: {url: \"https://r:8081\", bearer_token: \"registry-token-5\"}\n",
      "t.yaml", &env);
  CHECK(token.schema_registry.bearer_token == "registry-token-5");
  const auto token_secrets = token.secrets();
  CHECK(std::find(token_secrets.begin(), token_secrets.end(), "registry-token-5") != token_secrets.end());
  CHECK(token.dump().find("registry-token-5") == std::string::npos);
  CHECK(config::load_string(base + "  time_zone: UTC\n", "t.yaml", &env).record_format.format == avro::RecordFormat::Json);
}
