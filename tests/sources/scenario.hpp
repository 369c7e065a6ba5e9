#pragma once
// The scenario both real-source end-to-end tests (PostgreSQL, MariaDB) run,
// apart from their database and connector: the type matrix's rows and later
// changes, the workload tables and w_evo in Doris and in the routing, the
// workload interleaved with w_evo's schema changes, waiting for the snapshot
// and the last change in Kafka, and the final check of every Doris row
// against the source.
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/sources/source_e2e.hpp"
#include "tests/sources/workload.hpp"
#include "tests/support/kafka_connect.hpp"
#include "tests/support/schema_registry.hpp"

namespace cdc2doris::test::sources {

using NamedExprs = std::vector<std::pair<std::string, std::string>>;

// One converter mode: a connector (its topic prefix) and a daemon of its own.
struct Mode {
  std::string prefix;    // Debezium topic.prefix
  std::string doris_db;  // target Doris database
  bool schemas;          // records carry their schema: JsonConverter with schemas, or Avro
  // Apicurio's Avro converter in Confluent's framing, schemas in the
  // registry; the daemon reads with `decoding.format: avro` (docs/avro.md).
  // Every expectation is that of JsonConverter with schemas: the Avro
  // schemas carry the same Connect schema (AvroData), so the rows are the same.
  bool avro = false;
  // With `avro`: Apicurio's own framings instead of Confluent's, each side
  // another: the key's global id in 8 bytes after magic byte 0, the value's
  // in the apicurio.value.globalId header before a bare Avro body; the
  // daemon reads them through Apicurio's API (`api: apicurio`, `avro:
  // {id_bytes: 8, id_kind: global}`).
  bool apicurio_ids = false;
};

// The type matrix's rows as SQL, each row in a session zone of its own.
struct Matrix {
  std::vector<Column> columns;
  std::vector<std::string> zones;
  std::string (*set_zone)(const std::string& zone);  // the statement setting the session zone
  int rows;  // rows of the snapshot, and as many streamed

