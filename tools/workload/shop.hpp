#pragma once
// The shop scenario of the shared workload generator: a realistic Debezium
// MySQL change stream of a small shop, for the demo (issue 7 §7), tests and
// benchmarks. tools/workload/README.md describes it.
//
// Four tables of distinct schemas:
//   customers   (id BIGINT PK, name, email, created_at TIMESTAMP, loyalty_points INT, birth_date DATE NULL)
//   products    (id BIGINT PK, sku, name, price DECIMAL(10,2), stock INT, updated_at DATETIME(6))
//   orders      (id BIGINT PK, customer_id, status ENUM, total DECIMAL(12,2), placed_at DATETIME(6), shipped_on DATE NULL)
//   order_items (order_id + line_no composite PK, product_id, quantity, unit_price DECIMAL(10,2))
// driven by business events (sign-up, restock, price change, place / pay /
// ship / deliver / cancel / edit / purge an order, customer id migration),
// so the stream has inserts, updates, deletes (+ tombstones), primary-key
// changes (Debezium's delete + tombstone + create, with __debezium.newkey /
// __debezium.oldkey headers), decimals, timestamps, dates and NULLs.
//
// Envelopes are chosen per table (default: customers and products plain,
// schemas.enable=false; orders and order_items with the JsonConverter schema
// wrapper), so one consumer with `decoding.envelope: auto` sees both.
//
// The model: per table, the rows Doris stores after every record returned by
// next() so far was applied (JSON objects exactly as cdc2doris::decode emits
// them with default options, minus "__DORIS_DELETE_SIGN__"), keyed by the
// primary-key values. Plain tables carry raw Connect values (decimal bytes as
// base64, DATETIME(6) as epoch micros, DATE as epoch days, TIMESTAMP as an
// ISO-8601 string), so their DDL uses BIGINT / INT / STRING columns; schema
// tables get typed DDL (DECIMAL, DATETIME(6), DATE). Values are formatted by
// this file's code, not by the decoder, so the round trip is a real check.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/decode/decoder.hpp"
#include "tools/workload/workload.hpp"

namespace cdc2doris::workload {

struct ShopOptions {
  uint64_t seed = 42;
  std::string server = "shop";  // topic.prefix
  std::string db = "shop";
  int partitions = 4;
  // Envelope per table: Format::Plain or Format::Schema (Flattened is rejected).
  Format customers = Format::Plain;
  Format products = Format::Plain;
  Format orders = Format::Schema;
  Format order_items = Format::Schema;
  // Initial snapshot ('r' records, source.snapshot true/last) before the changes.
  int snapshot_customers = 20;
  int snapshot_products = 12;
  bool tombstones = true;  // a null-value record after each delete
};

struct ShopTableModel {
  std::string name;                               // "db.table"
  std::vector<std::string> key_columns;           // {"id"} or {"order_id","line_no"}
  std::map<std::vector<int64_t>, std::string> rows;  // key values -> row JSON (no delete sign)
  uint64_t changes = 0;     // c/u/d/r records
  uint64_t tombstones = 0;  // null-value records
};

struct ShopStats {
  uint64_t steps = 0;  // business events (incl. snapshot rows)
  uint64_t snapshot_reads = 0, inserts = 0, updates = 0, deletes = 0, tombstones = 0;
  uint64_t pk_changes = 0;  // delete + tombstone + create triples
};

class ShopGenerator {
 public:
  // The table names, in DDL / dependency order.
  static const std::vector<std::string>& table_names();  // customers, products, orders, order_items

  // Throws std::invalid_argument for bad options.
  explicit ShopGenerator(ShopOptions options = {});
  ~ShopGenerator();
  ShopGenerator(const ShopGenerator&) = delete;
  ShopGenerator& operator=(const ShopGenerator&) = delete;

  // Next record. A business event emits 1..~15 records (e.g. placing an order:
  // the order, its lines and the stock updates); they are queued and returned
  // one by one. The model follows the records returned, so any cut is exact.
  Record next();
  std::vector<Record> generate(size_t records);
  // Whole business events: returns every record of the next `steps` events.
  std::vector<Record> generate_steps(size_t steps);
  // True when every record of the events generated so far was returned.
  bool at_step_boundary() const;

  const ShopOptions& options() const;
  std::vector<std::string> tables() const;  // "db.table", in table_names() order
  // Envelope of a table ("db.table" or bare name).
  Format format_of(std::string_view table) const;
  const std::vector<std::string>& key_columns(std::string_view table) const;

  // Model of every record returned by next() so far, by "db.table".
  const std::map<std::string, ShopTableModel>& expected() const;
  const ShopStats& stats() const;
  uint64_t records_emitted() const;

  // Doris DDL for one table ("db.table" or bare name): UNIQUE KEY (or
  // DUPLICATE KEY) on the primary key, typed columns for schema-envelope
  // tables, raw-value columns (BIGINT/INT/STRING with a COMMENT naming the
  // MySQL type) for plain tables.
  std::string create_table_sql(const std::string& table, bool duplicate_key = false) const;
  // Decoder options this stream decodes to the model with: the defaults
  // (envelope auto, UTC, no schemaless type hints).
  decode::DecoderOptions decoder_options() const;
  // {"order_id":3,"line_no":1} for a model key of order_items.
  std::string key_json(std::string_view table, const std::vector<int64_t>& key) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cdc2doris::workload
