#pragma once
// Rows checked against their Doris columns before they are loaded
// (issue 33 item 4, docs/decoding.md "Rows that do not fit").
//
// A row Doris rejects fails its whole Stream Load: with strict mode (full
// rows) or a too-long string (always) the load ends in
// `[DATA_QUALITY_ERROR]too many filtered rows`, the epoch is re-read and
// rejected again, and the pipeline stops, naming a Doris error log instead
// of the record. Checked here first, a row that cannot fit is a bad record
// of its own source record (topic/partition@offset, the column, the start of
// the value and the limit) under delivery.bad_records, and every other row
// still loads.
//
// The limits are Doris BE's row validation (be/src/vec/sink/
// vtablet_block_convertor.cpp `_validate_column`, the serdes under
// be/src/vec/data_types/serde/) as tools/doris_emulator/values.cpp models
// them:
//   CHAR(n)/VARCHAR(n)  at most n bytes of UTF-8 (the length is in bytes)
//   DECIMAL(p,s)        at most p-s digits before the point (the fraction is
//                       rounded to s digits, never refused)
//   TINYINT..LARGEINT   the type's range
//   DATE/DATETIME       year 0000..9999 (the decoder writes others with a
//                       sign or a fifth digit)
//   NOT NULL            without a default: no null, and a full row must
//                       carry the column
// Values in a form the check does not read (a word for an INT, a date in
// another layout) are left to Doris, which still rejects them.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cdc2doris::decode {

struct ColumnLimit {
  enum class Kind : uint8_t { None, Bytes, Decimal, Integer, Date };
  std::string name;
  std::string type;  // as Doris names it, for messages ("VARCHAR(10)")
  Kind kind = Kind::None;
  uint32_t max_bytes = 0;  // Bytes
  int int_digits = 0;      // Decimal: precision - scale
  int bits = 0;            // Integer: 8, 16, 32, 64, 128
  bool not_null = false;   // NOT NULL without a default
};

struct RowViolation {
  ColumnLimit::Kind kind = ColumnLimit::Kind::None;
  uint64_t bytes = 0;  // Bytes: the value's length
  std::string column;
  std::string expected;  // "VARCHAR(10): at most 10 bytes"
  std::string detail;    // "23 bytes: \"The quick brown fox jumps over t\"..."
};

class RowCheck {
 public:
  // Columns without any limit are dropped; `checks()` is false when none is left.
  explicit RowCheck(std::vector<ColumnLimit> columns);
  ~RowCheck();
  RowCheck(const RowCheck&) = delete;
  RowCheck& operator=(const RowCheck&) = delete;

  bool checks() const;
  // `row` is one decoder output row (compact JSON object). `full_row`: every
  // column of the table is loaded from it (not a partial-column update), so
  // an absent NOT NULL column is a violation too.
  std::optional<RowViolation> check(std::string_view row, bool full_row);
  // The same, parsing `row` where it is: its capacity is grown (once, for a
  // reused string) to what the parser may read past the end, instead of
  // copying every row.
  std::optional<RowViolation> check_in_place(std::string& row, bool full_row);

 private:
  struct Impl;
  // Defined with the decoder's hot files (detail/decoder_impl.hpp's ISA).
  struct ImplDeleter {
    void operator()(Impl* p) const;
  };
  static std::unique_ptr<Impl, ImplDeleter> make_impl(std::vector<ColumnLimit> columns);
  std::unique_ptr<Impl, ImplDeleter> impl_;
};

}  // namespace cdc2doris::decode
