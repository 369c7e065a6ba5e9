#include "tests/sources/scenario.hpp"

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <stdexcept>
#include <thread>

#include "tools/fixtures/kafka_broker.hpp"
#include "tools/fixtures/kafka_util.hpp"

namespace cdc2doris::test::sources {

using namespace std::chrono_literals;

std::string Matrix::insert(int row, int shift) const {
  std::string names = "id", vals = std::to_string(row);
  for (const auto& c : columns) {
    names += ", " + c.name;
    vals += ", " + c.values[static_cast<size_t>(row + shift) % c.values.size()];
  }
  return set_zone(zones[static_cast<size_t>(row) % zones.size()]) + "INSERT INTO types (" + names + ") VALUES (" +
         vals + ");\n";
}

std::string Matrix::changes() const {
  std::string upd;
  for (int r = 0; r < 4; ++r) {
    upd += set_zone(zones[static_cast<size_t>(r + 2) % zones.size()]) + "UPDATE types SET ";
    bool first = true;
    for (const auto& c : columns) {
      upd += std::string(first ? "" : ", ") + c.name + " = " + c.values[static_cast<size_t>(r + 7) % c.values.size()];
      first = false;
    }
    upd += " WHERE id = " + std::to_string(r * 3) + ";\n";
  }
  upd += "DELETE FROM types WHERE id IN (1, " + std::to_string(rows + 1) + ");\n";
  upd += "UPDATE types SET id = 1000 WHERE id = 2;\n";
  return upd;
}

std::vector<WorkTable> work_tables(const std::map<std::string, std::string>& render) {
  std::vector<WorkTable> tables{
      {"w_orders",
       {{"id", "BIGINT"}},
       {{"qty", "INT"}, {"note", "STRING"}, {"big", "STRING"}, {"price", "DECIMAL(12,2)"}, {"ts", "DATETIME(6)"},
        {"doc", "JSON"}},
       {}},
      {"w_lines", {{"order_id", "BIGINT"}, {"line", "INT"}}, {{"sku", "VARCHAR(80)"}, {"amount", "DECIMAL(10,3)"}}, {}},
  };
  for (auto& t : tables)
    for (const auto* part : {&t.key, &t.cols})
      for (const auto& [name, type] : *part) {
        auto r = render.find(name);
        t.expected.emplace_back(name, r == render.end() ? name : r->second);
      }
  return tables;
}

std::string settings_snapshot() {
  std::string kept, xf;
  const char* status[] = {"'new'", "'draft'", "'paid'", "NULL"};
  for (int id = 1; id <= 20; ++id) {
    const std::string n = std::to_string(id);
    kept += (kept.empty() ? "(" : ", (") + n + ", " + std::to_string(10 * id) + ", 'n" + n + "')";
    xf += (xf.empty() ? "(" : ", (") + n + ", " + status[id % 4] + ", " + n + ", 'x" + n + "', 's" + n + "')";
  }
  return "INSERT INTO w_soft VALUES " + kept + ";\nINSERT INTO w_keep VALUES " + kept + ";\nINSERT INTO w_xf VALUES " +
         xf + ";\n";
}

std::vector<std::string> settings_changes() {
  std::vector<std::string> out;
  for (const char* t : {"w_soft", "w_keep"}) {
    const std::string T = t;
    for (const std::string& sql : {
             "INSERT INTO " + T + " VALUES (21, 210, 'n21'), (22, 220, 'n22');",
             "UPDATE " + T + " SET qty = qty + 100 WHERE id % 3 = 0;",
             "DELETE FROM " + T + " WHERE id IN (2, 7, 21);",
             "UPDATE " + T + " SET id = id + 1000 WHERE id IN (4, 11);",  // key changes
             "INSERT INTO " + T + " VALUES (7, 77, 'again');",             // live again after its delete
             "DELETE FROM " + T + " WHERE id = 1004;",                      // a changed key deleted
             "UPDATE " + T + " SET note = 'later' WHERE id IN (8, 1011);",
             "DELETE FROM " + T + " WHERE id = 13;",
             "INSERT INTO " + T + " VALUES (13, 130, 'back');",
             "DELETE FROM " + T + " WHERE id = 13;",  // deleted twice: the second delete's time
         })
      out.push_back(sql);
  }
  // Snapshot rows: status new/draft/paid/NULL by id % 4, qty = id.
  for (const char* sql : {
           "INSERT INTO w_xf VALUES (21, 'paid', 50, 'x21', 's21'), (22, 'draft', 50, 'x22', 's22'), "
           "(23, 'new', 5, 'x23', 's23'), (24, NULL, 40, 'x24', 's24');",
           "UPDATE w_xf SET status = 'paid' WHERE id IN (1, 5, 12, 13, 22);",  // into the filter (qty allowing)
           "UPDATE w_xf SET qty = qty + 10 WHERE id IN (2, 3, 6, 7);",         // into it by qty (status allowing)
           "UPDATE w_xf SET status = 'draft' WHERE id IN (10, 14, 21);",       // out of it
           "UPDATE w_xf SET qty = 1 WHERE id IN (15, 19);",                    // out of it
           "UPDATE w_xf SET note = 'still out' WHERE id IN (9, 23);",          // filtered before and after
           "DELETE FROM w_xf WHERE id IN (11, 17, 23);",                       // matching and filtered keys
           "UPDATE w_xf SET id = 100 + id WHERE id IN (16, 18, 20);",          // key changes
           "UPDATE w_xf SET secret = 'changed', note = 'n' WHERE id IN (6, 118);",
       })
    out.emplace_back(sql);
  return out;
}

std::string routing_tables(const Mode& m) {
  std::map<std::string, std::string> tables{
      {"w_orders", "      sequence_col: src_pos\n      sequence_from_source_position: true\n"},
      {"w_long", "      schema_evolution: \"off\"\n"},
      {"w_word", "      schema_evolution: \"off\"\n"},
      {"w_soft", "      delete_mode: soft\n      deleted_at_column: deleted_at\n"},
      {"w_xf", std::string("      rename: {qty: quantity}\n      exclude: [secret]\n      column_case: upper\n"
                           "      filter: \"") + kXfFilter + "\"\n" + (m.schemas ? "      auto_create: true\n" : "")}};
  if (m.schemas) tables["w_evo"] = "      auto_create: true\n      schema_evolution: full\n";
  std::string y = std::string("  exclude: ['.*\\.w_gone'") + (m.schemas ? "" : ", '.*\\.w_evo'") + "]\n";
  // w_keep's delete mode comes from a routing rule (docs/decoding.md,
  // "Settings per routing rule"), the others' from routing.tables.
  y += "  rules:\n    - {match: '.*\\.w_keep', target: \"" + m.doris_db + ".w_keep\", delete_mode: ignore}\n";
  y += "  tables:\n";
  for (const auto& [table, settings] : tables) y += "    " + m.doris_db + "." + table + ":\n" + settings;
  return y;
}

void create_doris_tables(Emulator& emu, const Mode& m, const Matrix& matrix, const std::vector<WorkTable>& tables) {
  emu.sql("", "CREATE DATABASE " + m.doris_db);
  NamedExprs cols;
  for (const auto& c : matrix.columns) cols.emplace_back(c.name, c.doris(m.schemas));
  emu.sql(m.doris_db, doris_ddl("types", {{"id", "INT"}}, cols));
  // w_orders orders its rows by the source position (binlog position /
  // LSN) in a Doris sequence column, configured under the target name.
  for (const auto& t : tables)
    emu.sql(m.doris_db, doris_ddl(t.name, t.key, t.cols, t.name == "w_orders" ? "src_pos" : ""));
  for (const char* t : {"w_long", "w_grow"})
    emu.sql(m.doris_db, std::string("CREATE TABLE ") + t +
                            " (id BIGINT NOT NULL, note VARCHAR(8) NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  emu.sql(m.doris_db,
          "CREATE TABLE w_word (id BIGINT NOT NULL, qty INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  emu.sql(m.doris_db, doris_ddl("w_soft", {{"id", "BIGINT"}},
                                {{"qty", "INT"}, {"note", "STRING"}, {"__deleted", "BOOLEAN"}, {"deleted_at", "DATETIME(3)"}}));
  emu.sql(m.doris_db, doris_ddl("w_keep", {{"id", "BIGINT"}}, {{"qty", "INT"}, {"note", "STRING"}}));
  // The transformed names; SECRET catches a value the exclude let through.
  if (!m.schemas)
    emu.sql(m.doris_db, doris_ddl("w_xf", {{"ID", "BIGINT"}},
                                  {{"STATUS", "VARCHAR(64)"}, {"quantity", "INT"}, {"NOTE", "STRING"}, {"SECRET", "STRING"}}));
  emu.sql(m.doris_db, "CREATE TABLE marker (id INT NOT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
}

std::string dead_letter_topic(const Mode& m) { return "dlq-" + m.prefix; }

uint32_t workload_seed() {
  const char* seed_env = std::getenv("CDC2DORIS_SOURCE_SEED");
  return seed_env ? static_cast<uint32_t>(std::stoul(seed_env)) : std::random_device{}();
}

void run_workload_with_evolution(Workload& workload, const std::vector<std::string>& evolution,
                                 const std::function<void(const std::string&)>& exec) {
  const auto settings = settings_changes();
  for (size_t slice = 0; slice < 4; ++slice) {
    exec(workload.transactions(50));
    // One script: the clients run each statement as its own transaction.
    std::string part;
    for (size_t i = slice * settings.size() / 4; i < (slice + 1) * settings.size() / 4; ++i) part += settings[i] + "\n";
    exec(part);
    // The source empties w_lines mid-stream; the workload goes on writing it
    // (docs/schema-evolution.md, "TRUNCATE": Doris must drop the rows too).
    if (slice == 1) exec("TRUNCATE TABLE w_lines;\n");
    if (slice == 0) {
      std::string rows;
      for (int id = 1; id <= 20; ++id)
        rows += (rows.empty() ? "(" : ", (") + std::to_string(id) + ", '" + std::string(static_cast<size_t>(id), 'n') + "')";
      exec("INSERT INTO w_long VALUES " + rows + ";\nINSERT INTO w_grow VALUES " + rows + ";\n");
      std::string words;
      for (int id = 1; id <= 12; ++id) {
        const bool word = std::find(std::begin(kWordIds), std::end(kWordIds), id) != std::end(kWordIds);
        words += (words.empty() ? "(" : ", (") + std::to_string(id) + ", '" + (word ? "many" : std::to_string(id * 7)) + "')";
      }
      exec("INSERT INTO w_word VALUES " + words + ";\n");
    }
    for (size_t i = slice * 4; i < std::min(evolution.size(), (slice + 1) * 4); ++i) exec(evolution[i]);
    std::this_thread::sleep_for(300ms);
  }
}

std::map<std::string, std::unique_ptr<Daemon>> start_daemons(const std::vector<Mode>& modes,
                                                             const std::string& bootstrap, Emulator& emu,
                                                             const std::function<std::string(const Mode&)>& routing,
                                                             const SchemaRegistry& registry) {
  std::map<std::string, std::unique_ptr<Daemon>> daemons;
  // The broker does not create topics on produce (as production brokers are
  // usually set up): the dead-letter topic exists before the daemon needs it.
  for (const auto& m : modes) create_topic(bootstrap, dead_letter_topic(m), 1);
  for (const auto& m : modes) {
    std::string decoding;
    if (m.avro && !m.apicurio_ids)
      decoding = "  format: avro\n  schema_registry:\n    url: \"" + registry.ccompat_url() + "\"\n";
    if (m.apicurio_ids)
      decoding = "  format: avro\n  avro: {id_bytes: 8, id_kind: global}\n  schema_registry:\n    api: apicurio\n"
                 "    url: \"" + registry.apicurio_url() + "\"\n";
    daemons[m.prefix] = std::make_unique<Daemon>("daemon-" + m.prefix, bootstrap, "^" + m.prefix + "\\\\..*",
                                                 emu.fe(), m.doris_db, routing(m), decoding, dead_letter_topic(m));
  }
  return daemons;
}

void wait_for_snapshot(const std::string& bootstrap, const std::vector<Mode>& modes, const std::string& schema,
                       int matrix_rows, KafkaConnect& connect, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (const auto& m : modes) {
      auto ends = end_offsets(bootstrap, m.prefix + ".");
      for (const char* t : {"types", "w_orders", "w_lines", "marker"}) {
        auto it = ends.find(m.prefix + "." + schema + "." + t + "[0]");
        if (it == ends.end() || it->second == 0) all = false;
      }
      auto it = ends.find(m.prefix + "." + schema + ".types[0]");
      if (it == ends.end() || it->second < matrix_rows) all = false;
    }
    if (all) return;
    if (std::chrono::steady_clock::now() > deadline) {
      std::string have, status;
      for (const auto& m : modes) {
        for (const auto& [tp, end] : end_offsets(bootstrap, m.prefix + ".")) have += tp + "=" + std::to_string(end) + " ";
        status += connect.status(m.prefix) + "\n";
      }
      throw std::runtime_error("the Debezium snapshot did not reach Kafka (" + have + "):\n" + status +
                               connect.log_tail());
    }
    std::this_thread::sleep_for(500ms);
  }
}

