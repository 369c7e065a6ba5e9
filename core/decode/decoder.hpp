#pragma once
// Debezium (Kafka Connect JsonConverter) record -> Doris Stream Load JSON rows.
//
// One Decoder per consumer thread: it owns a simdjson parser, a schema cache
// and reusable buffers, so it is NOT thread-safe; decoding is allocation-free
// once the buffers of `out` have grown to the working set.
//
// Two steps: identify() reads what the record is (kind, source table, op,
// position, key, DDL, row schema); the caller routes it to its target table
// and convert() writes its rows with that table's context (TableContext).
// decode() is both with one context for every record.
//
// Output contract (docs/decoding.md has the full type table):
//  - Row::json is one compact JSON object without newline; the pipeline
//    appends row.json + '\n' to a `format: json, read_json_by_line: true`
//    body that sends `hidden_columns: __DORIS_DELETE_SIGN__` (or lists it in
//    `columns`). Every row carries "__DORIS_DELETE_SIGN__":0 or 1.
//  - Row::partial_columns empty: a full row. Non-empty: the row carries only
//    these JSON keys (in order, including __DORIS_DELETE_SIGN__ and extra
//    columns) and must be loaded as a partial-column update
//    (`partial_columns: true` + `columns: <these>`), one column set per load.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/error.hpp"
#include "core/decode/connect_schema.hpp"
#include "core/decode/transforms.hpp"

namespace cdc2doris::decode {

struct KafkaRecord {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string_view> key;    // nullopt = Kafka null
  std::optional<std::string_view> value;  // nullopt = tombstone
  std::vector<std::pair<std::string_view, std::string_view>> headers;
};

enum class Envelope {
  Auto,       // {"schema","payload"} wrapper detected; payload must be a Debezium envelope
  Schema,     // wrapper required
  Plain,      // no wrapper (schemas.enable=false)
  Flattened,  // ExtractNewRecordState output, wrapper detected
};

enum class BinaryMode { Base64, Hex };
enum class GeometryMode { Wkt, Hex };

struct FlattenedFields {
  std::string deleted = "__deleted";  // "true"/"false" (rewrite modes)
  std::string op = "__op";
  std::string table = "__table";
  std::string db = "__db";
  std::string schema = "__schema";
  std::string source_ts = "__source_ts_ms";
  std::string lsn = "__lsn";
  // Fields with this prefix are SMT metadata and are not written to Doris.
  // Empty = keep every field.
  std::string metadata_prefix = "__";
};

// Columns the decoder can add to every row (names; empty = off).
struct ExtraColumns {
  std::string op;         // "c","u","d","r" as a string
  std::string source_ts;  // source.ts_ms (int64)
  std::string sequence;   // SourcePosition::sequence() (int64 or null), for a Doris sequence column
  bool any() const { return !op.empty() || !source_ts.empty() || !sequence.empty(); }
};

// What a source delete does to its Doris row (docs/decoding.md, "Delete modes").
//  Hard:   a row with __DORIS_DELETE_SIGN__ 1 (Doris removes the key).
//  Soft:   the row stays: an upsert with `soft_column` true (and
//          `deleted_at_column` from source.ts_ms); every other row of the
//          table carries the flag false (and deleted_at null).
//  Ignore: no row; counted in Change::deletes_ignored.
enum class DeleteMode { Hard, Soft, Ignore };
const char* to_string(DeleteMode m);
std::optional<DeleteMode> parse_delete_mode(std::string_view s);

struct DeleteOptions {
  DeleteMode mode = DeleteMode::Hard;
  // The name Debezium's ExtractNewRecordState gives the same flag
  // (delete.handling.mode=rewrite), so queries written for it carry over; the
  // leading underscores keep it apart from source columns. BOOLEAN.
  std::string soft_column = "__deleted";
  // DATETIME(3): source.ts_ms in decoding.time_zone; empty = no such column.
  std::string deleted_at_column;
  bool operator==(const DeleteOptions&) const = default;
};

enum class Kind { Change, Tombstone, Heartbeat, TransactionMetadata, SchemaChange, Truncate, Message };
const char* to_string(Kind k);

struct SourcePosition {
  std::string connector;  // "mysql", "postgresql", ...
  std::optional<int64_t> ts_ms;
  std::string snapshot;  // "" when not a snapshot ("false"/null/false are normalised to "")
  // MySQL / MariaDB
  std::string file;
  std::optional<int64_t> pos;
  std::optional<int64_t> row;
  std::string gtid;
  // PostgreSQL
  std::optional<int64_t> lsn;
  std::optional<int64_t> tx_id;
  // SQL Server
  std::string commit_lsn, change_lsn;
  std::optional<int64_t> event_serial_no;
  // Oracle
  std::string scn, commit_scn;

