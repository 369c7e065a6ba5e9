// Each configuration key is declared once (config/keys.cpp). These tests
// hold the declarations to their word: every declared key, set alone to a
// value other than its default, changes what it shows of the field it names;
// and every field of the Config (walked member by member with Boost.PFR,
// nested structs included) changes when all keys are set, unless it is
// listed below as not configurable, with the reason.
#include <catch2/catch.hpp>

#include <boost/pfr.hpp>

#include <fstream>
#include <set>

#include "config/config.hpp"
#include "config/parse.hpp"
#include "config/keys.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace cdc2doris::config;
using cdc2doris::test::TempDir;

namespace {

const char* kBase = "kafka: {bootstrap_servers: \"k1:9092\", topics: [a]}\ndoris: {fe: [\"fe1:8030\"]}\n";

// Values the reader accepts that differ from every default, where the
// type alone does not give one (a URL, a time zone, a valid librdkafka property).
std::string special_sample(const std::string& path, const std::string& secret_file) {
  static const std::map<std::string, std::string> samples = {
      {"kafka.bootstrap_servers", "\"k9:9092\""},
      {"kafka.instance_id", "pod-7"},
      {"kafka.topics", "[t1, t2]"},
      {"kafka.topic_regex", "\"^dbz\\\\..*\""},
      {"kafka.properties", "{client.id: sample}"},
      {"doris.fe", "[\"https://fe9:8443\"]"},
      {"doris.backends", "[\"be9:8040\"]"},
      {"doris.password_file", "FILE"},
      {"admin.token_file", "FILE"},
      {"routing.target", "\"ods_{db}.{table}\""},
      {"routing.include", "[\"shop\\\\..*\"]"},
      {"routing.exclude", "[\"tmp\\\\..*\"]"},
      {"routing.rules", "[{match: \"a\\\\.(.*)\", target: \"b.$1\"}]"},
      {"routing.map", "{\"a.b\": \"c.d\"}"},
      {"routing.tables", "{\"d.t\": {buckets: 3}}"},
      {"delivery.label_prefix", "p_7"},
      {"delivery.unproven_epoch", "\"cdc2doris_x:12:committed\""},
      {"decoding.time_zone", "Asia/Tokyo"},
      {"decoding.schema_registry.url", "\"https://registry:8081\""},
      {"decoding.schema_registry.password_file", "FILE"},
      {"decoding.schema_registry.bearer_token_file", "FILE"},
      {"decoding.topic_formats", "{\"^srv\\\\..*\": avro}"},
      {"admin.listen", "\"127.0.0.1:9\""},
      {"routing.tables.*.columns", "[\"id BIGINT\"]"},
      {"routing.tables.*.decimal_scales", "{amount: 3}"},
      {"routing.tables.*.epoch_units", "{created: us}"},
      {"routing.tables.*.filter", "\"qty > 0 AND status IN ('paid', 'sent')\""},
      {"routing.tables.*.computed_columns", "{kafka_offset: offset}"},
      {"routing.tables.*.rename", "{cust_id: customer_id}"},
      // Not one of key_columns' sample names: a key column cannot be excluded.
      {"routing.tables.*.exclude", "[card_number]"},
      {"routing.computed_columns", "{src_table: source.table}"},
      // Two columns, so they must differ.
      {"routing.deleted_at_column", "gone_at"},
      {"routing.tables.*.deleted_at_column", "removed_at"},
  };
  // A rule's delete mode and transforms take the samples of the table's.
  const std::string rules = "routing.rules.*.";
  const std::string as_table = path.rfind(rules, 0) == 0 ? "routing.tables.*." + path.substr(rules.size()) : path;
  auto it = samples.find(as_table);
  if (it == samples.end()) return "";
  return it->second == "FILE" ? "\"" + secret_file + "\"" : it->second;
}

// Keys another key needs beside it to pass the checks across keys.
std::vector<std::pair<std::string, std::string>> companions(const std::string& path) {
  if (path == "admin.tls.cert_file") return {{"admin.tls.key_file", "/k.pem"}};
  if (path == "admin.tls.key_file") return {{"admin.tls.cert_file", "/c.pem"}};
  if (path == "admin.probes_require_token") return {{"admin.token", "t0k"}};
  if (path == "decoding.format" || path == "decoding.topic_formats")
    return {{"decoding.schema_registry.url", "\"http://registry:8081\""}};
  if (path == "decoding.avro.id_kind") return {{"decoding.schema_registry.api", "apicurio"}};
  if (path == "routing.tables.*.sequence_from_source_position") return {{"routing.tables.*.sequence_col", "seq"}};
  return {};
}

// A value of the key's type other than `shown` (its default as the key shows it).
std::string sample(const KeyInfo& k, const YAML::Node& shown, const std::string& secret_file) {
  if (auto s = special_sample(k.path, secret_file); !s.empty()) return s;
  const std::string def = shown.IsScalar() ? shown.Scalar() : "";
  if (k.type == "boolean") return def == "true" ? "false" : "true";
  if (k.type.rfind("enum(", 0) == 0) {
    const std::string names = k.type.substr(5, k.type.size() - 6);
    for (size_t from = 0;;) {
      const auto bar = names.find('|', from);
      const std::string name = names.substr(from, bar - from);
      if (name != def) return name;
      from = bar + 1;
    }
  }
  if (k.type == "integer") {
    const int64_t v = std::stoll(def) + 1;
    return std::to_string(k.bounds && v > k.bounds->max ? v - 2 : v);
  }
  if (k.type == "duration") return "1234ms";
  if (k.type == "size") return "12345";
  if (k.type == "string") return "sample_value";
  if (k.type == "list<string>") return "[s1, s2]";
  if (k.type == "map<string,string>") return "{a: b}";
  FAIL("no sample for " << k.path << " of type " << k.type);
  return "";
}

// `doc` with `path` (dotted; a "*" component is `star`) set to the YAML `value`.
void set(YAML::Node doc, const std::string& path, const std::string& value, const std::string& star = "d.t") {
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const auto dot = path.find('.', from);
    parts.push_back(path.substr(from, dot - from));
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  YAML::Node n = doc;
  for (size_t i = 0; i + 1 < parts.size(); ++i) n.reset(n[parts[i] == "*" ? star : parts[i]]);
  n[parts.back()] = YAML::Load(value);
}

std::string text(const YAML::Node& doc) {
  YAML::Emitter e;
  e << doc;
  return e.c_str();
}

}  // namespace

