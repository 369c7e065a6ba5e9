#include "config/config.hpp"
#include "core/decode/doris_types.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <utility>
#include <variant>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "config/listen.hpp"
#include "config/schema.hpp"
#include "core/common/redact.hpp"
#include "core/doris/url.hpp"
#include "core/kafka/probe.hpp"

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

class Reader {
 public:
  Reader(std::string file, const std::map<std::string, std::string>* env) : file_(std::move(file)), env_(env) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& path, const std::string& msg) const {
    std::ostringstream os;
    os << file_;
    if (!mark.is_null()) os << ':' << mark.line + 1 << ':' << mark.column + 1;
    os << ": " << path << ": " << msg;
    throw ConfigError(os.str());
  }
  [[noreturn]] void expected(const YAML::Node& n, const std::string& path, const std::string& what) const {
    const KeySpec* spec = find_key(generic(path));
    std::string got = (spec && spec->secret) ? "a value (hidden: secret)" : describe(n);
    fail(n.Mark(), path, "expected " + what + ", got " + got);
  }

  // ${VAR} and ${VAR:-default}; "$$" is a literal '$'.
  std::string substitute(const YAML::Node& n, const std::string& path) const {
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

  std::string str(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) expected(n, path, "a string");
    return substitute(n, path);
  }
  int64_t integer(const YAML::Node& n, const std::string& path) const {
    std::string s = str(n, path);
    std::optional<int64_t> v;
    try {
      size_t used = 0;
      long long parsed = std::stoll(s, &used);
      if (used == s.size()) v = parsed;
    } catch (const std::exception&) {
    }
    if (!v) expected(n, path, "an integer");
    return bounded(n, path, "an integer", *v);
  }
  bool boolean(const YAML::Node& n, const std::string& path) const {
    std::string s = str(n, path);
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
    expected(n, path, "true or false");
  }
  std::chrono::milliseconds duration(const YAML::Node& n, const std::string& path) const {
    std::string s = str(n, path);
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    std::string num = s.substr(0, i), unit = s.substr(i);
    double mult = unit == "ms" ? 1 : unit == "s" || unit.empty() ? 1000 : unit == "m" ? 60000 : unit == "h" ? 3600000 : -1;
    if (num.empty() || mult < 0 || std::count(num.begin(), num.end(), '.') > 1)
      expected(n, path, "a duration such as 500ms, 10s, 5m, 1h");
    const double ms = std::stod(num) * mult;
    if (ms > 1e15) expected(n, path, "a duration below 30000 years");
    return std::chrono::milliseconds(bounded(n, path, "a duration", static_cast<int64_t>(ms)));
  }
  uint64_t size(const YAML::Node& n, const std::string& path) const {
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
    return static_cast<uint64_t>(bounded(n, path, "a size", static_cast<int64_t>(count * u->second)));
  }
  std::string choice(const YAML::Node& n, const std::string& path, std::initializer_list<const char*> allowed) const {
    std::string s = str(n, path);
    std::string list;
    for (const char* a : allowed) {
      if (s == a) return s;
      list += list.empty() ? "" : ", ";
      list += a;
    }
    expected(n, path, "one of " + list);
  }
  std::vector<std::string> strings(const YAML::Node& n, const std::string& path) const {
    std::vector<std::string> out;
    if (n.IsScalar()) {
      out.push_back(str(n, path));
      return out;
    }
    if (!n.IsSequence()) expected(n, path, "a list of strings");
    for (size_t i = 0; i < n.size(); ++i) out.push_back(str(n[i], path + "[" + std::to_string(i) + "]"));
    return out;
  }
  std::map<std::string, std::string> string_map(const YAML::Node& n, const std::string& path) const {
    std::map<std::string, std::string> out;
    if (n.IsNull()) return out;
    if (!n.IsMap()) expected(n, path, "a map of strings");
    for (const auto& kv : n) {
      std::string k = kv.first.Scalar();
      out[k] = str(kv.second, path + "." + k);
    }
    return out;
  }

  // The schema's bounds for `path`: durations in milliseconds, sizes in bytes.
  int64_t bounded(const YAML::Node& n, const std::string& path, const std::string& what, int64_t v) const {
    const KeySpec* spec = find_key(generic(path));
    if (!spec || !spec->bounds || (v >= spec->bounds->min && v <= spec->bounds->max)) return v;
    const auto unit = what == "a duration" ? std::string("ms") : what == "a size" ? std::string(" bytes") : std::string();
    std::string range = spec->bounds->max == std::numeric_limits<int64_t>::max()
                            ? ">= " + std::to_string(spec->bounds->min) + unit
                            : "from " + std::to_string(spec->bounds->min) + unit + " to " + std::to_string(spec->bounds->max) + unit;
    expected(n, path, what + " " + range);
  }

  // yaml-cpp keeps both entries of a duplicated key and answers lookups with
  // the first, so the second would be ignored without a word.
  void check_duplicates(const YAML::Node& n, const std::string& path) const {
    if (n.IsMap()) {
      std::map<std::string, YAML::Mark> seen;
      for (const auto& kv : n) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
        const std::string child = path.empty() ? key : path + "." + key;
        if (auto [it, fresh] = seen.emplace(key, kv.first.Mark()); !fresh)
          fail(kv.first.Mark(), child,
               "duplicate key (first at line " + std::to_string(it->second.line + 1) + "); merge the two");
        check_duplicates(kv.second, child);
      }
    } else if (n.IsSequence()) {
      for (size_t i = 0; i < n.size(); ++i) check_duplicates(n[i], path + "[" + std::to_string(i) + "]");
    }
  }

  // Rejects keys the schema does not know, naming the ones it does. `gpath`
  // is the schema path: user-chosen names (tables, list elements) become "*".
  void check_keys(const YAML::Node& n, const std::string& path, const std::string& gpath) const {
    if (n.IsNull()) return;
    if (!n.IsMap()) expected(n, path.empty() ? "<root>" : path, "a map");
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      const std::string child = path.empty() ? key : path + "." + key;
      std::string gchild = gpath.empty() ? key : gpath + "." + key;
      if (!find_key(gchild) && !is_section(gchild) && is_section(gpath + ".*")) gchild = gpath + ".*";
      if (const KeySpec* spec = find_key(gchild)) {
        if (spec->type == "list<map>") {
          if (!kv.second.IsSequence()) expected(kv.second, child, "a list");
          for (size_t i = 0; i < kv.second.size(); ++i)
            check_keys(kv.second[i], child + "[" + std::to_string(i) + "]", gchild + ".*");
        }
        continue;
      }
      if (is_section(gchild)) {
        check_keys(kv.second, child, gchild);
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
      fail(kv.first.Mark(), child, "unknown key; expected one of:" + known);
    }
  }

  // Secret keys have no user-chosen names in their path.
  static std::string generic(const std::string& path) { return path; }

 private:
  std::optional<std::string> lookup(const std::string& name) const {
    if (env_) {
      auto it = env_->find(name);
      if (it == env_->end()) return std::nullopt;
      return it->second;
    }
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }

  std::string file_;
  const std::map<std::string, std::string>* env_;
};

