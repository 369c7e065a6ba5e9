#pragma once
// Column transforms of one target table (docs/decoding.md, "Column
// transforms"): which source columns are loaded, under which Doris names,
// which rows, and which columns are computed from the record's metadata.
// The decoder applies them while it writes a row; the pipeline's table
// creation and schema evolution see the same shape through target_name().
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/decode/row_filter.hpp"

namespace cdc2doris::decode {

// How a source column's name becomes its Doris name (an explicit rename wins).
enum class NameCase : uint8_t { AsIs, Lower, Upper };
const char* to_string(NameCase c);

// A column filled from the record's metadata rather than from a source column.
struct ComputedColumn {
  std::string name;  // the Doris column
  Meta source = Meta::Op;
  bool operator==(const ComputedColumn&) const = default;
};
// The Doris type an auto-created table gives a computed column.
const char* doris_type(Meta m);

struct ColumnTransforms {
  std::map<std::string, std::string> rename;  // source name -> Doris name
  std::vector<std::string> exclude;           // source names never loaded
  NameCase name_case = NameCase::AsIs;
  std::shared_ptr<const RowFilter> filter;    // nullptr: every row
  std::vector<ComputedColumn> computed;       // appended to every row, in this order

  bool operator==(const ColumnTransforms&) const = default;
  // Whether the names or the set of loaded columns change (the row is rewritten).
  bool reshapes() const { return !rename.empty() || !exclude.empty() || name_case != NameCase::AsIs; }
  bool any() const { return reshapes() || filter != nullptr || !computed.empty(); }
  bool excluded(std::string_view source) const;
  // The Doris name of a source column; nullopt when it is excluded.
  std::optional<std::string> target_name(std::string_view source) const;
  // The source column loaded into Doris column `target` (the inverse of
  // target_name() where it is one): a rename's source, else `target` itself.
  std::string source_name(std::string_view target) const;
};

}  // namespace cdc2doris::decode
