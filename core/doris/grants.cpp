#include "core/doris/grants.hpp"

#include <cctype>

namespace cdc2doris::doris {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// "Select_priv,Load_priv" / "Admin_priv Node_priv  (false)" -> {SELECT_PRIV, LOAD_PRIV}.
std::set<std::string> priv_set(const std::string& cell) {
  std::set<std::string> out;
  std::string word;
  auto flush = [&]() {
    if (word.size() > 5 && upper(word).ends_with("_PRIV")) out.insert(upper(word));
    word.clear();
  };
  for (char c : cell) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') word.push_back(c);
    else flush();
  }
  flush();
  return out;
}

// "internal.shop.orders" / "default_cluster:shop.orders" / "shop" -> "shop.orders" / "shop".
std::string object_name(std::string s) {
  if (auto colon = s.find(':'); colon != std::string::npos) s = s.substr(colon + 1);  // 1.x cluster prefix
  if (s.rfind("internal.", 0) == 0) s = s.substr(9);
  return s;
}

// "a: privs; b: privs" -> {a: privs, b: privs}
std::map<std::string, std::set<std::string>> entries(const std::string& cell) {
  std::map<std::string, std::set<std::string>> out;
  if (cell.empty() || cell == "\\N" || cell == "N/A") return out;
  size_t start = 0;
  while (start < cell.size()) {
    size_t end = cell.find("; ", start);
    std::string e = cell.substr(start, end == std::string::npos ? std::string::npos : end - start);
    // The object and its privileges are separated by the last ": " (1.x
    // object names contain "default_cluster:").
    if (auto sep = e.rfind(": "); sep != std::string::npos) {
      auto& privs = out[object_name(e.substr(0, sep))];
      for (auto& p : priv_set(e.substr(sep + 2))) privs.insert(p);
    }
    if (end == std::string::npos) break;
    start = end + 2;
  }
  return out;
}

}  // namespace

bool Grants::holds(const std::string& priv, const std::string& db, const std::string& table) const {
  auto in = [&](const std::set<std::string>& s) { return s.count(priv) || s.count("ADMIN_PRIV"); };
  if (in(global)) return true;
  if (auto it = dbs.find(db); it != dbs.end() && in(it->second)) return true;
  if (auto it = tables.find(db + "." + table); it != tables.end() && in(it->second)) return true;
  return false;
}

std::optional<Grants> parse_grants(const SqlResult& r) {
  auto col = [&](const char* name) -> int {
    for (size_t i = 0; i < r.columns.size(); ++i)
      if (r.columns[i] == name) return static_cast<int>(i);
    return -1;
  };
  const int g = col("GlobalPrivs"), d = col("DatabasePrivs"), t = col("TablePrivs");
  if (g < 0 || d < 0 || t < 0 || r.rows.empty()) return std::nullopt;
  const auto& row = r.rows.front();
  auto cell = [&](int i) { return static_cast<size_t>(i) < row.size() ? row[static_cast<size_t>(i)].value_or("") : ""; };
  Grants out;
  out.global = priv_set(cell(g));
  out.dbs = entries(cell(d));
  out.tables = entries(cell(t));
  return out;
}

}  // namespace cdc2doris::doris