// The i-th element of a list node; a scalar stands for a list of one.
YAML::Node element(const YAML::Node& n, size_t i) { return n.IsSequence() ? n[i] : n; }

// The mark of the key (not the value) `key` in map `m`.
YAML::Mark key_mark(const YAML::Node& m, const std::string& key) {
  for (const auto& kv : m)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.first.Mark();
  return m.Mark();
}

// A target template names "db.table" and only the placeholders the router fills.
void check_template(const Reader& r, const YAML::Node& n, const std::string& path, const std::string& t) {
  static const std::regex placeholder(R"(\{([^}]*)\})");
  for (auto it = std::sregex_iterator(t.begin(), t.end(), placeholder); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name != "db" && name != "schema" && name != "table")
      r.expected(n, path, "a template with {db}, {schema} and {table} only (not {" + name + "})");
  }
  // "$1" may itself hold "db.table"; anything else needs the dot.
  const bool group = std::regex_search(t, std::regex(R"(\$[1-9])"));
  const auto dot = t.find('.');
  if (!group && (dot == std::string::npos || dot == 0 || dot + 1 == t.size()))
    r.expected(n, path, "a target 'db.table' template such as '{db}.{table}'");
}

template <typename F>
void with(const YAML::Node& parent, const char* key, F&& f) {
  // A missing section is an invalid (zombie) node: IsDefined() is the only safe question.
  if (!parent.IsDefined() || !parent.IsMap()) return;
  const YAML::Node n = parent[key];
  if (n.IsDefined() && !n.IsNull()) f(n);
}

// A secret kept in a file (`*_file` keys: a Kubernetes Secret volume, a
// systemd credential): its content, trailing newlines stripped.
std::string read_secret_file(const Reader& r, const YAML::Node& n, const std::string& path) {
  const std::string p = r.str(n, path);
  std::ifstream in(p);
  if (!in) r.fail(n.Mark(), path, "cannot read '" + p + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string secret = ss.str();
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  return secret;
}

// The host name: a StatefulSet pod name is stable across restarts and
// unique among the pods, which is what an instance id has to be.
std::string default_instance_id() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "cdc2doris";
  std::string id;
  for (const char* p = buf; *p != '\0' && id.size() < 64; ++p) {
    const char ch = *p;
    id += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' || ch == ':' ? ch : '_';
  }
  return id;
}