void wait_for_marker(const std::string& bootstrap, const std::vector<Mode>& modes, const std::string& schema,
                     KafkaConnect& connect, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& m : modes) {
    const std::string topic = m.prefix + "." + schema + ".marker";
    for (;;) {
      auto ends = end_offsets(bootstrap, topic);
      auto it = ends.find(topic + "[0]");
      if (it != ends.end() && it->second >= 2) break;
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("the last change did not reach Kafka (" + m.prefix + "):\n" + connect.log_tail());
      std::this_thread::sleep_for(300ms);
    }
  }
}

namespace {

// With CDC2DORIS_SOURCE_DUMP_DIR set, a failing table's Kafka records are
// written there (one `offset key value` line each) with the Connect log, for
// diagnosis.
void dump_topic(const std::string& topic, const std::map<std::string, int64_t>& ends,
                const std::filesystem::path& connect_log) {
  const char* dir = std::getenv("CDC2DORIS_SOURCE_DUMP_DIR");
  if (dir == nullptr || *dir == 0) return;
  std::filesystem::copy_file(connect_log, std::string(dir) + "/connect.log",
                             std::filesystem::copy_options::overwrite_existing);
  auto it = ends.find(topic + "[0]");
  if (it == ends.end()) return;
  auto recs = consume_all(KafkaBroker::shared().bootstrap(), topic, static_cast<size_t>(it->second), 60s);
  std::ofstream out(std::string(dir) + "/" + topic + ".records");
  for (const auto& r : recs) out << r.offset << " " << r.key.value_or("null") << " " << r.value.value_or("null") << "\n";
}

bool boolean_at(const std::string& row, const char* col) {
  const auto& v = boost::json::parse(row).as_object().at(col);
  return v.is_bool() && v.as_bool();
}

std::string replace_braces(std::string tmpl, const std::string& by) {
  return tmpl.replace(tmpl.find("{}"), 2, by);
}

// The last values of `table`'s keys that a delete or key change removed and
// that are not live again, from w_gone; `flagged`: with the flag and
// deleted_at, else only the columns.
std::string gone_rows(const std::string& table, const SettingsDialect& d, bool flagged) {
  return "SELECT g.id, g.qty, g.note" + std::string(flagged ? ", 1 AS flag, " + d.deleted_at + " AS at" : "") +
         " FROM w_gone g WHERE g.tbl = '" + table + "' AND g.id NOT IN (SELECT id FROM " + table +
         ") AND g.seq = (SELECT max(h.seq) FROM w_gone h WHERE h.tbl = g.tbl AND h.id = g.id)";
}

// w_soft, w_keep and w_xf against the source (scenario.hpp, kSettingsTablesDdl).
void check_table_settings(const Mode& m, const SourceCheck& c, ScenarioState& s) {
  Emulator& emu = *s.emu;
  const SettingsDialect& d = *c.settings;
  {
    // Live rows flagged false; removed ones (deleted, or the old key of a
    // key change) kept with their last values, flagged, at the delete's time.
    INFO("table w_soft (delete_mode soft)");
    const auto src = c.source_rows(
        "(SELECT id, qty, note, 0 AS flag, NULL AS at FROM w_soft UNION ALL " + gone_rows("w_soft", d, true) + ") x",
        {{"id", "id"}, {"qty", "qty"}, {"note", "note"}, {"__deleted", replace_braces(d.boolean, "flag")},
         {"deleted_at", "at"}});
    size_t flagged = 0;
    for (const auto& r : src) flagged += boolean_at(r, "__deleted");
    // The triggers logged what settings_changes() removed: 2, 21, the old
    // keys 4 and 11, 1004, 13 (deleted twice); 7 is live again.
    CHECK(flagged == 6);
    CHECK(compare_rows(src, emu.rows(m.doris_db, "w_soft"), {"id"}) == "");
  }
  {
    INFO("table w_keep (delete_mode ignore)");
    const NamedExprs cols{{"id", "id"}, {"qty", "qty"}, {"note", "note"}};
    const auto src = c.source_rows("(SELECT id, qty, note FROM w_keep UNION ALL " + gone_rows("w_keep", d, false) + ") x", cols);
    CHECK(compare_rows(src, emu.rows(m.doris_db, "w_keep"), {"id"}) == "");
    // Every source delete of w_keep (a key change's old key included) was dropped and counted.
    const auto gone = c.source_rows("(SELECT count(*) AS n FROM w_gone WHERE tbl = 'w_keep') x", {{"n", "n"}});
    REQUIRE(gone.size() == 1);
    const std::string metrics = emu.http("GET", s.daemons.at(m.prefix)->admin(), "/metrics").body;
    // A counter counts each reading: a range read again after a failure
    // (w_word's refused load aborts its epoch) counts its deletes again.
    const auto counter = [&](const std::string& series) {
      const auto at = metrics.find(series + " ");
      return at == std::string::npos ? int64_t{-1} : std::stoll(metrics.substr(at + series.size() + 1));
    };
    const int64_t deletes = boost::json::parse(gone[0]).as_object().at("n").to_number<int64_t>();
    const int64_t ignored = counter("cdc2doris_records_skipped_total{reason=\"delete_ignored\"}");
    INFO(metrics);
    int64_t rewinds = 0;
    for (size_t at = metrics.find("\ncdc2doris_rewinds_total{"); at != std::string::npos;
         at = metrics.find("\ncdc2doris_rewinds_total{", at + 1))
      rewinds += std::stoll(metrics.substr(metrics.find("} ", at) + 2));
    if (rewinds == 0)
      CHECK(ignored == deletes);
    else
      CHECK(ignored >= deletes);
  }
  {
    // Exactly the source rows that match the filter now, under their Doris names.
    INFO("table w_xf (rename, exclude, column_case, filter)");
    NamedExprs cols{{"ID", "id"}, {"STATUS", "status"}, {"quantity", "qty"}, {"NOTE", "note"}};
    if (!m.schemas) cols.emplace_back("SECRET", "NULL");
    const auto src = c.source_rows(std::string("(SELECT * FROM w_xf WHERE ") + kXfFilter + ") x", cols);
    // Not vacuous: the filter keeps some rows and drops others.
    const size_t all = c.source_rows("w_xf", {{"id", "id"}}).size();
    CHECK(src.size() > 0);
    CHECK(src.size() < all);
    CHECK(compare_rows(src, emu.rows(m.doris_db, "w_xf"), {"ID"}) == "");
    if (m.schemas) {  // auto-created in the transformed shape
      const std::string desc = emu.query(m.doris_db, "DESC w_xf");
      for (const char* col : {R"x(["ID",)x", R"x(["STATUS",)x", R"x(["quantity",)x", R"x(["NOTE",)x"})
        CHECK_THAT(desc, Catch::Contains(col));
      for (const char* col : {"secret", "qty"}) CHECK_THAT(desc, !Catch::Contains(col, Catch::CaseSensitive::No));
    }
  }
}

}  // namespace