  void clear();
  // A monotonic int64 for a Doris sequence column, where the connector's
  // position allows one (see docs/decoding.md): MySQL binlog index/pos/row,
  // PostgreSQL lsn, Oracle commit_scn/scn. nullopt otherwise.
  std::optional<int64_t> sequence() const;
};

struct Row {
  std::string json;
  std::vector<std::string> partial_columns;
  // A source delete written as an upsert with the soft-delete flag true
  // (DeleteMode::Soft); is_delete() is false for it.
  bool soft_delete = false;
  bool is_delete() const;
};

struct Change {
  Kind kind = Kind::Change;
  std::string db, schema, table;
  char op = 0;  // 'c','u','d','r','t','m' or 0 when not applicable
  std::vector<std::string> key_columns;
  SourcePosition position;
  std::vector<Row> rows;
  bool primary_key_changed = false;
  // Delete rows dropped by DeleteMode::Ignore (a key change's old-key delete too).
  uint32_t deletes_ignored = 0;
  // Row images the table's filter did not match: a create or snapshot read
  // dropped, an update turned into a key-only delete (ColumnTransforms::filter).
  uint32_t rows_filtered = 0;
  std::string ddl;  // schema-change records: the DDL text when present
  // The row's Connect schema (the after-image struct, the row itself when
  // flattened) when the record carried one; nullptr for schemaless records.
  // Owned by the decoder's schema cache: valid until the next identify(); a
  // new schema text gives a new node (DecodeStats::schema_cache_misses moves).
  const SchemaNode* row_schema = nullptr;
  // A schemaless record typed by its Doris table (TableContext::column_types) had a
  // JSON key the table has no column for (the row carries it as it came).
  bool unknown_columns = false;
};

enum class DecodeErrorCode {
  InvalidJson,
  InvalidUtf8,
  TooDeep,
  TooLarge,
  MissingField,
  BadOp,
  TypeMismatch,
  NotAnEnvelope,
  MissingKey,
  Unsupported,
  SchemaInvalid,
  DoesNotFit,  // a row value its Doris column cannot take (RowCheck, run by the pipeline)
  RejectedByDoris,  // rows Doris refused to load (found by the pipeline's isolation)
  // decoding.format avro (core/avro): not Confluent-framed Avro its schema describes
  InvalidAvro,
  UnknownSchemaId,  // the schema registry has no schema under the record's id
  UnknownFormat,    // decoding.format auto: a key or value neither JSON nor Avro
};
const char* to_string(DecodeErrorCode c);

// What becomes of a bad record (delivery.bad_records): the pipeline acts on
// it, `cdc2doris decode` says what the pipeline would do.
enum class BadRecordPolicy { Fail, Skip, DeadLetter };
const char* to_string(BadRecordPolicy p);
std::optional<BadRecordPolicy> parse_bad_record_policy(std::string_view s);  // to_string()'s names

struct DecodeError {
  DecodeErrorCode code = DecodeErrorCode::InvalidJson;
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string path;      // e.g. "value.payload.after.amount"
  std::string expected;  // what the decoder needed there
  std::string detail;    // what it found / the underlying parser error