Config parse(const YAML::Node& root, const std::string& name, const std::map<std::string, std::string>* env) {
  Reader r(name, env);
  r.check_duplicates(root, "");
  r.check_keys(root, "", "");
  Config c;
  c.path = name;
  const YAML::Mark root_mark = root.Mark();

  // kafka
  const YAML::Node kafka = root["kafka"];
  with(kafka, "bootstrap_servers", [&](auto& n) { c.bootstrap_servers = r.str(n, "kafka.bootstrap_servers"); });
  with(kafka, "group_id", [&](auto& n) { c.group_id = r.str(n, "kafka.group_id"); });
  // librdkafka treats a subscription starting with '^' as a regex and fails
  // the subscribe (at run time, long after `check`) if it does not compile.
  auto check_subscription = [&](const YAML::Node& n, const std::string& path, const std::string& topic) {
    if (topic.rfind('^', 0) != 0) return;
    if (auto why = kafka::check_topic_regex(topic)) r.fail(n.Mark(), path, "invalid regex '" + topic + "': " + *why);
  };
  with(kafka, "topics", [&](auto& n) {
    c.topics = r.strings(n, "kafka.topics");
    for (size_t i = 0; i < c.topics.size(); ++i)
      check_subscription(element(n, i), "kafka.topics[" + std::to_string(i) + "]", c.topics[i]);
  });
  with(kafka, "topic_regex", [&](auto& n) {
    std::string re = r.str(n, "kafka.topic_regex");
    c.topics.push_back(re.rfind('^', 0) == 0 ? re : "^" + re);
    check_subscription(n, "kafka.topic_regex", c.topics.back());
  });
  with(kafka, "properties", [&](auto& n) { c.kafka_properties = r.string_map(n, "kafka.properties"); });
  c.instance_id = default_instance_id();
  with(kafka, "instance_id", [&](auto& n) {
    c.instance_id = r.str(n, "kafka.instance_id");
    bool ok = !c.instance_id.empty() && c.instance_id.size() <= 64;
    for (char ch : c.instance_id)
      ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' || ch == ':');
    if (!ok) r.expected(n, "kafka.instance_id", "1 to 64 letters, digits, '-', '_', '.' or ':'");
  });
  with(kafka, "static_membership", [&](auto& n) { c.static_membership = r.boolean(n, "kafka.static_membership"); });
  with(kafka, "on_offset_gap", [&](auto& n) {
    c.delivery.skip_offset_gaps = r.choice(n, "kafka.on_offset_gap", {"fail", "skip"}) == "skip";
  });
  with(kafka, "on_group_offsets_lost", [&](auto& n) {
    const std::string v = r.choice(n, "kafka.on_group_offsets_lost", {"fail", "stored", "beginning"});
    using L = pipeline::PipelineConfig::LostGroupOffsets;
    c.delivery.on_group_offsets_lost = v == "stored" ? L::Stored : v == "beginning" ? L::Beginning : L::Fail;
  });
  if (c.bootstrap_servers.empty()) r.fail(root_mark, "kafka.bootstrap_servers", "is required");
  if (c.topics.empty()) r.fail(root_mark, "kafka.topics", "is required (or kafka.topic_regex)");
  for (const char* forced : {"enable.auto.commit", "enable.auto.offset.store"}) {
    auto it = c.kafka_properties.find(forced);
    if (it != c.kafka_properties.end() && it->second != "false")
      r.fail(kafka["properties"][forced].Mark(), std::string("kafka.properties.") + forced,
             "must be false: cdc2doris commits offsets itself after each epoch");
  }
  // librdkafka judges its own properties (names, values, combinations), so
  // `check` rejects exactly what the consumer would.
  if (auto problem = kafka::check_properties(c.source_config().properties)) {
    const YAML::Node props = kafka.IsMap() ? kafka["properties"] : YAML::Node();
    if (!problem->key.empty() && props.IsDefined() && props.IsMap() && props[problem->key].IsDefined())
      r.fail(key_mark(props, problem->key), "kafka.properties." + problem->key, problem->message);
    r.fail(props.IsDefined() ? props.Mark() : root_mark, "kafka.properties", "librdkafka rejects them: " + problem->message);
  }

  // doris
  const YAML::Node doris = root["doris"];
  with(doris, "fe", [&](auto& n) {
    c.doris.fe_urls = r.strings(n, "doris.fe");
    for (size_t i = 0; i < c.doris.fe_urls.size(); ++i) {
      const std::string& fe = c.doris.fe_urls[i];
      if (!doris::parse_url(fe))
        r.fail(element(n, i).Mark(), "doris.fe[" + std::to_string(i) + "]",
               "expected an http:// or https:// URL or host:port, got '" + doris::redact_url(fe) + "'");
    }
  });
  if (c.doris.fe_urls.empty()) r.fail(root_mark, "doris.fe", "is required");
  c.doris.user = "root";
  with(doris, "user", [&](auto& n) {
    c.doris.user = r.str(n, "doris.user");
    if (c.doris.user.empty()) r.expected(n, "doris.user", "a Doris user name");
  });
  with(doris, "password", [&](auto& n) { c.doris.password = r.str(n, "doris.password"); });
  with(doris, "password_file",
       [&](auto& n) { c.doris.password = read_secret_file(r, n, "doris.password_file"); });
  with(doris, "route", [&](auto& n) {
    c.doris.route = r.choice(n, "doris.route", {"fe", "direct"}) == "fe" ? doris::Route::ViaFe : doris::Route::DirectBe;
  });
  with(doris, "backends", [&](auto& n) {
    c.doris.backends = r.strings(n, "doris.backends");
    for (size_t i = 0; i < c.doris.backends.size(); ++i)
      if (!doris::split_host_port(c.doris.backends[i]))
        r.fail(element(n, i).Mark(), "doris.backends[" + std::to_string(i) + "]",
               "expected host:port, got '" + c.doris.backends[i] + "'");
  });
  with(doris, "address_rewrite", [&](auto& n) { c.doris.address_rewrite = r.string_map(n, "doris.address_rewrite"); });
  with(doris, "tls", [&](auto& tls) {
    with(tls, "ca_file", [&](auto& n) { c.doris.tls.ca_file = r.str(n, "doris.tls.ca_file"); });
    with(tls, "verify", [&](auto& n) { c.doris.tls.verify_peer = r.boolean(n, "doris.tls.verify"); });
    with(tls, "verify_hostname",
         [&](auto& n) { c.doris.tls.verify_hostname = r.boolean(n, "doris.tls.verify_hostname"); });
  });
  with(doris, "load_headers", [&](auto& n) { c.load_headers = r.string_map(n, "doris.load_headers"); });
  with(doris, "gzip", [&](auto& n) { c.doris.gzip = r.boolean(n, "doris.gzip"); });
  with(doris, "buffer_bytes", [&](auto& n) { c.doris.buffer_bytes = r.size(n, "doris.buffer_bytes"); });
  with(doris, "io_threads", [&](auto& n) { c.doris.io_threads = static_cast<int>(r.integer(n, "doris.io_threads")); });
  with(doris, "precommit_timeout",
       [&](auto& n) { c.delivery.precommit_timeout_ms = r.duration(n, "doris.precommit_timeout").count(); });
  with(doris, "connect_timeout", [&](auto& n) { c.doris.timeouts.connect = r.duration(n, "doris.connect_timeout"); });
  with(doris, "request_timeout", [&](auto& n) { c.doris.timeouts.request = r.duration(n, "doris.request_timeout"); });
  with(doris, "load_timeout", [&](auto& n) { c.doris.timeouts.response = r.duration(n, "doris.load_timeout"); });
  with(doris, "max_attempts",
       [&](auto& n) { c.doris.retry.max_attempts = static_cast<int>(r.integer(n, "doris.max_attempts")); });

  // routing
  const YAML::Node routing = root["routing"];
  with(routing, "include", [&](auto& n) { c.include = r.strings(n, "routing.include"); });
  with(routing, "exclude", [&](auto& n) { c.exclude = r.strings(n, "routing.exclude"); });
  for (const auto& [list, key] : {std::pair{&c.include, "include"}, std::pair{&c.exclude, "exclude"}})
    for (size_t i = 0; i < list->size(); ++i) try {
        std::regex test((*list)[i]);
      } catch (const std::regex_error& e) {
        r.fail(element(routing[key], i).Mark(), std::string("routing.") + key + "[" + std::to_string(i) + "]",
               "invalid regex '" + (*list)[i] + "': " + e.what());
      }
  with(routing, "target", [&](auto& n) {
    c.target_template = r.str(n, "routing.target");
    check_template(r, n, "routing.target", c.target_template);
  });
  with(routing, "rules", [&](auto& n) {
    if (!n.IsSequence()) r.expected(n, "routing.rules", "a list of {match, target}");
    for (size_t i = 0; i < n.size(); ++i) {
      const std::string p = "routing.rules[" + std::to_string(i) + "]";
      if (!n[i]["match"] || !n[i]["target"]) r.fail(n[i].Mark(), p, "needs both 'match' and 'target'");
      RoutingRule rule;
      rule.match = r.str(n[i]["match"], p + ".match");
      rule.target = r.str(n[i]["target"], p + ".target");
      check_template(r, n[i]["target"], p + ".target", rule.target);
      try {
        rule.re = std::regex(rule.match);
      } catch (const std::regex_error& e) {
        r.fail(n[i]["match"].Mark(), p + ".match", "invalid regex '" + rule.match + "': " + e.what());
      }
      c.rules.push_back(std::move(rule));
    }
  });
  auto policy = [&](const YAML::Node& n, const std::string& path) {
    const std::string v = r.choice(n, path, {"off", "add", "full"});
    return v == "off" ? schema::Policy::Off : v == "full" ? schema::Policy::Full : schema::Policy::Add;
  };
  auto truncate = [&](const YAML::Node& n, const std::string& path) {
    const std::string v = r.choice(n, path, {"apply", "ignore", "fail"});
    return v == "apply" ? pipeline::TruncatePolicy::Apply
           : v == "fail" ? pipeline::TruncatePolicy::Fail
                         : pipeline::TruncatePolicy::Ignore;
  };
  with(routing, "truncate", [&](auto& n) { c.truncate = truncate(n, "routing.truncate"); });
  auto delete_mode = [&](const YAML::Node& n, const std::string& path) {
    return *decode::parse_delete_mode(r.choice(n, path, {"hard", "soft", "ignore"}));
  };
  auto column_name = [&](const YAML::Node& n, const std::string& path, bool may_be_empty) {
    std::string v = r.str(n, path);
    if (v.empty() && !may_be_empty) r.fail(n.Mark(), path, "expected a column name, got an empty string");
    if (v.starts_with("__DORIS_")) r.fail(n.Mark(), path, "'" + v + "' is a Doris hidden column name");
    return v;
  };
  with(routing, "delete_mode", [&](auto& n) { c.decoding.deletes.mode = delete_mode(n, "routing.delete_mode"); });
  with(routing, "soft_delete_column", [&](auto& n) {
    c.decoding.deletes.soft_column = column_name(n, "routing.soft_delete_column", false);
  });
  with(routing, "deleted_at_column", [&](auto& n) {
    c.decoding.deletes.deleted_at_column = column_name(n, "routing.deleted_at_column", true);
  });
  if (c.decoding.deletes.soft_column == c.decoding.deletes.deleted_at_column)
    r.fail(routing["deleted_at_column"].Mark(), "routing.deleted_at_column", "must differ from routing.soft_delete_column");
  with(routing, "auto_create", [&](auto& n) { c.auto_create = r.boolean(n, "routing.auto_create"); });
  with(routing, "schema_evolution", [&](auto& n) { c.schema_evolution = policy(n, "routing.schema_evolution"); });
  with(routing, "create_properties",
       [&](auto& n) { c.create_properties = r.string_map(n, "routing.create_properties"); });
  with(routing, "create_database_properties",
       [&](auto& n) { c.create_database_properties = r.string_map(n, "routing.create_database_properties"); });
  with(routing, "map", [&](auto& n) {
    for (const auto& [src, dst] : r.string_map(n, "routing.map")) {
      auto dot = dst.find('.');
      if (dot == std::string::npos || dot == 0 || dot + 1 == dst.size())
        r.fail(n[src].Mark(), "routing.map." + src, "expected a target 'db.table', got '" + dst + "'");
      c.explicit_map[src] = {dst.substr(0, dot), dst.substr(dot + 1)};
    }
  });
  with(routing, "tables", [&](auto& n) {
    if (!n.IsMap()) r.expected(n, "routing.tables", "a map of target tables");
    for (const auto& kv : n) {
      const std::string name = kv.first.Scalar();
      const std::string p = "routing.tables." + name;
      if (name.find('.') == std::string::npos) r.fail(kv.first.Mark(), p, "expected a target 'db.table' as the key");
      TableOverride t;
      const YAML::Node& v = kv.second;
      with(v, "key_model", [&](auto& x) { t.unique_key = r.choice(x, p + ".key_model", {"unique", "duplicate"}) == "unique"; });
      with(v, "sequence_col", [&](auto& x) { t.sequence_col = r.str(x, p + ".sequence_col"); });
      with(v, "sequence_from_source_position",
           [&](auto& x) { t.sequence_from_source_position = r.boolean(x, p + ".sequence_from_source_position"); });
      with(v, "headers", [&](auto& x) { t.headers = r.string_map(x, p + ".headers"); });
      with(v, "key_columns", [&](auto& x) { t.key_columns = r.strings(x, p + ".key_columns"); });
      with(v, "epoch_units", [&](auto& x) {
        for (const auto& [col, unit] : r.string_map(x, p + ".epoch_units")) {
          auto u = decode::parse_epoch_unit(unit);
          if (!u) r.fail(x[col].Mark(), p + ".epoch_units." + col, "expected one of s, ms, us, ns, got '" + unit + "'");
          t.epoch_units[col] = *u;
        }
      });
      with(v, "decimal_scales", [&](auto& x) {
        if (!x.IsMap()) r.fail(x.Mark(), p + ".decimal_scales", "expected a map of column: scale");
        for (const auto& kv : x) {
          const std::string col = kv.first.template as<std::string>();
          const int64_t scale = r.integer(kv.second, p + ".decimal_scales." + col);
          if (scale < 0 || scale > 1000)
            r.fail(kv.second.Mark(), p + ".decimal_scales." + col, "expected a scale from 0 to 1000");
          t.decimal_scales[col] = static_cast<int>(scale);
        }
      });
      with(v, "auto_create", [&](auto& x) { t.auto_create = r.boolean(x, p + ".auto_create"); });
      with(v, "schema_evolution", [&](auto& x) { t.schema_evolution = policy(x, p + ".schema_evolution"); });
      with(v, "properties", [&](auto& x) { t.properties = r.string_map(x, p + ".properties"); });
      with(v, "buckets", [&](auto& x) { t.buckets = static_cast<int>(r.integer(x, p + ".buckets")); });
      with(v, "flexible_partial_updates",
           [&](auto& x) { t.flexible_partial_updates = r.boolean(x, p + ".flexible_partial_updates"); });
      with(v, "new_column_type", [&](auto& x) { t.new_column_type = r.str(x, p + ".new_column_type"); });
      with(v, "truncate", [&](auto& x) { t.truncate = truncate(x, p + ".truncate"); });
      with(v, "delete_mode", [&](auto& x) { t.delete_mode = delete_mode(x, p + ".delete_mode"); });
      with(v, "soft_delete_column",
           [&](auto& x) { t.soft_delete_column = column_name(x, p + ".soft_delete_column", false); });
      with(v, "deleted_at_column",
           [&](auto& x) { t.deleted_at_column = column_name(x, p + ".deleted_at_column", true); });
      if (t.soft_delete_column.value_or(c.decoding.deletes.soft_column) ==
          t.deleted_at_column.value_or(c.decoding.deletes.deleted_at_column))
        r.fail(v.Mark(), p + ".deleted_at_column", "must differ from the soft_delete_column");
      with(v, "columns", [&](auto& x) {
        const auto defs = r.strings(x, p + ".columns");
        for (size_t i = 0; i < defs.size(); ++i) {
          const std::string& d = defs[i];
          const auto sp = d.find(' ');
          if (sp == std::string::npos || sp == 0 || d.find_first_not_of(' ', sp) == std::string::npos)
            r.fail(element(x, i).Mark(), p + ".columns[" + std::to_string(i) + "]",
                   "expected 'name TYPE' (e.g. 'id BIGINT'), got '" + d + "'");
          t.columns.push_back({d.substr(0, sp), d.substr(d.find_first_not_of(' ', sp)), true, std::nullopt, false, false});
        }
      });
      if (t.sequence_from_source_position && t.sequence_col.empty())
        r.fail(v.Mark(), p + ".sequence_from_source_position", "needs sequence_col (the column to fill)");
      c.tables[name] = std::move(t);
    }
  });

  // delivery
  auto& d = c.delivery;
  const YAML::Node delivery = root["delivery"];
  {
    // The default names the instance, so two instances of one group (or a
    // duplicate start on one host) never share labels (issue 31).
    std::string id = c.instance_id;
    for (auto& ch : id)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == ':')) ch = '_';
    d.label_prefix = ("cdc2doris_" + id).substr(0, 64);
  }
  with(delivery, "label_prefix", [&](auto& n) {
    c.label_prefix_explicit = true;
    d.label_prefix = r.str(n, "delivery.label_prefix");
    // Each instance of a group needs its own prefix: `{instance_id}` is
    // replaced by it ('.' of a host name becomes '_', a label has no dots).
    if (auto at = d.label_prefix.find("{instance_id}"); at != std::string::npos) {
      std::string id = c.instance_id;
      std::replace(id.begin(), id.end(), '.', '_');
      d.label_prefix.replace(at, std::string_view("{instance_id}").size(), id);
    }
    for (char ch : d.label_prefix)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == ':'))
        r.expected(n, "delivery.label_prefix", "letters, digits, '-', '_' or ':' (a Doris label)");
    if (d.label_prefix.empty() || d.label_prefix.size() > 64)
      r.expected(n, "delivery.label_prefix", "1 to 64 characters");
  });
  with(delivery, "epoch_interval", [&](auto& n) { d.epoch_interval = r.duration(n, "delivery.epoch_interval"); });
  with(delivery, "epoch_max_bytes", [&](auto& n) { d.epoch_max_bytes = r.size(n, "delivery.epoch_max_bytes"); });
  with(delivery, "epoch_max_rows",
       [&](auto& n) { d.epoch_max_rows = static_cast<uint64_t>(r.integer(n, "delivery.epoch_max_rows")); });
  with(delivery, "memory_cap", [&](auto& n) { d.memory_cap_bytes = r.size(n, "delivery.memory_cap"); });
  with(delivery, "open_transaction_budget", [&](auto& n) {
    d.open_txn_budget_per_db = static_cast<int>(r.integer(n, "delivery.open_transaction_budget"));
  });
  with(delivery, "unproven_epoch", [&](auto& n) {
    // [<label prefix>:]<epoch>:<verdict>; a prefix has no ':' (label characters only).
    const std::string v = r.str(n, "delivery.unproven_epoch");
    const auto last = v.rfind(':');
    const std::string verdict = last == std::string::npos ? "" : v.substr(last + 1);
    const std::string head = last == std::string::npos ? "" : v.substr(0, last);
    const auto first = head.find(':');
    const std::string prefix = first == std::string::npos ? "" : head.substr(0, first);
    const std::string num = first == std::string::npos ? head : head.substr(first + 1);
    uint64_t epoch = 0;
    const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), epoch);
    if (ec != std::errc() || end != num.data() + num.size() || epoch == 0 ||
        (first != std::string::npos && prefix.empty()) || (verdict != "committed" && verdict != "replay"))
      r.expected(n, "delivery.unproven_epoch",
                 "'<epoch>:committed', '<epoch>:replay', or '<label prefix>:<epoch>:committed|replay'");
    d.unproven_epoch = epoch;
    d.unproven_epoch_prefix = prefix;
    d.unproven_epoch_committed = verdict == "committed";
  });
  with(delivery, "max_loads_per_table", [&](auto& n) {
    d.max_loads_per_table = static_cast<int>(r.integer(n, "delivery.max_loads_per_table"));
  });
  with(delivery, "end_epoch_when_caught_up",
       [&](auto& n) { d.end_epoch_when_caught_up = r.boolean(n, "delivery.end_epoch_when_caught_up"); });
  with(delivery, "bad_records", [&](auto& n) {
    auto v = r.choice(n, "delivery.bad_records", {"fail", "skip", "dead_letter"});
    d.bad_record_policy = v == "fail"   ? pipeline::BadRecordPolicy::Fail
                          : v == "skip" ? pipeline::BadRecordPolicy::Skip
                                        : pipeline::BadRecordPolicy::DeadLetter;
  });
  with(delivery, "dead_letter_topic", [&](auto& n) { d.dead_letter_topic = r.str(n, "delivery.dead_letter_topic"); });
  if (d.bad_record_policy == pipeline::BadRecordPolicy::DeadLetter && d.dead_letter_topic.empty())
    r.fail(delivery.Mark(), "delivery.dead_letter_topic", "is required with bad_records: dead_letter");
  with(delivery, "shutdown_deadline",
       [&](auto& n) { d.shutdown_deadline = r.duration(n, "delivery.shutdown_deadline"); });
  with(delivery, "backoff_base", [&](auto& n) { d.backoff_base = r.duration(n, "delivery.backoff_base"); });
  with(delivery, "backoff_max", [&](auto& n) { d.backoff_cap = r.duration(n, "delivery.backoff_max"); });
  if (d.backoff_cap < d.backoff_base) {
    const bool max_given = delivery.IsMap() && delivery["backoff_max"].IsDefined();
    r.fail((max_given ? delivery["backoff_max"] : delivery["backoff_base"]).Mark(), "delivery.backoff_max",
           "must be at least delivery.backoff_base (" + std::to_string(d.backoff_cap.count()) + "ms < " +
               std::to_string(d.backoff_base.count()) + "ms)");
  }

  // decoding
  auto& o = c.decoding;
  const YAML::Node decoding = root["decoding"];
  with(decoding, "envelope", [&](auto& n) {
    auto v = r.choice(n, "decoding.envelope", {"auto", "schema", "plain", "flattened"});
    o.envelope = v == "auto"     ? decode::Envelope::Auto
                 : v == "schema" ? decode::Envelope::Schema
                 : v == "plain"  ? decode::Envelope::Plain
                                 : decode::Envelope::Flattened;
  });
  with(decoding, "time_zone", [&](auto& n) { o.time_zone = r.str(n, "decoding.time_zone"); });
  with(decoding, "binary_mode", [&](auto& n) {
    o.binary_mode = r.choice(n, "decoding.binary_mode", {"base64", "hex"}) == "hex" ? decode::BinaryMode::Hex
                                                                                    : decode::BinaryMode::Base64;
  });
  with(decoding, "toast_placeholder",
       [&](auto& n) { o.toast_placeholders = {r.str(n, "decoding.toast_placeholder")}; });
  with(decoding, "max_record_bytes", [&](auto& n) { o.max_record_bytes = r.size(n, "decoding.max_record_bytes"); });
  with(decoding, "max_depth",
       [&](auto& n) { o.max_depth = static_cast<size_t>(r.integer(n, "decoding.max_depth")); });
  with(decoding, "flattened", [&](auto& f) {
    with(f, "deleted_field", [&](auto& n) { o.flattened.deleted = r.str(n, "decoding.flattened.deleted_field"); });
    with(f, "op_field", [&](auto& n) { o.flattened.op = r.str(n, "decoding.flattened.op_field"); });
  });
  with(decoding, "extra_columns", [&](auto& e) {
    with(e, "op", [&](auto& n) { o.extra_columns.op = r.str(n, "decoding.extra_columns.op"); });
    with(e, "source_ts", [&](auto& n) { o.extra_columns.source_ts = r.str(n, "decoding.extra_columns.source_ts"); });
  });
  // The decoder judges its own options (the time zone above all) exactly as
  // the pipeline will construct it.
  try {
    decode::Decoder probe(o);
  } catch (const std::exception& e) {
    const YAML::Node zone = decoding.IsMap() ? decoding["time_zone"] : YAML::Node();
    const bool about_zone = std::string(e.what()).find("time zone") != std::string::npos && zone.IsDefined();
    r.fail(about_zone ? zone.Mark() : (decoding.IsDefined() ? decoding.Mark() : root_mark),
           about_zone ? "decoding.time_zone" : "decoding", e.what());
  }
  // routing.tables.<target>.key_columns / sequence_from_source_position reach
  // the decoder through the router (TableSettings), which knows the target.

  // state, admin, logging
  with(root["state"], "dir", [&](auto& n) { c.state_dir = r.str(n, "state.dir"); });
  with(root["state"], "retention_epochs",
       [&](auto& n) { c.state_retention_epochs = static_cast<int>(r.integer(n, "state.retention_epochs")); });
  with(root["admin"], "listen", [&](auto& n) {
    auto listen = resolve_listen(r.str(n, "admin.listen"));
    if (auto* why = std::get_if<ListenError>(&listen)) r.expected(n, "admin.listen", why->expected);
    c.admin_listen = std::get<std::string>(listen);
  });
  with(root["admin"], "token", [&](auto& n) { c.admin_token = r.str(n, "admin.token"); });
  with(root["admin"], "token_file", [&](auto& n) { c.admin_token = read_secret_file(r, n, "admin.token_file"); });
  with(root["admin"], "probes_require_token",
       [&](auto& n) { c.admin_probes_require_token = r.boolean(n, "admin.probes_require_token"); });
  const YAML::Node admin = std::as_const(root)["admin"];
  const YAML::Node admin_tls = admin.IsDefined() && admin.IsMap() ? admin["tls"] : YAML::Node();
  with(admin_tls, "cert_file", [&](auto& n) { c.admin_tls_cert_file = r.str(n, "admin.tls.cert_file"); });
  with(admin_tls, "key_file", [&](auto& n) { c.admin_tls_key_file = r.str(n, "admin.tls.key_file"); });
  if (c.admin_tls_cert_file.empty() != c.admin_tls_key_file.empty())
    r.fail(admin_tls.Mark(), "admin.tls", "needs both cert_file and key_file");
  if (c.admin_probes_require_token && c.admin_token.empty())
    r.fail(admin["probes_require_token"].Mark(), "admin.probes_require_token",
           "needs admin.token or admin.token_file");
  with(root["admin"], "kafka_grace", [&](auto& n) { c.health.kafka_grace = r.duration(n, "admin.kafka_grace"); });
  with(root["admin"], "doris_failure_grace",
       [&](auto& n) { c.health.doris_failure_grace = r.duration(n, "admin.doris_failure_grace"); });
  with(root["admin"], "stall_timeout", [&](auto& n) { c.health.stall_timeout = r.duration(n, "admin.stall_timeout"); });
  with(root["admin"], "heartbeat_timeout",
       [&](auto& n) { c.health.heartbeat_timeout = r.duration(n, "admin.heartbeat_timeout"); });
  with(root["admin"], "lag_refresh_interval",
       [&](auto& n) { c.health.lag_refresh_interval = r.duration(n, "admin.lag_refresh_interval"); });
  c.health.epoch_interval = c.delivery.epoch_interval;
  with(root["logging"], "level",
       [&](auto& n) { c.log_level = r.choice(n, "logging.level", {"trace", "debug", "info", "warn", "error"}); });
  with(root["logging"], "format", [&](auto& n) { c.log_format = r.choice(n, "logging.format", {"text", "json"}); });
  return c;
}

}  // namespace

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
  return parse(root, name, env);
}