void ScenarioState::run(const std::function<void()>& setup) {
  try {
    setup();
  } catch (const std::exception& e) {
    setup_error = e.what();
  }
}

void ScenarioState::start_jvms(const std::string& bootstrap) {
  registry = std::make_unique<SchemaRegistry>();
  connect = std::make_unique<KafkaConnect>(bootstrap, std::vector<std::string>{KafkaConnect::avro_converter_plugin()});
}

void ScenarioState::snapshot(const Matrix& matrix, WorkloadDialect dialect, const std::vector<Mode>& modes,
                             const std::vector<WorkTable>& tables,
                             const std::function<void(const std::string&)>& exec) {
  seed = workload_seed();
  workload = std::make_unique<Workload>(seed, std::move(dialect));
  std::string snap;
  for (int r = 0; r < matrix.rows; ++r) snap += matrix.insert(r, 0);
  exec(snap);
  exec(settings_snapshot());
  exec(workload->transactions(60));
  // The snapshot wait needs a record of every table: a seed whose first
  // transactions left w_lines (or w_orders) empty gets more of them.
  for (int extra = 0; extra < 200 && !workload->has_orders_and_lines(); ++extra) exec(workload->transactions(1));
  emu = std::make_unique<Emulator>(EmulatorOptions{});
  for (const auto& m : modes) create_doris_tables(*emu, m, matrix, tables);
}

