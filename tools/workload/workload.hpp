#pragma once
// Deterministic MySQL-style Debezium change stream + the state Doris must end
// up with. One generator for the decoder bench, the pipeline crash tests, the
// demo and the end-to-end bench, so they all agree on what "correct" means.
//
// The stream: N tables `{db}.orders_{i}` (BIGINT id primary key, decimals,
// DATETIME(6), TIMESTAMP(3), DATE, ENUM, TINYINT(1), VARCHAR, JSON), about
// 600 bytes per schemaless record. Each step picks a table and an operation
// (insert / update / delete / primary-key change = delete + create, optional
// snapshot reads first). Records are (topic, partition, key, value) with
// topic `{server}.{db}.{table}` and partition = fnv1a(key) % partitions, so
// all changes of one key stay ordered in one partition, as with Debezium.
//
// The model: per table, the rows Doris stores after all changes were applied
// (JSON objects exactly as cdc2doris::decode emits them, minus
// "__DORIS_DELETE_SIGN__"), keyed by id; plus change counts. Values are
// formatted by this file's own code (not the decoder's), so a round trip
// through the decoder is a real check.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/decode/decoder.hpp"

namespace cdc2doris::workload {

enum class Format {
  Plain,      // schemas.enable=false: the Debezium envelope only
  Schema,     // {"schema":…,"payload":…} (JsonConverter default)
  Flattened,  // ExtractNewRecordState, delete.tombstone.handling.mode=rewrite, with schema
};
const char* to_string(Format f);
std::optional<Format> parse_format(std::string_view s);

struct Options {
  uint64_t seed = 42;
  int tables = 8;
  std::string server = "dbserver1";  // topic.prefix
  std::string db = "shop";
  Format format = Format::Plain;
  int partitions = 4;
  // Operation mix for change steps (normalised; need not sum to 1).
  double insert_weight = 0.45;
  double update_weight = 0.35;
  double delete_weight = 0.12;
  double pk_change_weight = 0.08;
  int snapshot_rows_per_table = 0;  // 'r' events emitted before the first change
  bool tombstones = true;           // a null-value record after each delete (envelope formats)
  size_t note_chars = 24;           // VARCHAR payload size; ~600-byte plain records on average
  bool keep_change_log = false;     // keep every emitted Doris row (DUPLICATE KEY model)
  // The first `toast_tables` tables behave like PostgreSQL tables with a large
  // TOASTed column and the default replica identity (envelope formats): a
  // third of their updates leave `note` unchanged and send Debezium's
  // placeholder for it (a partial row), and deletes carry no before-image (a
  // key-only delete).
  int toast_tables = 0;
  // Percent of those tables' updates that send the placeholder; unset: a
  // third (the streams the tests were written against). The TOAST-heavy
  // bench raises it (with a heavier update mix) to reach 30% partial rows.
  std::optional<int> toast_partial_percent;
};

struct Record {
  std::string topic;
  int32_t partition = 0;
  std::string table;  // "db.table"
  std::string key;    // JSON (Kafka key bytes)
  std::optional<std::string> value;  // nullopt = tombstone
  char op = 0;                       // 'c','u','d','r', 0 for tombstones
  std::vector<std::pair<std::string, std::string>> headers;
};

struct TableModel {
  std::string name;                        // "db.table"
  std::map<int64_t, std::string> rows;     // id -> row JSON (no delete sign)
  uint64_t changes = 0;                    // change records (c/u/d/r) for this table
  uint64_t doris_rows = 0;                 // rows the decoder emits (a PK change emits 2 records)
  std::vector<std::string> change_log;     // every emitted row incl. delete sign (keep_change_log)
};

class Generator {
 public:
  explicit Generator(Options options);

  // Next record of the stream (snapshot reads first, then changes). A change
  // step can produce 1-3 records (delete + tombstone, PK change = d + tombstone + c);
  // they are queued and returned one by one.
  Record next();
  std::vector<Record> generate(size_t records);

  const Options& options() const { return opt_; }
  std::vector<std::string> tables() const;  // "db.table"
  // Model of everything returned by next() so far (records still queued
  // inside a step, e.g. the create of a primary-key change, are not in it).
  const std::map<std::string, TableModel>& expected() const { return model_; }
  uint64_t records_emitted() const { return emitted_; }

  // Doris DDL for one table ("db.table" or bare table name).
  std::string create_table_sql(const std::string& table, bool duplicate_key = false) const;
  // Decoder options that decode this stream to the model.
  decode::DecoderOptions decoder_options() const;
  // For Plain, the column types the schemaless records of db.table lost
  // (the same for the table they load into); nullptr otherwise.
  const decode::SchemaNode* column_types(std::string_view db, std::string_view table) const;
  // The context a change of this stream (identified) converts with.
  decode::TableContext table_context(const decode::Change& c) const;
  // Decoder::identify, table_context, Decoder::convert.
  std::optional<decode::DecodeError> decode(decode::Decoder& d, const decode::KafkaRecord& k, decode::Change& c) const;
  // The Connect schema of one table's row (JSON), as the Schema format sends it.
  const std::string& row_schema_json() const { return row_schema_; }

 private:
  struct Row;
  enum class Effect { None, Upsert, Erase };  // None: tombstone
  struct Queued {
    Record rec;
    Effect effect = Effect::None;
    int64_t id = 0;
    std::string row;             // Upsert: the Doris row (no delete sign)
    std::string change_log_row;  // keep_change_log: the row with its delete sign
  };
  void step();
  void apply(Queued& q);
  void emit_change(size_t table, char op, const Row* before, const Row* after);
  Row random_row(int64_t id);
  void mutate(Row& r);
  std::string payload_json(const Row& r, bool toast_note = false) const;
  std::string doris_json(const Row& r) const;

  Options opt_;
  std::mt19937_64 rng_;
  std::string row_schema_, key_schema_;
  std::shared_ptr<const decode::SchemaNode> row_node_;
  std::vector<std::string> table_names_;
  std::vector<std::map<int64_t, std::shared_ptr<Row>>> live_;
  std::vector<int64_t> next_id_;
  std::map<std::string, TableModel> model_;
  std::vector<Queued> queue_;
  size_t queue_pos_ = 0;
  uint64_t emitted_ = 0;
  int64_t binlog_pos_ = 4;
  int64_t ts_ms_ = 1700000000000;
  int snapshot_done_ = 0;
  bool toast_after_ = false;  // the next change's after-image sends the TOAST placeholder for `note`
  bool key_only_ = false;     // the next delete has no before-image
};

// Appends `s` as a JSON string literal (quotes, escapes) — the generators'
// own formatting, independent of the decoder's.
void put_string(std::string_view s, std::string& out);
// Minimal big-endian two's complement of v, as Kafka Connect's Decimal writes it.
std::string twos_complement(int64_t v);
// Removes the trailing `,"__DORIS_DELETE_SIGN__":N` of a decoder row.
std::string strip_delete_sign(std::string_view row_json);
// The partition function used for records (fnv1a-64 of the key bytes % n).
int32_t partition_for(std::string_view key, int partitions);

}  // namespace cdc2doris::workload