Config load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the configuration file");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_string(ss.str(), path);
}

std::optional<std::string> Config::keep_recorded_label_prefix(
    const std::vector<std::pair<std::string, uint64_t>>& recorded) {
  if (label_prefix_explicit || recorded.empty()) return std::nullopt;
  const auto last = std::max_element(recorded.begin(), recorded.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  if (last->first == delivery.label_prefix) return std::nullopt;
  delivery.label_prefix = last->first;
  return delivery.label_prefix;
}

std::string Config::dump() const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "kafka" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "bootstrap_servers" << YAML::Value << bootstrap_servers;
  e << YAML::Key << "group_id" << YAML::Value << group_id;
  e << YAML::Key << "instance_id" << YAML::Value << instance_id;
  e << YAML::Key << "static_membership" << YAML::Value << static_membership;
  e << YAML::Key << "on_offset_gap" << YAML::Value << (delivery.skip_offset_gaps ? "skip" : "fail");
  {
    using L = pipeline::PipelineConfig::LostGroupOffsets;
    e << YAML::Key << "on_group_offsets_lost" << YAML::Value
      << (delivery.on_group_offsets_lost == L::Stored      ? "stored"
          : delivery.on_group_offsets_lost == L::Beginning ? "beginning"
                                                           : "fail");
  }
  e << YAML::Key << "topics" << YAML::Value << topics;
  e << YAML::Key << "properties" << YAML::Value << kafka::redact(kafka_properties);
  e << YAML::EndMap;
  e << YAML::Key << "doris" << YAML::Value << YAML::BeginMap;
  // Secrets are hidden where they stand (never by searching the text for
  // their values): the password field, URL userinfo, secret-named
  // properties and headers.
  std::vector<std::string> fes;
  for (const auto& fe : doris.fe_urls) fes.push_back(doris::redact_url(fe));
  e << YAML::Key << "fe" << YAML::Value << fes;
  e << YAML::Key << "user" << YAML::Value << doris.user;
  e << YAML::Key << "password" << YAML::Value << (doris.password.empty() ? "" : std::string(kRedacted));
  e << YAML::Key << "route" << YAML::Value << (doris.route == doris::Route::ViaFe ? "fe" : "direct");
  e << YAML::Key << "load_headers" << YAML::Value << kafka::redact(load_headers);
  e << YAML::EndMap;
  e << YAML::Key << "delivery" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "label_prefix" << YAML::Value << delivery.label_prefix;
  e << YAML::Key << "epoch_interval" << YAML::Value << std::to_string(delivery.epoch_interval.count()) + "ms";
  e << YAML::Key << "bad_records" << YAML::Value << pipeline::to_string(delivery.bad_record_policy);
  e << YAML::EndMap;
  e << YAML::Key << "state" << YAML::Value << YAML::BeginMap << YAML::Key << "dir" << YAML::Value << state_dir
    << YAML::EndMap;
  e << YAML::Key << "admin" << YAML::Value << YAML::BeginMap << YAML::Key << "listen" << YAML::Value << admin_listen
    << YAML::Key << "token" << YAML::Value << (admin_token.empty() ? "" : std::string(kRedacted)) << YAML::Key
    << "probes_require_token" << YAML::Value << admin_probes_require_token << YAML::EndMap;
  e << YAML::EndMap;
  return e.c_str();
}