void ScenarioState::create_connector(const Mode& m, std::map<std::string, std::string> config,
                                     const std::string& w_evo_columns) {
  const std::string s = m.schemas ? "true" : "false";
  config["tasks.max"] = "1";
  config["topic.prefix"] = m.prefix;
  for (const std::string side : {"key", "value"}) {
    const std::string c = side + ".converter";
    if (!m.avro) {
      config[c] = "org.apache.kafka.connect.json.JsonConverter";
      config[c + ".schemas.enable"] = s;
      continue;
    }
    // Every new schema (a schema change) is registered as the subject's next
    // version under a new id.
    registry->wait_ready();
    config[c] = "io.apicurio.registry.utils.converter.AvroConverter";
    config[c + ".apicurio.registry.url"] = registry->apicurio_url();
    config[c + ".apicurio.registry.auto-register"] = "true";
    if (m.apicurio_ids) {
      // The converter's defaults (2.6.13: DefaultIdHandler, use-id globalId,
      // headers on), headers off for the key so both framings are written.
      config[c + ".apicurio.registry.use-id"] = "globalId";
      config[c + ".apicurio.registry.headers.enabled"] = side == "value" ? "true" : "false";
      continue;
    }
    // Confluent's framing from Apicurio's converter (docs/avro.md): the
    // content id, 4 bytes, in the payload.
    config[c + ".apicurio.registry.as-confluent"] = "true";
    config[c + ".apicurio.registry.use-id"] = "contentId";
    config[c + ".apicurio.registry.headers.enabled"] = "false";
  }
  // The exact source types (varchar(10), int) for w_evo's created and widened columns.
  config["column.propagate.source.type"] = w_evo_columns;
  // Truncate events too (Debezium skips them by default: `t`).
  config["skipped.operations"] = "none";
  connect->create_connector(m.prefix, std::move(config));
}