  // Row `row`, column c taking its value values[(row + shift) % size].
  std::string insert(int row, int shift) const;
  // After both halves: rows 0, 3, 6, 9 updated with other rows' values, row
  // 1 and the second half's row 1 deleted, row 2's key changed to 1000.
  std::string changes() const;
  // Rows the source holds after changes().
  size_t rows_after_changes() const { return static_cast<size_t>(2 * rows - 2); }
};

// The workload's tables (workload.hpp): Doris key and columns, and per column
// the source-side SQL rendering it as Doris holds it.
struct WorkTable {
  std::string name;
  NamedExprs key;       // name, Doris type
  NamedExprs cols;      // name, Doris type
  NamedExprs expected;  // name, source expression (all columns)
};
// `render`: the source expressions of the columns that are not their own
// rendering (w_orders: price, ts, doc; w_lines: amount).
std::vector<WorkTable> work_tables(const std::map<std::string, std::string>& render);

// Settings under `routing:`: w_orders takes its sequence column from the
// source position; w_soft, w_keep (by a routing rule) and w_xf their delete
// modes and transforms (with schemas w_xf is auto-created, its transformed column names
// shown by DESC; schemaless records need the table); w_gone is not loaded;
// with schemas, w_evo is created from the snapshot and evolved under `full` (docs/schema-evolution.md); schemaless records cannot
// say renames, drops or widenings, so that daemon leaves w_evo out (epoch
// integers of DATETIME columns take their unit from the column's scale).
std::string routing_tables(const Mode& m);

// The Doris database of `m` with `types` (the matrix), the workload tables and marker.
void create_doris_tables(Emulator& emu, const Mode& m, const Matrix& matrix, const std::vector<WorkTable>& tables);

// w_long and w_grow (source: id, note text) take strings of 1 to 20 bytes
// (ids 1..20) into a Doris VARCHAR(8): w_long under schema_evolution off,
// where the 12 that do not fit go to the dead-letter topic (docs/decoding.md
// "Rows that do not fit"), w_grow under add, which widens the column to
// VARCHAR(16), then VARCHAR(32) (docs/schema-evolution.md "Long strings").
// w_word (source: id, qty text) goes into a Doris INT column: the row check
// leaves words to Doris, which refuses them; the table is isolated and the
// records with words become dead letters with Doris' reason (docs/decoding.md
// "What Doris still rejects"), the numbers load.
inline constexpr const char* kLongStringTablesDdl =
    "CREATE TABLE w_long (id BIGINT PRIMARY KEY, note TEXT);\n"
    "CREATE TABLE w_grow (id BIGINT PRIMARY KEY, note TEXT);\n"
    "CREATE TABLE w_word (id BIGINT PRIMARY KEY, qty TEXT);\n";
// w_word's rows: ids 1..12, words at these.
inline constexpr int kWordIds[] = {3, 8, 9};
// Tables under per-table delete modes and column transforms (docs/decoding.md,
// "Delete modes", "Column transforms"), the same source SQL in both dialects:
// w_soft under `delete_mode: soft` with a deleted-at column, w_keep under
// `ignore`, w_xf with a rename (qty -> quantity), an exclude (secret),
// `column_case: upper` and a filter. Rows 1..20 in the snapshot, then
// settings_changes().
inline constexpr const char* kSettingsTablesDdl =
    "CREATE TABLE w_soft (id BIGINT PRIMARY KEY, qty INT, note TEXT);\n"
    "CREATE TABLE w_keep (id BIGINT PRIMARY KEY, qty INT, note TEXT);\n"
    "CREATE TABLE w_xf (id BIGINT PRIMARY KEY, status VARCHAR(16), qty INT, note TEXT, secret TEXT);\n";
inline constexpr const char* kXfFilter = "status != 'draft' AND qty >= 10";
std::string settings_snapshot();  // w_soft, w_keep, w_xf rows 1..20
// Statements (each its own transaction): updates, deletes, key changes and a
// key inserted again after its delete in w_soft and w_keep; w_xf's rows
// inserted matching the filter and not, updated into and out of it, deleted
// (matching and filtered keys) and key-changed.
std::vector<std::string> settings_changes();

// What differs between the sources for those tables. The source no longer
// holds a deleted row, so triggers log each row of w_soft and w_keep that a
// delete or key change removes into w_gone (seq ascending, tbl, id, qty,
// note), in the deleting transaction: the expected flagged rows and the
// delete's source time come from there.
struct SettingsDialect {
  std::string gone_ddl;  // w_gone and the triggers
  // Over `g` (a w_gone row): the source time of the delete that logged it
  // (Debezium's source.ts_ms) as Doris' DATETIME(3) deleted_at holds it in
  // decoding.time_zone.
  std::string deleted_at;
  std::string boolean;  // `{}` (an integer 0 or 1) as a JSON boolean in a row object
};

// The daemon's dead-letter topic (Daemon, source_e2e.cpp).
std::string dead_letter_topic(const Mode& m);

// The seed of the random workload: CDC2DORIS_SOURCE_SEED, else random.
uint32_t workload_seed();

// The source table w_evo is `CREATE TABLE w_evo (id <bigint> PRIMARY KEY, a
// <int>, s <varchar(10)>, old <text>, gone <int>)` with rows 1..20 in the
// snapshot; `evolution` its schema changes in the source's dialect, rows of
// the old and new shapes around each. Four slices of 50 workload
// transactions, each followed by four of the statements (each its own
// transaction), run through `exec`; after the second slice the source
// truncates w_lines (its truncate event reaches Kafka: skipped.operations none);
// after the first, w_long and w_grow get their rows 1..20; settings_changes()
// are spread over the four slices.
void run_workload_with_evolution(Workload& workload, const std::vector<std::string>& evolution,
                                 const std::function<void(const std::string&)>& exec);

// A daemon per mode, consuming its prefix's topics into its database; an
// Avro mode's daemon takes its schemas from `registry` (its Confluent API, or
// its own for `apicurio_ids`).
std::map<std::string, std::unique_ptr<Daemon>> start_daemons(const std::vector<Mode>& modes,
                                                             const std::string& bootstrap, Emulator& emu,
                                                             const std::function<std::string(const Mode&)>& routing,
                                                             const SchemaRegistry& registry);

// Topics are `<prefix>.<schema>.<table>` (PostgreSQL: public, MariaDB: the database).
// Until every mode's types, w_orders, w_lines and marker topics have records
// (types at least `matrix_rows`).
void wait_for_snapshot(const std::string& bootstrap, const std::vector<Mode>& modes, const std::string& schema,
                       int matrix_rows, KafkaConnect& connect, std::chrono::seconds timeout);
// Until the marker row written last (the table's second record) is in Kafka for every mode.
void wait_for_marker(const std::string& bootstrap, const std::vector<Mode>& modes, const std::string& schema,
                     KafkaConnect& connect, std::chrono::seconds timeout);

// What a source's scenario holds besides its database. It is set up once
// per test binary (`setup` through run()); each mode's test case compares its
// own Doris database against the same source, and reports a setup failure.
struct ScenarioState {
  std::unique_ptr<SchemaRegistry> registry;  // for the Avro modes
  std::unique_ptr<KafkaConnect> connect;
  std::unique_ptr<Emulator> emu;
  std::map<std::string, std::unique_ptr<Daemon>> daemons;  // by topic prefix
  std::unique_ptr<Workload> workload;
  uint32_t seed = 0;
  std::string setup_error;

  void run(const std::function<void()>& setup);
  // Spawns the schema registry and the Connect worker (with Apicurio's Avro
  // converter as a plugin) side by side; both JVMs start while the caller
  // prepares its database.
  void start_jvms(const std::string& bootstrap);
  // The snapshot's rows through `exec` (half the type matrix and a first
  // workload slice), and every mode's Doris tables.
  void snapshot(const Matrix& matrix, WorkloadDialect dialect, const std::vector<Mode>& modes,
                const std::vector<WorkTable>& tables, const std::function<void(const std::string&)>& exec);
  // Starts the connector of `m`: `config` plus its converter (JsonConverter
  // with or without schemas, or the Avro converter and the registry) and the
  // exact source types of w_evo's columns (`w_evo_columns`: the regex of its
  // columns for column.propagate.source.type).
  void create_connector(const Mode& m, std::map<std::string, std::string> config, const std::string& w_evo_columns);
};

// What the final check compares for one source.
struct SourceCheck {
  std::string schema;  // topic name part, as above
  const Matrix* matrix = nullptr;
  std::vector<WorkTable> tables;
  // The source table's rows, `cols` (name, expression) as one JSON object a line.
  // `table` may be a derived table, "(SELECT ...) x".
  std::function<std::vector<std::string>(const std::string& table, const NamedExprs& cols)> source_rows;
  const SettingsDialect* settings = nullptr;
};

// Waits until the mode's daemon committed every record in Kafka, then
// compares every table's Doris rows with the source's (and, with schemas,
// w_evo's rows and final columns; w_soft, w_keep and w_xf as their settings
// say; through Avro, that each of w_evo's schema changes reached Kafka as a
// new value schema id).
void check_mode(const Mode& m, const SourceCheck& c, ScenarioState& s);

}  // namespace cdc2doris::test::sources
