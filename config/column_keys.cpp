#include "config/column_keys.hpp"

#include "config/config.hpp"
#include "config/reader.hpp"

namespace cdc2doris::config {

keys::Check<std::string> column_name(bool may_be_empty) {
  return [may_be_empty](const Reader& r, const YAML::Node& n, const std::string& where, const std::string& v) {
    if (v.empty() && !may_be_empty) r.fail(n.Mark(), where, "expected a column name, got an empty string");
    if (v.starts_with("__DORIS_")) r.fail(n.Mark(), where, "'" + v + "' is a Doris hidden column name");
  };
}

const std::vector<std::pair<std::string, decode::NameCase>>& name_cases() {
  static const std::vector<std::pair<std::string, decode::NameCase>> names = {
      {"as_is", decode::NameCase::AsIs}, {"lower", decode::NameCase::Lower}, {"upper", decode::NameCase::Upper}};
  return names;
}

void check_column(const Reader& r, const YAML::Node& n, const std::string& where, const std::string& v) {
  column_name(false)(r, n, where, v);
}

std::vector<decode::ComputedColumn> read_computed(const Reader& r, const YAML::Node& n, const std::string& where) {
  if (!n.IsMap()) r.expected(n, where, "a map of Doris column: metadata (" + decode::meta_names() + ")");
  std::vector<decode::ComputedColumn> out;
  for (const auto& kv : n) {
    const std::string col = kv.first.Scalar();
    check_column(r, kv.first, where, col);
    const std::string what = r.str(kv.second, where + "." + col);
    const auto m = decode::parse_meta(what);
    if (!m) r.expected(kv.second, where + "." + col, "one of " + decode::meta_names());
    out.push_back({col, *m});
  }
  return out;
}

YAML::Node show_computed(const std::vector<decode::ComputedColumn>& cols) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& c : cols) out[c.name] = decode::to_string(c.source);
  return out;
}

// routing.tables.*.filter / routing.rules.*.filter: parsed here, once; a syntax error names its
// place in the file (Reader::locate), else the scalar's and the place inside
// the expression.
std::shared_ptr<const decode::RowFilter> read_filter(const Reader& r, const YAML::Node& n, const std::string& where) {
  const std::string text = r.str(n, where);
  try {
    return decode::RowFilter::parse(text);
  } catch (const decode::FilterSyntaxError& e) {
    const std::string what = std::string("invalid filter: ") + e.what();
    const std::string grammar = "; grammar in docs/decoding.md (\"Column transforms\")";
    if (auto at = r.locate(n, text, e.offset)) r.fail(*at, where, what + grammar);
    r.fail(n.Mark(), where,
           what + " (line " + std::to_string(e.line) + ", column " + std::to_string(e.column) + " of the expression)" +
               grammar);
  }
}

}  // namespace cdc2doris::config