namespace {

// What Apicurio's converter wrote to `topic` and the registry: every key and
// value (but tombstones and truncate keys) in the mode's framing (Confluent's:
// magic byte 0 and a 4-byte content id; `apicurio_ids`: the key's 8-byte
// global id after magic byte 0, the value's in its apicurio.value.globalId
// header), one key schema id and `value_ids` value schema ids; through the
// registry the key id resolves to record Key and the last value id to
// Debezium's envelope (both in the topic's namespace; the envelope's before
// and after the optional row record, then source, transaction, op, ...), and
// the subjects `<topic>-key` / `<topic>-value` (Confluent's topic naming)
// have the ids of the last record as their latest version.
void check_avro_topic(const Mode& m, const std::string& topic, const std::map<std::string, int64_t>& ends,
                      const SchemaRegistry& registry, size_t value_ids) {
  INFO("Avro records of " << topic);
  const auto end = ends.find(topic + "[0]");
  REQUIRE(end != ends.end());
  const auto recs = consume_all(KafkaBroker::shared().bootstrap(), topic, static_cast<size_t>(end->second), 60s);
  REQUIRE(recs.size() == static_cast<size_t>(end->second));
  auto big_endian = [](std::string_view bytes) {
    int64_t id = 0;
    for (const char c : bytes) id = (id << 8) | static_cast<unsigned char>(c);
    return id;
  };
  const size_t payload_id_bytes = m.apicurio_ids ? 8 : 4;
  auto payload_id = [&](const std::optional<std::string>& bytes, std::set<int64_t>& ids, int64_t& last) {
    if (!bytes) return;
    REQUIRE(bytes->size() > 1 + payload_id_bytes);
    CHECK(static_cast<unsigned char>((*bytes)[0]) == 0);  // magic byte
    last = big_endian(std::string_view(*bytes).substr(1, payload_id_bytes));
    ids.insert(last);
  };
  auto header_id = [&](const ConsumedRecord& r, std::set<int64_t>& ids, int64_t& last) {
    if (!r.value) return;
    const auto h = std::find_if(r.headers.begin(), r.headers.end(),
                                [](const auto& kv) { return kv.first == "apicurio.value.globalId"; });
    REQUIRE(h != r.headers.end());
    REQUIRE(h->second.size() == 8);
    last = big_endian(h->second);
    ids.insert(last);
  };
  std::set<int64_t> keys, values;
  int64_t last_key = 0, last_value = 0;
  for (const auto& r : recs) {
    payload_id(r.key, keys, last_key);
    if (m.apicurio_ids)
      header_id(r, values, last_value);
    else
      payload_id(r.value, values, last_value);
  }
  CHECK(keys.size() == 1);
  CHECK(values.size() == value_ids);

  auto schema = [&](int64_t id) {
    const std::string path = m.apicurio_ids ? "/apis/registry/v2/ids/globalIds/" + std::to_string(id)
                                            : "/apis/ccompat/v7/schemas/ids/" + std::to_string(id);
    const auto got = registry.get(path);
    INFO(path << ": " << got.body);
    REQUIRE(got.status == 200);
    if (m.apicurio_ids) return boost::json::parse(got.body).as_object();
    return boost::json::parse(boost::json::parse(got.body).as_object().at("schema").as_string()).as_object();
  };
  const auto key = schema(last_key);
  CHECK(key.at("name") == "Key");
  CHECK(key.at("namespace") == boost::json::value(topic));
  const auto envelope = schema(last_value);
  CHECK(envelope.at("name") == "Envelope");
  CHECK(envelope.at("namespace") == boost::json::value(topic));
  const auto& fields = envelope.at("fields").as_array();
  std::vector<std::string> names;
  for (const auto& f : fields) names.emplace_back(f.as_object().at("name").as_string());
  REQUIRE(names.size() >= 4);
  CHECK(names[0] == "before");
  CHECK(names[1] == "after");
  for (const char* f : {"source", "op"}) CHECK(std::count(names.begin(), names.end(), f) == 1);
  const auto& before = fields[0].as_object().at("type").as_array();
  REQUIRE(before.size() == 2);
  CHECK(before[0] == "null");
  CHECK(before[1].as_object().at("name") == "Value");
  CHECK(fields[1].as_object().at("type") == boost::json::array{"null", "Value"});  // named, relative to the topic

  for (const auto& [subject, id] : {std::pair{topic + "-key", last_key}, std::pair{topic + "-value", last_value}}) {
    const auto latest = m.apicurio_ids
                            ? registry.get("/apis/registry/v2/groups/default/artifacts/" + subject + "/meta")
                            : registry.get("/apis/ccompat/v7/subjects/" + subject + "/versions/latest");
    INFO(subject << ": " << latest.body);
    REQUIRE(latest.status == 200);
    CHECK(boost::json::parse(latest.body).as_object().at(m.apicurio_ids ? "globalId" : "id").to_number<int64_t>() ==
          id);
  }
}

}  // namespace

