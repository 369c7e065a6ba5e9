#include "config/reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "config/config.hpp"
#include "config/keys.hpp"

namespace cdc2doris::config {

namespace {
std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    default: return "an undefined value";
  }
}
}  // namespace

std::optional<YAML::Mark> Reader::locate(const YAML::Node& n, std::string_view value, size_t offset) const {
  const YAML::Mark start = n.Mark();
  if (source_.empty() || start.is_null() || start.pos < 0 || static_cast<size_t>(start.pos) >= source_.size())
    return std::nullopt;
  size_t j = static_cast<size_t>(start.pos);
  const char style = source_[j];
  if (style == '"' || style == '\'') {
    ++j;
  } else if (style == '|' || style == '>') {
    j = source_.find('\n', j);  // the content starts on the next line
    if (j == std::string_view::npos) return std::nullopt;
  }
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (size_t i = 0; i < offset && i < value.size(); ++i) {
    // Line breaks and indentation the scalar folded or stripped.
    while (j < source_.size() && source_[j] != value[i] && blank(source_[j])) ++j;
    if (j < source_.size() && source_[j] == '\\' && style == '"' && value[i] != '\\') return std::nullopt;  // an escape
    if (j < source_.size() && source_[j] == '\'' && style == '\'' && value[i] == '\'') ++j;  // '' is one quote
    if (j >= source_.size() || source_[j] != value[i]) return std::nullopt;
    ++j;
  }
  while (j < source_.size() && offset < value.size() && source_[j] != value[offset] && blank(source_[j])) ++j;
  YAML::Mark at = start;
  at.pos = static_cast<int>(j);
  at.line = 0;
  at.column = 0;
  for (size_t k = 0; k < j; ++k) {
    if (source_[k] == '\n') {
      ++at.line;
      at.column = 0;
    } else {
      ++at.column;
    }
  }
  return at;
}

void Reader::fail(const YAML::Mark& mark, const std::string& path, const std::string& msg) const {
  std::ostringstream os;
  os << file_;
  if (!mark.is_null()) os << ':' << mark.line + 1 << ':' << mark.column + 1;
  os << ": " << path << ": " << msg;
  throw ConfigError(os.str());
}

void Reader::expected(const YAML::Node& n, const std::string& path, const std::string& what) const {
  // Secret keys have no user-chosen names in their path, so the path finds them.
  const KeyInfo* key = find_key(path);
  std::string got = (key && key->secret) ? "a value (hidden: secret)" : describe(n);
  fail(n.Mark(), path, "expected " + what + ", got " + got);
}

std::string Reader::substitute(const YAML::Node& n, const std::string& path) const {
  const std::string& in = n.Scalar();
  if (in.find('$') == std::string::npos) return in;
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '$') {
      out += in[i];
      continue;
    }
    if (i + 1 < in.size() && in[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (i + 1 >= in.size() || in[i + 1] != '{') {
      out += '$';
      continue;
    }
    size_t close = in.find('}', i + 2);
    if (close == std::string::npos) fail(n.Mark(), path, "unterminated ${...} in '" + in + "'");
    std::string expr = in.substr(i + 2, close - i - 2);
    std::optional<std::string> def;
    if (auto d = expr.find(":-"); d != std::string::npos) {
      def = expr.substr(d + 2);
      expr.resize(d);
    }
    std::optional<std::string> val = lookup(expr);
    if (!val || (val->empty() && def)) {
      if (!def) fail(n.Mark(), path, "environment variable " + expr + " is not set (use ${" + expr + ":-default})");
      val = def;
    }
    out += *val;
    i = close;
  }
  return out;
}

std::string Reader::str(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) expected(n, path, "a string");
  return substitute(n, path);
}

int64_t Reader::integer(const YAML::Node& n, const std::string& path, const std::optional<Bounds>& bounds) const {
  std::string s = str(n, path);
  std::optional<int64_t> v;
  try {
    size_t used = 0;
    long long parsed = std::stoll(s, &used);
    if (used == s.size()) v = parsed;
  } catch (const std::exception&) {
  }
  if (!v) expected(n, path, "an integer");
  return bounded(n, path, "an integer", *v, bounds);
}