TEST_CASE("config keys: every declared key sets the field it names", "[config][keys]") {
  TempDir dir("keys");
  const std::string secret_file = (dir.path() / "secret").string();
  std::ofstream(secret_file) << "from-a-file\n";
  const Config base = load_string(kBase, "keys.yaml");
  REQUIRE(config_keys().size() > 60);
  for (const auto& k : config_keys()) {
    INFO(k.path);
    const YAML::Node before = k.show(base);
    YAML::Node doc = YAML::Load(kBase);
    set(doc, k.path, sample(k, before, secret_file));
    for (const auto& [other, v] : companions(k.path)) set(doc, other, v);
    INFO(text(doc));
    const Config c = load_string(text(doc), "keys.yaml");
    CHECK(text(k.show(c)) != text(before));
  }
  // A secret file's content lands in the field of its key's target.
  for (const auto& k : config_keys())
    if (k.file_target) {
      YAML::Node doc = YAML::Load(kBase);
      set(doc, k.path, "\"" + secret_file + "\"");
      Config c = load_string(text(doc), "keys.yaml");
      CHECK(k.file_target(c) == "from-a-file");
    }
}

TEST_CASE("config keys: every key of a routing table and of a routing rule sets its field", "[config][keys]") {
  const TableOverride fresh;
  for (const auto& k : table_keys()) {
    INFO(k.path);
    const YAML::Node before = k.show(fresh);
    YAML::Node doc = YAML::Load(kBase);
    set(doc, k.path, sample(k, before, ""));
    for (const auto& [other, v] : companions(k.path)) set(doc, other, v);
    INFO(text(doc));
    const Config c = load_string(text(doc), "keys.yaml");
    REQUIRE(c.tables.count("d.t") == 1);
    CHECK(text(k.show(c.tables.at("d.t"))) != text(before));
  }
  const Config one = load_string(std::string(kBase) + "routing: {rules: [{match: \"a\", target: \"b.c\"}]}\n", "r.yaml");
  const Config two = load_string(std::string(kBase) + "routing: {rules: [{match: \"x\", target: \"y.z\"}]}\n", "r.yaml");
  for (const auto& k : rule_keys()) {
    INFO(k.path);
    if (k.path == "routing.rules.*.match" || k.path == "routing.rules.*.target") {
      CHECK(text(k.show(one.rules.at(0))) != text(k.show(two.rules.at(0))));
      continue;
    }
    const std::string leaf = k.path.substr(k.path.rfind('.') + 1);
    const std::string doc = std::string(kBase) + "routing: {rules: [{match: \"a\", target: \"b.c\", " + leaf + ": " +
                            sample(k, k.show(one.rules.at(0)), "") + "}]}\n";
    INFO(doc);
    CHECK(text(k.show(load_string(doc, "r.yaml").rules.at(0))) != text(k.show(one.rules.at(0))));
  }
  CHECK(one.rules.at(0).target == "b.c");
  CHECK(std::regex_match("a", one.rules.at(0).re));
}