  // "topic/partition@offset: value.payload.after.amount: expected Decimal (base64 bytes): got a number"
  std::string message() const;
  // For the pipeline: data errors are Disposition::Fail (policy decides).
  Error to_error() const;
};

struct DecodeStats {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t changes = 0;
  uint64_t rows = 0;
  uint64_t deletes = 0;
  uint64_t partial_rows = 0;
  uint64_t soft_deletes = 0;     // deletes written as flagged upserts (DeleteMode::Soft)
  uint64_t deletes_ignored = 0;  // delete rows dropped (DeleteMode::Ignore)
  uint64_t rows_filtered = 0;    // row images the filter did not match (Change::rows_filtered)
  uint64_t primary_key_changes = 0;
  uint64_t tombstones = 0;
  uint64_t heartbeats = 0;
  uint64_t transaction_records = 0;
  uint64_t schema_changes = 0;
  uint64_t truncates = 0;
  uint64_t messages = 0;
  uint64_t errors = 0;
  uint64_t schema_cache_misses = 0;
  // {schema, payload} keys and values whose schema text was recognised as
  // the topic's previous one by comparing bytes instead of parsing them.
  uint64_t schemas_recognised = 0;
};

// Settings of one table that change how its rows are written.
struct TableOptions {
  std::vector<std::string> key_columns;       // empty: the Kafka key's fields
  std::optional<ExtraColumns> extra_columns;  // nullopt: DecoderOptions::extra_columns
  std::optional<DeleteOptions> deletes;       // nullopt: DecoderOptions::deletes
  std::optional<ColumnTransforms> transforms;  // nullopt: DecoderOptions::transforms
};

// What the record's target table tells the conversion of its values. The
// pipeline routes an identified record once and looks these up by target
// (core/pipeline/table_routing.hpp); the decoder neither routes nor reads
// Doris. nullptr = none (DecoderOptions' own settings; schemaless values as
// they arrive).
struct TableContext {
  const TableOptions* options = nullptr;  // valid until convert() returns
  // Schemaless records (schemas.enable=false lose the types): a Connect
  // struct schema for the row, found by source column name
  // (core/decode/doris_types.hpp builds it from the Doris table). The
  // decoder converts a topic's next record with it while scanning, before
  // that record's context is known (a prediction, checked by address): it
  // must stay valid as long as the Decoder, and the same types keep one address.
  const SchemaNode* column_types = nullptr;
};

struct DecoderOptions {
  Envelope envelope = Envelope::Auto;
  // false: ignore the {"schema"} part and decode the payload as schemaless
  // (escape hatch for producers whose schema contradicts their payload).
  bool use_schema = true;
  // false: parse every record's schema text even when it repeats the
  // topic's previous one byte for byte (tests compare both ways).
  bool recognise_repeated_schemas = true;
  FlattenedFields flattened;
  // IANA name for ZonedTimestamp/ZonedTime conversion ("UTC", "Asia/Shanghai").
  std::string time_zone = "UTC";
  BinaryMode binary_mode = BinaryMode::Base64;
  GeometryMode geometry_mode = GeometryMode::Wkt;
  // unavailable.value.placeholder; its base64, hex and array forms are derived.
  // Not a braced list: GCC 12 crashes (check_noexcept_r) when Boost.PFR
  // counts the members of a struct with one (tests/config/keys_test.cpp).
  std::vector<std::string> toast_placeholders = std::vector<std::string>(1, "__debezium_unavailable_value");
  size_t max_depth = 32;  // nesting inside a row value
  size_t max_record_bytes = 16 * 1024 * 1024;
  ExtraColumns extra_columns;
  std::map<std::string, ExtraColumns> extra_columns_per_table;  // "db.table" -> overrides the default
  DeleteOptions deletes;  // TableOptions::deletes overrides it per table
  // Column transforms of every table (routing.column_case); TableOptions::transforms overrides it.
  ColumnTransforms transforms;
  // Key columns when the Kafka key is null or not the PK ("db.table" -> names).
  std::map<std::string, std::vector<std::string>> key_columns;
};

class Decoder {
 public:
  // Throws std::invalid_argument for an unknown time zone.
  explicit Decoder(DecoderOptions options);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // Reads what `record` is into `out` (buffers reused): kind, db/schema/table,
  // op, position, ddl, row_schema; no rows yet. The record's bytes, parsed
  // once, stay with the decoder for convert(): `record` (and what it views)
  // must stay alive until then. On error `out` is unspecified and there is
  // nothing to convert.
  std::optional<DecodeError> identify(const KafkaRecord& record, Change& out);
  // Whether the record identified last converts values without a Connect
  // schema: TableContext::column_types would type them (a schemaless change;
  // not a tombstone, which carries only its key).
  bool wants_column_types() const;
  // Writes the rows (and key_columns) of the record identified last, with
  // its target's context. Only right after a successful identify() of the
  // record, with the same `out`, once. On success out.kind says what the
  // record was; only Kind::Change has rows. On error `out` is unspecified.
  std::optional<DecodeError> convert(const TableContext& context, Change& out);
  // identify() + convert(context): for callers that route nothing.
  std::optional<DecodeError> decode(const KafkaRecord& record, Change& out, const TableContext& context = {});

  const DecodeStats& stats() const;
  const DecoderOptions& options() const;

 private:
  struct Impl;
  // Declared in detail/decoder_impl.hpp; its files are built for the SIMD
  // level simdjson's On-Demand API needs; the constructor checks the CPU first.
  struct ImplDeleter {
    void operator()(Impl* p) const;
  };
  static std::unique_ptr<Impl, ImplDeleter> make_impl(DecoderOptions options);
  std::unique_ptr<Impl, ImplDeleter> impl_;
};

}  // namespace cdc2doris::decode
