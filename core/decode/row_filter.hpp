#pragma once
// Row filters (routing.tables.<t>.filter; docs/decoding.md, "Column
// transforms"): a small expression language over a row's source column values
// and the record's metadata, parsed once when the configuration is read and
// evaluated per row by the decoder. The grammar:
//
//   expr      := or
//   or        := and ( OR and )*
//   and       := unary ( AND unary )*
//   unary     := NOT unary | '(' expr ')' | predicate
//   predicate := operand ( cmp literal
//                        | [NOT] IN '(' literal ( ',' literal )* ')'
//                        | IS [NOT] NULL
//                        | [NOT] STARTS WITH string
//                        | [NOT] MATCHES string | '~' string )
//   cmp       := '=' | '!=' | '<>' | '<' | '<=' | '>' | '>='
//   operand   := name | `any name` | @metadata
//   literal   := 'string' ('' is a quote) | number | TRUE | FALSE
//
// Keywords are case-insensitive, column names are not (they are source
// names, as the record carries them). Evaluation is SQL's three-valued logic;
// a row loads only when the filter is true.
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cdc2doris::decode {

// Record metadata a filter reads (@name) and a computed column takes.
enum class Meta : uint8_t {
  Op,             // "c", "u", "d", "r"
  SourceTs,       // source.ts_ms
  SourceDb,       // source.db
  SourceSchema,   // source.schema
  SourceTable,    // source.table
  Connector,      // source.connector
  Snapshot,       // source.snapshot ("true", "last", ...; null when not a snapshot)
  Topic,          // the Kafka topic
  Partition,      // the Kafka partition
  Offset,         // the Kafka offset
  Sequence,       // SourcePosition::sequence() (null when the connector has none)
};
inline constexpr Meta kAllMeta[] = {Meta::Op,        Meta::SourceTs, Meta::SourceDb,  Meta::SourceSchema,
                                    Meta::SourceTable, Meta::Connector, Meta::Snapshot, Meta::Topic,
                                    Meta::Partition, Meta::Offset,   Meta::Sequence};
const char* to_string(Meta m);  // "op", "source_ts", "source.db", ...
std::optional<Meta> parse_meta(std::string_view name);
// Comma-separated names, for error messages and docs.
std::string meta_names();

// A value as the filter sees it.
struct FilterValue {
  enum class Kind : uint8_t {
    Null,
    Bool,         // text: "true" / "false"
    Number,       // text: a JSON number
    String,       // text: the unescaped content
    Other,        // an object or array: its JSON text
    Unavailable,  // a TOAST placeholder: the value exists but the record does not carry it
    Missing,      // the row has no such column
  };
  Kind kind = Kind::Null;
  std::string_view text;
};

class FilterSyntaxError : public std::runtime_error {
 public:
  // line and column are 1-based, within the expression's text.
  FilterSyntaxError(const std::string& what, size_t offset, size_t line, size_t column)
      : std::runtime_error(what), offset(offset), line(line), column(column) {}
  size_t offset, line, column;
};

class RowFilter {
 public:
  // Throws FilterSyntaxError naming where in `text` and what was expected.
  static std::shared_ptr<const RowFilter> parse(std::string_view text);

  enum class Verdict : uint8_t { Match, NoMatch, Unavailable, Missing };
  struct Result {
    Verdict verdict = Verdict::NoMatch;
    int slot = -1;  // Unavailable / Missing: the column (an index into columns())
  };
  // What the row holds: column(slot) for columns()[slot], and metadata.
  class Inputs {
   public:
    virtual FilterValue column(size_t slot) const = 0;
    virtual FilterValue meta(Meta m) const = 0;

   protected:
    ~Inputs() = default;
  };
  // Match: load the row. NoMatch: false or unknown (a NULL compared).
  // Unavailable: the outcome depends on a column the record left out (TOAST).
  // Missing: the expression names a column the row does not have.
  Result evaluate(const Inputs& in) const;

  const std::string& text() const { return text_; }
  // The source columns the expression reads, each once; slots index it.
  const std::vector<std::string>& columns() const { return columns_; }

  struct Node;
  RowFilter();
  ~RowFilter();

 private:
  friend class FilterParser;
  std::string text_;
  std::vector<std::string> columns_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

// Compares two decimal numbers written as text (JSON number grammar, and
// decimal text with a leading '+'), exactly, whatever their length: -1, 0, 1.
// nullopt when either is not a number.
std::optional<int> compare_decimal_text(std::string_view a, std::string_view b);

}  // namespace cdc2doris::decode