kafka::SourceConfig Config::source_config() const {
  kafka::SourceConfig s;
  s.topics = topics;
  s.properties = kafka_properties;
  s.properties["bootstrap.servers"] = bootstrap_servers;
  s.properties["group.id"] = group_id;
  if (static_membership && !instance_id.empty()) s.properties.try_emplace("group.instance.id", instance_id);
  s.read_headers = delivery.bad_record_policy == pipeline::BadRecordPolicy::DeadLetter;  // only dead letters copy them
  s.skip_offset_gaps = delivery.skip_offset_gaps;
  return s;
}

std::string reference_markdown() {
  std::ostringstream os;
  os << "# Configuration reference\n\n"
     << "<!-- Generated from config/schema.cpp by `cdc2doris config-reference`; a test keeps this file in sync. -->\n\n"
     << "cdc2doris reads one YAML file (`cdc2doris run --config FILE`). Unknown keys are errors; every error names\n"
     << "`file:line:column`, the key and what was expected. Any scalar may use `${ENV_VAR}` or\n"
     << "`${ENV_VAR:-default}`; `$$` is a literal `$`. Durations: `500ms`, `10s`, `5m`, `1h`. Sizes: `65536`,\n"
     << "`64KiB`, `256MiB`, `2GiB`. In key paths `*` stands for a name you choose (a target table `db.table`,\n"
     << "or a list element). A range after the type (`integer (1..256)`, `duration (>= 1ms)`) is enforced;\n"
     << "`cdc2doris check` rejects everything `run` would (see docs/operations.md).\n";
  std::string section;
  for (const auto& k : schema()) {
    std::string top(k.path.substr(0, k.path.find('.')));
    if (top != section) {
      section = top;
      os << "\n## `" << section << "`\n\n| key | type | default | meaning |\n|---|---|---|---|\n";
    }
    std::string desc(k.description);
    for (size_t p = desc.find('|'); p != std::string::npos; p = desc.find('|', p + 2)) desc.replace(p, 1, "\\|");
    std::string type = type_with_bounds(k);
    for (size_t p = type.find('|'); p != std::string::npos; p = type.find('|', p + 2)) type.replace(p, 1, "\\|");
    os << "| `" << k.path << "` | " << type << " | " << k.default_value << " | " << desc
       << (k.secret ? " **Secret:** never logged or shown." : "") << " |\n";
  }
  return os.str();
}

}  // namespace cdc2doris::config
