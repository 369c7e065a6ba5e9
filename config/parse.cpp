#include "config/parse.hpp"

#include <fstream>
#include <sstream>

#include "config/config.hpp"
#include "config/key_checks.hpp"
#include "config/reader.hpp"

namespace cdc2doris::config {

namespace {

// Where a key sits below the node its reader gets: the path's components
// after the user-named part ("routing.tables.*.tls.x" -> tls, x).
std::vector<std::string> relative_parts(const std::string& path) {
  const auto star = path.rfind("*.");
  const std::string rest = star == std::string::npos ? path : path.substr(star + 2);
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const auto dot = rest.find('.', from);
    parts.push_back(rest.substr(from, dot - from));
    if (dot == std::string::npos) return parts;
    from = dot + 1;
  }
}

// yaml-cpp keeps both entries of a duplicated key and answers lookups with
// the first, so the second would be ignored without a word.
void check_duplicates(const Reader& r, const YAML::Node& n, const std::string& path) {
  if (n.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      const std::string child = path.empty() ? key : path + "." + key;
      if (auto [it, fresh] = seen.emplace(key, kv.first.Mark()); !fresh)
        r.fail(kv.first.Mark(), child, "duplicate key (first at line " + std::to_string(it->second.line + 1) + "); merge the two");
      check_duplicates(r, kv.second, child);
    }
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) check_duplicates(r, n[i], path + "[" + std::to_string(i) + "]");
  }
}

// Rejects keys the schema does not know, naming the ones it does. `gpath`
// is the schema path: user-chosen names (tables, list elements) become "*".
void check_keys(const Reader& r, const YAML::Node& n, const std::string& path, const std::string& gpath) {
  if (n.IsNull()) return;
  if (!n.IsMap()) r.expected(n, path.empty() ? "<root>" : path, "a map");
  for (const auto& kv : n) {
    const std::string key = kv.first.Scalar();
    const std::string child = path.empty() ? key : path + "." + key;
    std::string gchild = gpath.empty() ? key : gpath + "." + key;
    if (!find_key(gchild) && !is_section(gchild) && is_section(gpath + ".*")) gchild = gpath + ".*";
    if (const KeyInfo* spec = find_key(gchild)) {
      // Its own reader says what shape it needs; the names below it are checked here.
      if (spec->nested && spec->type == "list<map>" && kv.second.IsSequence())
        for (size_t i = 0; i < kv.second.size(); ++i)
          check_keys(r, kv.second[i], child + "[" + std::to_string(i) + "]", gchild + ".*");
      if (spec->nested && spec->type != "list<map>") check_keys(r, kv.second, child, gchild);
      if (spec->type == "list<map>" && !kv.second.IsSequence()) r.expected(kv.second, child, "a list");
      continue;
    }
    if (is_section(gchild)) {
      check_keys(r, kv.second, child, gchild);
      continue;
    }
    std::string known;
    for (const auto& k : schema()) {
      std::string_view p = k.path;
      if (!gpath.empty()) {
        if (p.substr(0, gpath.size()) != gpath || p.size() <= gpath.size() || p[gpath.size()] != '.') continue;
        p.remove_prefix(gpath.size() + 1);
      }
      std::string first(p.substr(0, p.find('.')));
      if (known.find(" " + first + ",") == std::string::npos) known += " " + first + ",";
    }
    if (!known.empty()) known.pop_back();
    r.fail(kv.first.Mark(), child, "unknown key; expected one of:" + known);
  }
}

// The one place secret files are read: after every key, so a file wins over
// its key's inline value whatever their order in the document.
void resolve_secret_files(const Reader& r, const YAML::Node& root, Config& c) {
  for (const auto& k : config_keys()) {
    if (!k.file_target) continue;
    const YAML::Node n = find_node(root, relative_parts(k.path));
    if (!n.IsDefined() || n.IsNull()) continue;
    const std::string& file = k.file_path(c);
    std::ifstream in(file);
    if (!in) r.fail(n.Mark(), k.path, "cannot read '" + file + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string secret = ss.str();
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    k.file_target(c) = std::move(secret);
  }
}

// Chained operator[] on a non-const node creates the maps on the way.
void put(YAML::Node node, const std::vector<std::string>& parts, size_t i, const YAML::Node& value) {
  if (i + 1 == parts.size()) {
    node[parts[i]] = value;
    return;
  }
  put(node[parts[i]], parts, i + 1, value);
}

}  // namespace

template <class T>
void read_keys(const Reader& r, const std::vector<Key<T>>& keys, const YAML::Node& node, const std::string& where, T& into) {
  for (const auto& k : keys) {
    const auto parts = relative_parts(k.path);
    const YAML::Node n = find_node(node, parts);
    if (!n.IsDefined() || n.IsNull()) continue;
    std::string path = where;
    for (const auto& p : parts) path += (path.empty() ? "" : ".") + p;
    k.read(r, n, path, into);
  }
}

template <class T>
YAML::Node show_keys(const std::vector<Key<T>>& keys, const T& from) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& k : keys) {
    const YAML::Node value = k.show(from);
    if (!value.IsDefined() || value.IsNull()) continue;
    put(out, relative_parts(k.path), 0, value);
  }
  return out;
}

template void read_keys(const Reader&, const std::vector<Key<Config>>&, const YAML::Node&, const std::string&, Config&);
template void read_keys(const Reader&, const std::vector<Key<TableOverride>>&, const YAML::Node&, const std::string&,
                        TableOverride&);
template void read_keys(const Reader&, const std::vector<Key<RoutingRule>>&, const YAML::Node&, const std::string&,
                        RoutingRule&);
template YAML::Node show_keys(const std::vector<Key<Config>>&, const Config&);
template YAML::Node show_keys(const std::vector<Key<TableOverride>>&, const TableOverride&);
template YAML::Node show_keys(const std::vector<Key<RoutingRule>>&, const RoutingRule&);

Config parse(const YAML::Node& root, const std::string& name, const std::map<std::string, std::string>* env,
             std::string_view text) {
  Reader r(name, env);
  r.set_source(text);
  check_duplicates(r, root, "");
  check_keys(r, root, "", "");
  Config c;
  c.path = name;
  read_keys(r, config_keys(), root, "", c);
  resolve_secret_files(r, root, c);
  check_config(r, root, c);
  return c;
}

Config load_string(const std::string& text, const std::string& name, const std::map<std::string, std::string>* env) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::ostringstream os;
    os << name << ':' << e.mark.line + 1 << ':' << e.mark.column + 1 << ": invalid YAML: " << e.msg;
    throw ConfigError(os.str());
  }
  if (!root.IsMap()) throw ConfigError(name + ":1:1: expected a map of sections (kafka, doris, ...)");
  return parse(root, name, env, text);
}

Config load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the configuration file");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_string(ss.str(), path);
}

}  // namespace cdc2doris::config