void check_mode(const Mode& m, const SourceCheck& c, ScenarioState& s) {
  REQUIRE(s.setup_error == "");
  INFO("workload seed " << s.seed << " (CDC2DORIS_SOURCE_SEED reproduces it)");
  Emulator& emu = *s.emu;
  Daemon& d = *s.daemons.at(m.prefix);
  const std::filesystem::path connect_log = s.connect->dir() / "connect.log";
  const auto ends = end_offsets(KafkaBroker::shared().bootstrap(), m.prefix + ".");
  const std::string lag = wait_committed(emu, d, ends, 180s);
  INFO("daemon log:\n" << d.log_tail());
  REQUIRE(lag == "");
  const std::string topics = m.prefix + "." + c.schema + ".";

  NamedExprs types_expected{{"id", "id"}};
  for (const auto& col : c.matrix->columns) types_expected.emplace_back(col.name, expected_expr(col, m.schemas));
  const auto src_types = c.source_rows("types", types_expected);
  CHECK(src_types.size() == c.matrix->rows_after_changes());
  {
    INFO("table types");
    const auto diff = compare_rows(src_types, emu.rows(m.doris_db, "types"), {"id"});
    CHECK(diff == "");
    if (!diff.empty()) dump_topic(topics + "types", ends, connect_log);
  }
  // The type matrix's table never changes: one schema id for its values.
  if (m.avro) check_avro_topic(m, topics + "types", ends, *s.registry, 1);
  // The daemon read the subscribed topics' subjects at start (the snapshot's
  // topics and their subjects exist by then): at least the keys and values
  // of types, w_orders, w_lines and marker, each version once.
  if (m.avro) {
    const std::string log = d.log_tail(16 << 20);
    static const std::regex prefetched(R"((\d+) schema\(s\) of (\d+) subject\(s\) of the subscribed topics prefetched)");
    std::smatch got;
    REQUIRE(std::regex_search(log, got, prefetched));
    CHECK(std::stoul(got[2].str()) >= 8);
    CHECK(std::stoul(got[1].str()) >= std::stoul(got[2].str()));
  }
  // The source's TRUNCATE of w_lines reached Kafka and was applied (the
  // row comparison below fails if Doris kept the rows before it).
  CHECK_THAT(d.log_tail(16 << 20), Catch::Contains(m.doris_db + ".w_lines: TRUNCATE from"));
  size_t workload_rows = 0;
  for (const auto& t : c.tables) {
    INFO("table " << t.name);
    std::vector<std::string> key;
    for (const auto& k : t.key) key.push_back(k.first);
    const auto src = c.source_rows(t.name, t.expected);
    workload_rows += src.size();
    const auto doris_rows = emu.rows(m.doris_db, t.name);
    const auto diff = compare_rows(src, doris_rows, key);
    CHECK(diff == "");
    if (t.name == "w_orders") {  // the sequence column is set by the target-keyed setting
      size_t unset = 0;
      for (const auto& r : doris_rows) unset += r.find("\"src_pos\":null") != std::string::npos;
      CHECK(unset == 0);
    }
    if (!diff.empty()) dump_topic(topics + t.name, ends, connect_log);
  }
  if (m.schemas) {
    // Created from the snapshot; b added, c added with its default (the rows
    // already there read 7 in both), a int -> bigint, s varchar(10) ->
    // varchar(50), old renamed (its values kept), gone dropped.
    INFO("table w_evo");
    const auto src =
        c.source_rows("w_evo", {{"id", "id"}, {"a", "a"}, {"s", "s"}, {"renamed", "renamed"}, {"b", "b"}, {"c", "c"}});
    CHECK(src.size() == 54);
    CHECK(compare_rows(src, emu.rows(m.doris_db, "w_evo"), {"id"}) == "");
    const std::string desc = emu.query(m.doris_db, "DESC w_evo");
    for (const char* col : {R"x(["id","BIGINT")x", R"x(["a","BIGINT")x", R"x(["s","VARCHAR(200)")x",
                            R"x(["renamed","TEXT")x", R"x(["b","INT")x", R"x(["c","INT")x"})
      CHECK_THAT(desc, Catch::Contains(col));
    CHECK(desc.find("\"gone\"") == std::string::npos);
    // Each schema change reached the daemon as a schema id of its own: the
    // snapshot's shape, then b, c, a bigint, s varchar(50) (a new length
    // parameter: column.propagate.source.type), renamed, gone dropped.
    if (m.avro) check_avro_topic(m, topics + "w_evo", ends, *s.registry, 7);
  }
  {
    // Strings of 1..20 bytes into VARCHAR(8): under `off` the 12 longer
    // ones are dead letters naming the column and limit, the others load;
    // under `add` the column widened (8 -> 16 -> 32) and every row loads.
    INFO("tables w_long, w_grow, w_word");
    const NamedExprs cols{{"id", "id"}, {"note", "note"}};
    const auto src = c.source_rows("w_long", cols);
    REQUIRE(src.size() == 20);
    std::vector<std::string> fitting;
    for (const auto& r : src)
      if (boost::json::parse(r).as_object().at("note").as_string().size() <= 8) fitting.push_back(r);
    CHECK(compare_rows(fitting, emu.rows(m.doris_db, "w_long"), {"id"}) == "");
    CHECK(compare_rows(c.source_rows("w_grow", cols), emu.rows(m.doris_db, "w_grow"), {"id"}) == "");
    CHECK_THAT(emu.query(m.doris_db, "DESC w_grow"), Catch::Contains(R"x(["note","VARCHAR(32)")x"));
    // w_word: the numbers load, each record with a word is a dead letter.
    std::vector<std::string> numbers;
    for (const auto& r : c.source_rows("w_word", {{"id", "id"}, {"qty", "qty"}})) {
      auto o = boost::json::parse(r).as_object();
      if (o.at("qty").as_string() == "many") continue;
      numbers.push_back(R"({"id":)" + std::to_string(o.at("id").to_number<int64_t>()) + R"(,"qty":)" +
                        std::string(o.at("qty").as_string()) + "}");
    }
    CHECK(numbers.size() == 12 - std::size(kWordIds));
    CHECK(compare_rows(numbers, emu.rows(m.doris_db, "w_word"), {"id"}) == "");
    const size_t words = std::size(kWordIds);
    const auto letters = consume_all(KafkaBroker::shared().bootstrap(), dead_letter_topic(m), 12 + words, 60s);
    CHECK(letters.size() == 12 + words);
    size_t long_letters = 0, word_letters = 0;
    for (const auto& l : letters) {
      std::string error;
      for (const auto& [k, v] : l.headers)
        if (k == "cdc2doris.error") error = v;
      INFO(error);
      if (error.find("rejected_by_doris") == std::string::npos) {
        ++long_letters;
        CHECK_THAT(error, Catch::Contains("does_not_fit at table " + m.doris_db + ".w_long column note: expected "
                                          "VARCHAR(8): at most 8 bytes"));
      } else {
        ++word_letters;
        CHECK_THAT(error, Catch::Contains("rejected_by_doris at table " + m.doris_db + ".w_word: ") &&
                              Catch::Contains("column_name[qty]"));
        REQUIRE(l.value);
        CHECK_THAT(*l.value, Catch::Contains("many"));
      }
    }
    INFO(long_letters << " dead letters of w_long, " << word_letters << " of w_word, of " << letters.size());
    CHECK(long_letters == 12);
    CHECK(word_letters == words);
  }
  check_table_settings(m, c, s);
  size_t records = 0;
  for (const auto& [tp, end] : ends) records += static_cast<size_t>(end);
  WARN("mode " << m.prefix << ": " << records << " Kafka records (incl. tombstones), " << src_types.size()
               << " type-matrix rows, " << workload_rows << " workload rows compared");
}

}  // namespace cdc2doris::test::sources
