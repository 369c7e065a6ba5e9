#include "config/key_checks.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "config/config.hpp"
#include "config/reader.hpp"
#include "core/avro/registry_client.hpp"
#include "core/kafka/probe.hpp"

namespace cdc2doris::config {

namespace {

const YAML::Node section(const YAML::Node& root, const char* name) { return find_node(root, {name}); }

void check_kafka(const Reader& r, const YAML::Node& root, const Config& c) {
  const YAML::Mark root_mark = root.Mark();
  if (c.bootstrap_servers.empty()) r.fail(root_mark, "kafka.bootstrap_servers", "is required");
  if (c.topics.empty()) r.fail(root_mark, "kafka.topics", "is required (or kafka.topic_regex)");
  const YAML::Node props = find_node(root, {"kafka", "properties"});
  for (const char* forced : {"enable.auto.commit", "enable.auto.offset.store"}) {
    auto it = c.kafka_properties.find(forced);
    if (it != c.kafka_properties.end() && it->second != "false")
      r.fail(props[forced].Mark(), std::string("kafka.properties.") + forced,
             "must be false: cdc2doris commits offsets itself after each epoch");
  }
  // librdkafka judges its own properties (names, values, combinations), so
  // `check` rejects exactly what the consumer would.
  if (auto problem = kafka::check_properties(c.source_config().properties)) {
    if (!problem->key.empty() && props.IsDefined() && props.IsMap() && props[problem->key].IsDefined())
      r.fail(key_mark(props, problem->key), "kafka.properties." + problem->key, problem->message);
    r.fail(props.IsDefined() ? props.Mark() : root_mark, "kafka.properties", "librdkafka rejects them: " + problem->message);
  }
  if (c.doris.fe_urls.empty()) r.fail(root_mark, "doris.fe", "is required");
}

void check_delivery(const Reader& r, const YAML::Node& root, Config& c) {
  auto& d = c.delivery;
  if (!c.label_prefix_explicit) {
    // The default names the instance, so two instances of one group (or a
    // duplicate start on one host) never share labels (issue 31).
    std::string id = c.instance_id;
    for (auto& ch : id)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == ':')) ch = '_';
    d.label_prefix = ("cdc2doris_" + id).substr(0, 64);
  }
  const YAML::Node delivery = section(root, "delivery");
  if (d.bad_record_policy == pipeline::BadRecordPolicy::DeadLetter && d.dead_letter_topic.empty())
    r.fail(delivery.Mark(), "delivery.dead_letter_topic", "is required with bad_records: dead_letter");
  if (d.backoff_cap < d.backoff_base) {
    const bool max_given = delivery.IsMap() && delivery["backoff_max"].IsDefined();
    r.fail((max_given ? delivery["backoff_max"] : delivery["backoff_base"]).Mark(), "delivery.backoff_max",
           "must be at least delivery.backoff_base (" + std::to_string(d.backoff_cap.count()) + "ms < " +
               std::to_string(d.backoff_base.count()) + "ms)");
  }
}

// The decoder judges its own options (the time zone above all) exactly as
// the pipeline will construct it.
void check_decoding(const Reader& r, const YAML::Node& root, const Config& c) {
  try {
    decode::Decoder probe(c.decoding);
  } catch (const std::exception& e) {
    const YAML::Node decoding = section(root, "decoding");
    const YAML::Node zone = find_node(root, {"decoding", "time_zone"});
    const bool about_zone = std::string(e.what()).find("time zone") != std::string::npos && zone.IsDefined();
    r.fail(about_zone ? zone.Mark() : (decoding.IsDefined() ? decoding.Mark() : root.Mark()),
           about_zone ? "decoding.time_zone" : "decoding", e.what());
  }
  const YAML::Node registry = find_node(root, {"decoding", "schema_registry", "url"});
  if (c.record_format.any_avro() && c.schema_registry.url.empty()) {
    const YAML::Node format = find_node(root, {"decoding", "format"});
    const bool by_format = c.record_format.format != avro::RecordFormat::Json;
    r.fail(by_format ? format.Mark() : find_node(root, {"decoding", "topic_formats"}).Mark(),
           by_format ? "decoding.format" : "decoding.topic_formats",
           "avro and auto need decoding.schema_registry.url");
  }
  if (c.record_format.payload_id == avro::IdKind::Global && c.schema_registry.api != avro::RegistryApi::Apicurio)
    r.fail(find_node(root, {"decoding", "avro", "id_kind"}).Mark(), "decoding.avro.id_kind",
           "global ids need decoding.schema_registry.api: apicurio (Confluent's API serves no global ids)");
  // The TLS files themselves are read when the client is built (run,
  // check --connect): a file may appear after the check. What the keys say
  // together is judged here, so `check` without --connect catches it.
  if (!c.schema_registry.url.empty())
    if (auto problem = avro::RegistryClient::options_problem(c.schema_registry)) {
      std::vector<std::string> path{"decoding", "schema_registry"};
      for (size_t from = 0; from <= problem->key.size();) {
        const size_t dot = std::min(problem->key.find('.', from), problem->key.size());
        path.push_back(problem->key.substr(from, dot - from));
        from = dot + 1;
      }
      const YAML::Node at = find_node(root, path);
      r.fail((at.IsDefined() ? at : registry).Mark(), "decoding.schema_registry." + problem->key, problem->what);
    }
  // routing.tables.<target>.key_columns / sequence_from_source_position reach
  // the decoder through the router (TableSettings), which knows the target.
}