bool Reader::boolean(const YAML::Node& n, const std::string& path) const {
  std::string s = str(n, path);
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  expected(n, path, "true or false");
}

std::chrono::milliseconds Reader::duration(const YAML::Node& n, const std::string& path,
                                           const std::optional<Bounds>& bounds) const {
  std::string s = str(n, path);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  std::string num = s.substr(0, i), unit = s.substr(i);
  double mult = unit == "ms" ? 1 : unit == "s" || unit.empty() ? 1000 : unit == "m" ? 60000 : unit == "h" ? 3600000 : -1;
  if (num.empty() || mult < 0 || std::count(num.begin(), num.end(), '.') > 1)
    expected(n, path, "a duration such as 500ms, 10s, 5m, 1h");
  const double ms = std::stod(num) * mult;
  if (ms > 1e15) expected(n, path, "a duration below 30000 years");
  return std::chrono::milliseconds(bounded(n, path, "a duration", static_cast<int64_t>(ms), bounds));
}

uint64_t Reader::size(const YAML::Node& n, const std::string& path, const std::optional<Bounds>& bounds) const {
  std::string s = str(n, path);
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  std::string num = s.substr(0, i), unit = s.substr(i);
  static const std::map<std::string, uint64_t> units = {
      {"", 1}, {"B", 1}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
      {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000}};
  auto u = units.find(unit);
  if (num.empty() || u == units.end() || num.size() > 18) expected(n, path, "a size such as 65536, 64KiB, 256MiB, 2GiB");
  const uint64_t count = std::stoull(num);
  if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / u->second)
    expected(n, path, "a size below 8 EiB");
  return static_cast<uint64_t>(bounded(n, path, "a size", static_cast<int64_t>(count * u->second), bounds));
}

std::vector<std::string> Reader::strings(const YAML::Node& n, const std::string& path) const {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    out.push_back(str(n, path));
    return out;
  }
  if (!n.IsSequence()) expected(n, path, "a list of strings");
  for (size_t i = 0; i < n.size(); ++i) out.push_back(str(n[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

std::map<std::string, std::string> Reader::string_map(const YAML::Node& n, const std::string& path) const {
  std::map<std::string, std::string> out;
  if (n.IsNull()) return out;
  if (!n.IsMap()) expected(n, path, "a map of strings");
  for (const auto& kv : n) {
    std::string k = kv.first.Scalar();
    out[k] = str(kv.second, path + "." + k);
  }
  return out;
}

// Durations in milliseconds, sizes in bytes.
int64_t Reader::bounded(const YAML::Node& n, const std::string& path, const std::string& what, int64_t v,
                        const std::optional<Bounds>& bounds) const {
  if (!bounds || (v >= bounds->min && v <= bounds->max)) return v;
  const auto unit = what == "a duration" ? std::string("ms") : what == "a size" ? std::string(" bytes") : std::string();
  std::string range = bounds->max == std::numeric_limits<int64_t>::max()
                          ? ">= " + std::to_string(bounds->min) + unit
                          : "from " + std::to_string(bounds->min) + unit + " to " + std::to_string(bounds->max) + unit;
  expected(n, path, what + " " + range);
}

std::optional<std::string> Reader::lookup(const std::string& name) const {
  if (env_) {
    auto it = env_->find(name);
    if (it == env_->end()) return std::nullopt;
    return it->second;
  }
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

YAML::Node element(const YAML::Node& n, size_t i) { return n.IsSequence() ? n[i] : n; }

YAML::Mark key_mark(const YAML::Node& m, const std::string& key) {
  for (const auto& kv : m)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.first.Mark();
  return m.Mark();
}

YAML::Node find_node(const YAML::Node& root, const std::vector<std::string>& parts, size_t from) {
  if (from == parts.size()) return root;
  // A missing section is an invalid (zombie) node: IsDefined() is the only safe question.
  if (!root.IsDefined() || !root.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node child = root[parts[from]];
  if (!child.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
  return find_node(child, parts, from + 1);
}

}  // namespace cdc2doris::config
