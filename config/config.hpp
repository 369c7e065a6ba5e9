#pragma once
// The daemon's YAML configuration (issue 7). Each key is declared once
// (keys.cpp) with the field below it sets; parsing (parse.cpp), unknown-key
// checks, docs/configuration.md and the dump come from the declarations, and
// the defaults are these fields' initialisers. tests/config/keys_test.cpp
// proves every key sets its field and every field has a key.
//
// Every error names file:line:column, the key path, the bad value (never for
// secret keys) and what was expected.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/avro/avro_records.hpp"
#include "core/decode/decoder.hpp"
#include "core/doris/client.hpp"
#include "core/kafka/source.hpp"
#include "core/pipeline/health.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/pipeline/router.hpp"

namespace cdc2doris::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a source delete does and how columns are shaped, for a target table
// (routing.tables.*) or for every table a routing rule routes to
// (routing.rules.*); the keys are declared once for both (keys.cpp). Unset
// (or empty) follows the next level: routing.tables.<target> over the rule
// over routing.* (docs/decoding.md).
struct RowSettings {
  // Delete modes (docs/decoding.md); unset: routing.delete_mode etc. (Config::decoding.deletes).
  std::optional<decode::DeleteMode> delete_mode;
  std::optional<std::string> soft_delete_column;
  std::optional<std::string> deleted_at_column;
  // Column transforms (docs/decoding.md, "Column transforms"); source column names.
  std::map<std::string, std::string> rename;  // source -> Doris
  std::vector<std::string> exclude;
  std::optional<decode::NameCase> column_case;  // unset: routing.column_case
  std::shared_ptr<const decode::RowFilter> filter;
  std::vector<decode::ComputedColumn> computed_columns;  // added to routing.computed_columns

  bool any() const {
    return delete_mode || soft_delete_column || deleted_at_column || !rename.empty() || !exclude.empty() ||
           column_case || filter || !computed_columns.empty();
  }
  // These settings over `under`, key by key.
  RowSettings over(const RowSettings& under) const;
};

struct RoutingRule {
  std::string match;  // regex over the source "db.table"
  std::regex re;
  std::string target;  // template: {db} {schema} {table} {topic} and $1..$9 of `match`
  RowSettings row;     // for every table it routes to
};

struct TableOverride {
  std::optional<bool> unique_key;  // key_model: unique | duplicate
  std::string sequence_col;
  bool sequence_from_source_position = false;  // adds the decoder's sequence column
  std::map<std::string, std::string> headers;
  std::vector<std::string> key_columns;
  std::map<std::string, decode::EpochUnit> epoch_units;  // schemaless DATETIME columns by name
  std::map<std::string, int> decimal_scales;              // schemaless base64 decimals by name
  // Table creation and schema evolution (docs/schema-evolution.md); unset: the routing.* defaults.
  std::optional<bool> auto_create;
  std::optional<schema::Policy> schema_evolution;
  std::optional<pipeline::TruncatePolicy> truncate;
  RowSettings row;  // over the routing rule's
  std::map<std::string, std::string> properties;
  int buckets = 0;
  bool flexible_partial_updates = false;
  std::vector<schema::Column> columns;
  std::string new_column_type;
};

// The host name: a StatefulSet pod name is stable across restarts and
// unique among the pods, which is what an instance id has to be.
std::string default_instance_id();

struct Config {
  std::string path;

  // kafka
  std::string bootstrap_servers;
  std::string group_id = "cdc2doris";
  // This instance's stable identity in the group (default: the host name, a
  // StatefulSet pod name): group.instance.id and `{instance_id}` in the label
  // prefix.
  std::string instance_id = default_instance_id();
  bool static_membership = true;  // group.instance.id = instance_id
  std::vector<std::string> topics;  // entries starting with '^' are regexes
  std::map<std::string, std::string> kafka_properties;

  // doris
  doris::ClientConfig doris = default_doris();
  std::string doris_password_file;  // read into doris.password after parsing
  std::map<std::string, std::string> load_headers;  // default headers for every table

  // routing
  std::vector<std::string> include;  // regexes over source db.table; empty = all
  std::vector<std::string> exclude;
  std::string target_template = "{db}.{table}";
  std::vector<RoutingRule> rules;
  std::map<std::string, pipeline::Target> explicit_map;  // source db.table -> target
  std::map<std::string, TableOverride> tables;           // target db.table -> settings
  bool auto_create = false;
  schema::Policy schema_evolution = schema::Policy::Add;
  std::optional<pipeline::TruncatePolicy> truncate;  // nullopt: by key model
  // routing.delete_mode, soft_delete_column, deleted_at_column live in
  // decoding.deletes (the decoder's default for every table), routing.column_case
  // and computed_columns in decoding.transforms.
  std::map<std::string, std::string> create_properties;
  std::map<std::string, std::string> create_database_properties;

  pipeline::PipelineConfig delivery;
  // delivery.label_prefix was set. Else it is "cdc2doris_{instance_id}",
  // unless the state already recorded a prefix (keep_recorded_label_prefix).
  bool label_prefix_explicit = false;
  decode::DecoderOptions decoding;
  // decoding.format, decoding.topic_formats and the Avro framing: records
  // that are Avro are read with schemas from this registry.
  avro::RecordOptions record_format;
  avro::RegistryOptions schema_registry;
  std::string schema_registry_password_file;  // read into schema_registry.password after parsing
  std::string schema_registry_bearer_token_file;  // read into schema_registry.bearer_token after parsing

  std::string state_dir = "/var/lib/cdc2doris";
  int state_retention_epochs = 100;

  std::string admin_listen = "127.0.0.1:8080";
  std::string admin_token;  // empty: no authentication on the admin endpoint
  std::string admin_token_file;  // read into admin_token after parsing
  bool admin_probes_require_token = false;
  std::string admin_tls_cert_file;  // both set: the admin endpoint speaks HTTPS only
  std::string admin_tls_key_file;
  pipeline::HealthOptions health;  // admin.* grace periods and bounds
  std::string log_level = "info";
  std::string log_format = "text";

  // Values that must never be printed: the Doris password, sensitive
  // librdkafka properties (passwords, tokens, keys, JAAS config; not
  // sasl.username), passwords in FE/BE URLs. Never used to scan text (see
  // core/common/redact.hpp): tests grep every output for them.
  std::vector<std::string> secrets() const;
  // The effective configuration as YAML with secrets redacted.
  std::string dump() const;

  // Without an explicit delivery.label_prefix, a state that recorded labels
  // under a prefix (the old default "cdc2doris", or an older instance id)
  // keeps the one it used last: a new prefix would orphan its labels.
  // `recorded`: (prefix, last epoch) per prefix the state knows. Returns the
  // prefix adopted, if it changed.
  std::optional<std::string> keep_recorded_label_prefix(const std::vector<std::pair<std::string, uint64_t>>& recorded);
  kafka::SourceConfig source_config() const;

  static doris::ClientConfig default_doris();
};

// Loads and validates; throws ConfigError. `env` resolves ${VAR} (default: the
// process environment).
Config load_file(const std::string& path);
Config load_string(const std::string& text, const std::string& name = "<config>",
                   const std::map<std::string, std::string>* env = nullptr);

// docs/configuration.md as generated from the declarations.
std::string reference_markdown();

// The router the config describes (include/exclude, rules, templates, map).
std::unique_ptr<pipeline::Router> make_router(const Config& cfg);

}  // namespace cdc2doris::config