// The soft-delete flag and the deleted-at column are two columns.
void check_deletes(const Reader& r, const YAML::Node& root, const Config& c) {
  const auto& d = c.decoding.deletes;
  if (d.soft_column == d.deleted_at_column)
    r.fail(find_node(root, {"routing", "deleted_at_column"}).Mark(), "routing.deleted_at_column",
           "must differ from routing.soft_delete_column");
  auto same = [&](const RowSettings& row) {
    return row.soft_delete_column.value_or(d.soft_column) == row.deleted_at_column.value_or(d.deleted_at_column);
  };
  for (const auto& [name, t] : c.tables)
    if (same(t.row))
      r.fail(find_node(root, {"routing", "tables", name}).Mark(), "routing.tables." + name + ".deleted_at_column",
             "must differ from the soft_delete_column");
  const YAML::Node rules = find_node(root, {"routing", "rules"});
  for (size_t i = 0; i < c.rules.size(); ++i)
    if (same(c.rules[i].row))
      r.fail(rules[i].Mark(), "routing.rules[" + std::to_string(i) + "].deleted_at_column",
             "must differ from the soft_delete_column");
}

void check_admin(const Reader& r, const YAML::Node& root, Config& c) {
  if (c.admin_tls_cert_file.empty() != c.admin_tls_key_file.empty())
    r.fail(find_node(root, {"admin", "tls"}).Mark(), "admin.tls", "needs both cert_file and key_file");
  if (c.admin_probes_require_token && c.admin_token.empty())
    r.fail(find_node(root, {"admin", "probes_require_token"}).Mark(), "admin.probes_require_token",
           "needs admin.token or admin.token_file");
  // The stall timeout is judged against the epoch interval.
  c.health.epoch_interval = c.delivery.epoch_interval;
}

}  // namespace

void check_table(const Reader& r, const YAML::Node& node, const std::string& where, const TableOverride& t) {
  if (t.sequence_from_source_position && t.sequence_col.empty())
    r.fail(node.Mark(), where + ".sequence_from_source_position", "needs sequence_col (the column to fill)");
  for (const auto& col : t.row.exclude)
    if (std::find(t.key_columns.begin(), t.key_columns.end(), col) != t.key_columns.end())
      r.fail(find_node(node, {"exclude"}).Mark(), where + ".exclude",
             "'" + col + "' is a key column (key_columns): deletes and updates need it");
  check_row_settings(r, node, where, t.row);
}

void check_row_settings(const Reader& r, const YAML::Node& node, const std::string& where, const RowSettings& t) {
  // Transforms that contradict each other: better refused here than found in a row.
  for (const auto& col : t.exclude)
    if (t.rename.count(col))
      r.fail(find_node(node, {"exclude"}).Mark(), where + ".exclude", "'" + col + "' is also renamed (rename)");
  std::map<std::string, std::string> targets;
  for (const auto& [from, to] : t.rename) {
    std::string lower = to;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (auto [it, fresh] = targets.emplace(lower, from); !fresh)
      r.fail(find_node(node, {"rename", from}).Mark(), where + ".rename." + from,
             "'" + it->second + "' and '" + from + "' both become Doris column '" + to +
                 "' (Doris compares names case-insensitively)");
  }
}

void check_config(const Reader& r, const YAML::Node& root, Config& c) {
  check_kafka(r, root, c);
  check_delivery(r, root, c);
  check_decoding(r, root, c);
  check_deletes(r, root, c);
  check_admin(r, root, c);
}

}  // namespace cdc2doris::config