namespace {

// Structs whose members are walked one by one; anything else is a value.
template <class T>
constexpr bool kWalked =
    std::is_same_v<T, Config> || std::is_same_v<T, doris::ClientConfig> || std::is_same_v<T, doris::TlsConfig> ||
    std::is_same_v<T, doris::Timeouts> || std::is_same_v<T, RetryPolicy> || std::is_same_v<T, Backoff> ||
    std::is_same_v<T, pipeline::PipelineConfig> || std::is_same_v<T, decode::DecoderOptions> ||
    std::is_same_v<T, decode::FlattenedFields> || std::is_same_v<T, decode::ExtraColumns> ||
    std::is_same_v<T, pipeline::HealthOptions> || std::is_same_v<T, TableOverride> || std::is_same_v<T, RowSettings> ||
    std::is_same_v<T, avro::RegistryOptions> || std::is_same_v<T, avro::RecordOptions>;

// Whether == compares V all the way down (std::vector<RoutingRule> declares
// an == that cannot be instantiated: a std::regex has none).
template <class V>
struct Deep : std::bool_constant<std::equality_comparable<V>> {};
template <class V>
struct Deep<std::vector<V>> : Deep<V> {};
template <class V>
struct Deep<std::optional<V>> : Deep<V> {};
template <class K, class V>
struct Deep<std::map<K, V>> : std::bool_constant<Deep<K>::value && Deep<V>::value> {};
template <class R, class... A>
struct Deep<std::function<R(A...)>> : std::false_type {};

template <class V>
bool same_value(const V& a, const V& b) {
  if constexpr (Deep<V>::value)
    return a == b;
  else if constexpr (requires { a.size(); })
    return a.size() == b.size();  // e.g. the routing rules, the tables: walked on their own
  else
    return true;  // a callback: never set by a key, so it must be exempt
}

// Calls `unchanged(address, where)` for each member (recursively) equal in
// `a` and `b`; `where` is its index path in declaration order ("7.15": the
// 16th member of the 8th), since C++ cannot name it.
template <class T, class F>
void walk(const T& a, const T& b, const std::string& trail, F&& unchanged) {
  boost::pfr::for_each_field(a, [&](const auto& field, std::size_t i) {
    using V = std::remove_cvref_t<decltype(field)>;
    const V* other = nullptr;
    boost::pfr::for_each_field(b, [&](const auto& g, std::size_t j) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(g)>, V>)
        if (i == j) other = &g;
    });
    REQUIRE(other != nullptr);
    const std::string where = trail + (trail.empty() ? "" : ".") + std::to_string(i);
    if constexpr (kWalked<V>)
      walk(field, *other, where, unchanged);
    else if (same_value(field, *other))
      unchanged(static_cast<const void*>(&field), where);
  });
}

}  // namespace

TEST_CASE("config keys: every field of the configuration has a key", "[config][keys]") {
  TempDir dir("keys");
  const std::string secret_file = (dir.path() / "secret").string();
  std::ofstream(secret_file) << "from-a-file\n";
  // Every key at once, each at a value other than its default.
  const Config fresh;
  YAML::Node doc = YAML::Load(kBase);
  // A bearer token excludes `user`: the first test sets each key alone.
  const std::set<std::string> alone = {"decoding.schema_registry.bearer_token",
                                       "decoding.schema_registry.bearer_token_file"};
  for (const auto& k : config_keys()) {
    if (alone.count(k.path)) continue;
    set(doc, k.path, sample(k, k.show(fresh), secret_file));
    for (const auto& [other, v] : companions(k.path)) set(doc, other, v);
  }
  // routing.tables, with every table key set.
  for (const auto& k : table_keys()) set(doc, k.path, sample(k, k.show(TableOverride{}), ""));
  INFO(text(doc));
  const Config all = load_string(text(doc), "keys.yaml");

  // Members no key sets, and why. Anything else equal to its default fails.
  const std::vector<std::pair<const void*, const char*>> exempt = {
      {&all.doris.discovery_interval, "tuning of the Doris client, not configurable"},
      {&all.doris.endpoint_quarantine, "tuning of the Doris client, not configurable"},
      {&all.doris.timeouts.expect_continue, "tuning of the Doris client, not configurable"},
      {&all.doris.timeouts.idle, "tuning of the Doris client, not configurable"},
      {&all.doris.timeouts.keepalive_idle, "tuning of the Doris client, not configurable"},
      {&all.doris.retry.backoff.base, "tuning of the Doris client, not configurable"},
      {&all.doris.retry.backoff.cap, "tuning of the Doris client, not configurable"},
      {&all.doris.retry.give_up_after, "the Doris client's retries are bounded by attempts"},
      {&all.doris.retry.retry_up_to, "the Doris client retries what its classifier calls Retry"},
      {&all.doris.chunk_bytes, "tuning of the Doris client, not configurable"},
      {&all.doris.gzip_level, "tuning of the Doris client, not configurable"},
      {&all.doris.error_log_lines, "tuning of the Doris client, not configurable"},
      {&all.doris.load_timeout_s, "set per load by the pipeline"},
      {&all.doris.max_redirects, "tuning of the Doris client, not configurable"},
      {&all.delivery.poll_timeout, "tuning of the pipeline, not configurable"},
      {&all.delivery.poll_max_messages, "tuning of the pipeline, not configurable"},
      {&all.delivery.backlog_poll_bytes, "tuning of the pipeline, not configurable"},
      {&all.delivery.write_chunk_bytes, "tuning of the pipeline, not configurable"},
      {&all.delivery.probe_parallelism, "tuning of the pipeline, not configurable"},
      {&all.delivery.probe_max_labels, "tuning of the pipeline, not configurable"},
      {&all.decoding.use_schema, "a test switch of the decoder"},
      {&all.schema_registry.max_cached_ids, "tuning of the registry client, not configurable"},
      {&all.schema_registry.bearer_token, "excludes user: set alone by the first test"},
      {&all.schema_registry_bearer_token_file, "excludes user: set alone by the first test"},
      {&all.decoding.recognise_repeated_schemas, "a test switch of the decoder"},
      {&all.decoding.geometry_mode, "not configurable: geometries are WKT"},
      {&all.decoding.flattened.table, "ExtractNewRecordState's fixed field names beyond op and deleted"},
      {&all.decoding.flattened.db, "ExtractNewRecordState's fixed field names beyond op and deleted"},
      {&all.decoding.flattened.schema, "ExtractNewRecordState's fixed field names beyond op and deleted"},
      {&all.decoding.flattened.source_ts, "ExtractNewRecordState's fixed field names beyond op and deleted"},
      {&all.decoding.flattened.lsn, "ExtractNewRecordState's fixed field names beyond op and deleted"},
      {&all.decoding.flattened.metadata_prefix, "ExtractNewRecordState's fixed field names beyond op and deleted"},
      {&all.decoding.extra_columns.sequence, "per table, from routing.tables.*.sequence_from_source_position"},
      {&all.decoding.extra_columns_per_table, "per table, through the router"},
      {&all.decoding.key_columns, "per table, through the router"},
  };
  std::set<const void*> exempt_at;
  for (const auto& [at, why] : exempt) exempt_at.insert(at);
  std::set<const void*> seen_exempt;
  size_t unchanged = 0;
  walk(all, fresh, "", [&](const void* at, const std::string& where) {
    if (exempt_at.count(at)) {
      seen_exempt.insert(at);
      return;
    }
    ++unchanged;
    FAIL_CHECK("Config member " << where << " (member indices, nested structs walked) is changed by no key");
  });
  CHECK(unchanged == 0);
  // Every exemption is still needed (a member that gained a key leaves the list).
  for (const auto& [at, why] : exempt) {
    INFO(why);
    CHECK(seen_exempt.count(at) == 1);
  }
  // The same for one routing table.
  const TableOverride& table = all.tables.at("d.t");
  walk(table, TableOverride{}, "", [&](const void*, const std::string& where) {
    FAIL_CHECK("TableOverride member " << where << " is changed by no key");
  });
  // And a routing rule's table settings, every rule key set.
  std::string rule = "{match: \"a\", target: \"b.c\"";
  for (const auto& k : rule_keys())
    if (k.path != "routing.rules.*.match" && k.path != "routing.rules.*.target")
      rule += ", " + k.path.substr(k.path.rfind('.') + 1) + ": " + sample(k, k.show(RoutingRule{}), "");
  const Config ruled = load_string(std::string(kBase) + "routing: {rules: [" + rule + "}]}\n", "r.yaml");
  walk(ruled.rules.at(0).row, RowSettings{}, "", [&](const void*, const std::string& where) {
    FAIL_CHECK("RoutingRule::row member " << where << " is changed by no key");
  });
}
