#include "config/keys.hpp"

#include <charconv>
#include <regex>
#include <type_traits>
#include <variant>

#include "config/config.hpp"
#include "config/key_builders.hpp"
#include "config/column_keys.hpp"
#include "config/key_checks.hpp"
#include "config/listen.hpp"
#include "config/parse.hpp"
#include "config/reader.hpp"
#include "core/common/redact.hpp"
#include "core/decode/doris_types.hpp"
#include "core/doris/url.hpp"
#include "core/kafka/probe.hpp"

namespace cdc2doris::config {

namespace {

using namespace keys;

using C = K<Config>;
using Table = K<TableOverride>;
using Rule = K<RoutingRule>;

// ---------------------------------------------------------------- value checks

// decoding.format's names, also the values of decoding.topic_formats.
const std::vector<std::pair<std::string, avro::RecordFormat>>& record_formats() {
  static const std::vector<std::pair<std::string, avro::RecordFormat>> names{
      {"json", avro::RecordFormat::Json}, {"avro", avro::RecordFormat::Avro}, {"auto", avro::RecordFormat::Auto}};
  return names;
}

void check_regexes(const Reader& r, const YAML::Node& n, const std::string& where, const std::vector<std::string>& list) {
  for (size_t i = 0; i < list.size(); ++i) try {
      std::regex test(list[i]);
    } catch (const std::regex_error& e) {
      r.fail(element(n, i).Mark(), where + "[" + std::to_string(i) + "]", "invalid regex '" + list[i] + "': " + e.what());
    }
}

// librdkafka treats a subscription starting with '^' as a regex and fails
// the subscribe (at run time, long after `check`) if it does not compile.
// A Kafka header name Apicurio's converter may be told to use.
void header_name(const Reader& r, const YAML::Node& n, const std::string& where, const std::string& name) {
  if (name.empty()) r.expected(n, where, "a header name");
}

void check_subscription(const Reader& r, const YAML::Node& n, const std::string& where, const std::string& topic) {
  if (topic.rfind('^', 0) != 0) return;
  if (auto why = kafka::check_topic_regex(topic)) r.fail(n.Mark(), where, "invalid regex '" + topic + "': " + *why);
}

// A target template names "db.table" and only the placeholders the router fills.
void check_template(const Reader& r, const YAML::Node& n, const std::string& where, const std::string& t) {
  static const std::regex placeholder(R"(\{([^}]*)\})");
  for (auto it = std::sregex_iterator(t.begin(), t.end(), placeholder); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name != "db" && name != "schema" && name != "table")
      r.expected(n, where, "a template with {db}, {schema} and {table} only (not {" + name + "})");
  }
  // "$1" may itself hold "db.table"; anything else needs the dot.
  const bool group = std::regex_search(t, std::regex(R"(\$[1-9])"));
  const auto dot = t.find('.');
  if (!group && (dot == std::string::npos || dot == 0 || dot + 1 == t.size()))
    r.expected(n, where, "a target 'db.table' template such as '{db}.{table}'");
}

bool label_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == ':'; }

const std::vector<std::pair<std::string, schema::Policy>> kPolicies = {
    {"off", schema::Policy::Off}, {"add", schema::Policy::Add}, {"full", schema::Policy::Full}};
const std::vector<std::pair<std::string, pipeline::TruncatePolicy>> kTruncate = {
    {"apply", pipeline::TruncatePolicy::Apply},
    {"ignore", pipeline::TruncatePolicy::Ignore},
    {"fail", pipeline::TruncatePolicy::Fail}};
const std::vector<std::pair<std::string, decode::DeleteMode>> kDeleteModes = {
    {"hard", decode::DeleteMode::Hard}, {"soft", decode::DeleteMode::Soft}, {"ignore", decode::DeleteMode::Ignore}};

// soft_delete_column / deleted_at_column of a table or rule: unset follows the next level.
template <class T>
Key<T> row_column(std::string path, std::optional<std::string> RowSettings::*member, bool may_be_empty,
                  std::string_view doc) {
  return K<T>::custom(
      std::move(path), "string", doc,
      [member, may_be_empty](const Reader& r, const YAML::Node& n, const std::string& where, T& t) {
        t.row.*member = r.str(n, where);
        column_name(may_be_empty)(r, n, where, *(t.row.*member));
      },
      [member](const T& t) {
        return t.row.*member ? YAML::Node(*(t.row.*member)) : YAML::Node(YAML::NodeType::Null);
      });
}

// Delete mode and column transforms (RowSettings), declared once for a
// target table (`at` "routing.tables.*") and a routing rule ("routing.rules.*").
template <class T>
std::vector<Key<T>> row_keys(const std::string& at) {
  return {
      shown_as("(routing.delete_mode)",
               K<T>::choice(at + ".delete_mode", FIELD(row.delete_mode), kDeleteModes,
                            "What a source delete does to the table: `hard`, `soft` (with `soft_delete_column`, "
                            "`deleted_at_column`) or `ignore`; docs/decoding.md (\"Delete modes\").")),
      shown_as("(routing.soft_delete_column)",
               row_column<T>(at + ".soft_delete_column", &RowSettings::soft_delete_column, false,
                             "The table's soft-delete flag column.")),
      shown_as("(routing.deleted_at_column)",
               row_column<T>(at + ".deleted_at_column", &RowSettings::deleted_at_column, true,
                             "The table's deleted-at column; `\"\"`: none.")),
      K<T>::custom(
          at + ".rename", "map<string,string>",
          "Source column -> Doris column, e.g. `{cust_id: customer_id}`: the row, an auto-created table and schema "
          "evolution use the Doris name. Over `column_case`.",
          [](const Reader& r, const YAML::Node& n, const std::string& where, T& t) {
            t.row.rename = r.string_map(n, where);
            for (const auto& [from, to] : t.row.rename) check_column(r, n[from], where + "." + from, to);
          },
          [](const T& t) {
            YAML::Node out(YAML::NodeType::Map);
            for (const auto& [from, to] : t.row.rename) out[from] = to;
            return out;
          }),
      K<T>::strings(at + ".exclude", FIELD(row.exclude),
                    "Source columns never loaded: left out of every row and of an auto-created table; a source ADD "
                    "of one is no DDL. Not a key column."),
      shown_as("(routing.column_case)",
               K<T>::choice(at + ".column_case", FIELD(row.column_case), name_cases(),
                            "How the table's source column names become Doris names.")),
      shown_as("\"\" (every row)",
               K<T>::custom(
                   at + ".filter", "string",
                   "Rows to load, an expression over source columns and @metadata, e.g. `status != 'draft' AND "
                   "region IN ('eu', 'us')`; parsed at start. Rows that do not match are dropped "
                   "(`cdc2doris_records_skipped_total{reason=\"filtered\"}`); an update that no longer matches "
                   "deletes its key; deletes always pass. Grammar and rules in docs/decoding.md (\"Column "
                   "transforms\").",
                   [](const Reader& r, const YAML::Node& n, const std::string& where, T& t) {
                     t.row.filter = read_filter(r, n, where);
                   },
                   [](const T& t) {
                     return t.row.filter ? YAML::Node(t.row.filter->text()) : YAML::Node(YAML::NodeType::Null);
                   })),
      K<T>::custom(at + ".computed_columns", "map<string,enum>",
                   "Doris columns filled from the record's metadata, added to `routing.computed_columns`, e.g. "
                   "`{src_table: source.table, kafka_offset: offset}`.",
                   [](const Reader& r, const YAML::Node& n, const std::string& where, T& t) {
                     t.row.computed_columns = read_computed(r, n, where);
                   },
                   [](const T& t) { return show_computed(t.row.computed_columns); }),
  };
}

std::vector<std::pair<std::string, std::string>> same(std::initializer_list<const char*> names) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* n : names) out.emplace_back(n, n);
  return out;
}

// ---------------------------------------------------------------- routing.rules.*
std::vector<Key<RoutingRule>> declare_rules() {
  std::vector<Key<RoutingRule>> keys{
      shown_as("(required)",
               Rule::custom("routing.rules.*.match", "string", "Regex over the source `db.table`.",
                            [](const Reader& r, const YAML::Node& n, const std::string& where, RoutingRule& rule) {
                              rule.match = r.str(n, where);
                              try {
                                rule.re = std::regex(rule.match);
                              } catch (const std::regex_error& e) {
                                r.fail(n.Mark(), where, "invalid regex '" + rule.match + "': " + e.what());
                              }
                            },
                            [](const RoutingRule& rule) { return YAML::Node(rule.match); })),
      shown_as("(required)", Rule::string("routing.rules.*.target", FIELD(target),
                                          "Target `db.table` template; `$1`..`$9` are the regex groups, `{db}` etc. as above.",
                                          check_template)),
  };
  // Settings of every table the rule routes to, under routing.tables.<target>'s.
  for (auto& k : row_keys<RoutingRule>("routing.rules.*")) keys.push_back(std::move(k));
  return keys;
}

// ---------------------------------------------------------------- routing.tables.*
std::vector<Key<TableOverride>> declare_tables() {
  std::vector<Key<TableOverride>> keys{
      shown_as("(from Doris)", Table::choice("routing.tables.*.key_model", FIELD(unique_key),
                                             std::vector<std::pair<std::string, bool>>{{"unique", true}, {"duplicate", false}},
                                             "Override the key model (otherwise read from Doris' `_schema`).")),
      Table::string("routing.tables.*.sequence_col", FIELD(sequence_col),
                    "Doris sequence column (`function_column.sequence_col`)."),
      Table::boolean("routing.tables.*.sequence_from_source_position", FIELD(sequence_from_source_position),
                     "Fill the sequence column from the source position (binlog file/pos, LSN)."),
      Table::string_map("routing.tables.*.headers", FIELD(headers),
                        "Extra Stream Load headers for this table (`strict_mode: \"false\"` turns the default strict "
                        "mode off).",
                        true),
      shown_as("(from the Kafka key)", Table::strings("routing.tables.*.key_columns", FIELD(key_columns),
                                                      "Primary-key columns when the Kafka key does not carry them.")),
      shown_as("(routing.auto_create)", Table::custom("routing.tables.*.auto_create", "boolean",
                                                      "Create this table when it does not exist.",
                                                      [](const Reader& r, const YAML::Node& n, const std::string& where,
                                                         TableOverride& t) { t.auto_create = r.boolean(n, where); },
                                                      [](const TableOverride& t) {
                                                        return t.auto_create ? YAML::Node(*t.auto_create)
                                                                             : YAML::Node(YAML::NodeType::Null);
                                                      })),
      shown_as("(routing.schema_evolution)", Table::choice("routing.tables.*.schema_evolution", FIELD(schema_evolution),
                                                           kPolicies, "Schema-evolution policy of this table.")),
      shown_as("(routing.truncate)", Table::choice("routing.tables.*.truncate", FIELD(truncate), kTruncate,
                                                   "What a source TRUNCATE does to this table.")),
  };
  for (auto& k : row_keys<TableOverride>("routing.tables.*")) keys.push_back(std::move(k));
  std::vector<Key<TableOverride>> rest{
      Table::string_map("routing.tables.*.properties", FIELD(properties),
                        "PROPERTIES when this table is auto-created, over `routing.create_properties`."),
      shown_as("0 (AUTO)", Table::integer("routing.tables.*.buckets", FIELD(buckets), between(0, 100000),
                                          "Buckets when this table is auto-created; 0: `BUCKETS AUTO`.")),
      Table::boolean("routing.tables.*.flexible_partial_updates", FIELD(flexible_partial_updates),
                     "Create the table with `enable_unique_key_skip_bitmap_column` (flexible partial updates, Doris "
                     "3.1+)."),
      Table::custom(
          "routing.tables.*.columns", "list<string>",
          "Schemaless records: the columns to auto-create the table with, `name TYPE` each (keys from `key_columns` "
          "or the Kafka key).",
          [](const Reader& r, const YAML::Node& n, const std::string& where, TableOverride& t) {
            const auto defs = r.strings(n, where);
            for (size_t i = 0; i < defs.size(); ++i) {
              const std::string& d = defs[i];
              const auto sp = d.find(' ');
              if (sp == std::string::npos || sp == 0 || d.find_first_not_of(' ', sp) == std::string::npos)
                r.fail(element(n, i).Mark(), where + "[" + std::to_string(i) + "]",
                       "expected 'name TYPE' (e.g. 'id BIGINT'), got '" + d + "'");
              t.columns.push_back(
                  {d.substr(0, sp), d.substr(d.find_first_not_of(' ', sp)), true, std::nullopt, false, false});
            }
          },
          [](const TableOverride& t) {
            YAML::Node out(YAML::NodeType::Sequence);
            for (const auto& c : t.columns) out.push_back(c.name + " " + c.type);
            return out;
          }),
      shown_as("\"\" (refuse)",
               Table::string("routing.tables.*.new_column_type", FIELD(new_column_type),
                             "Schemaless records: the Doris type a JSON key the table lacks is added as (policy "
                             "add/full); empty: such a record is a bad record.")),
      Table::custom(
          "routing.tables.*.decimal_scales", "map<string,integer>",
          "Schemaless records: columns whose values are Debezium Decimal bytes (base64) of this scale, converted to "
          "the exact decimal text, e.g. a DECIMAL(65,30) beyond Doris' 38 digits into a STRING column. A value that is "
          "not such bytes is a bad record.",
          [](const Reader& r, const YAML::Node& n, const std::string& where, TableOverride& t) {
            if (!n.IsMap()) r.fail(n.Mark(), where, "expected a map of column: scale");
            for (const auto& kv : n) {
              const std::string col = kv.first.template as<std::string>();
              const int64_t scale = r.integer(kv.second, where + "." + col);
              if (scale < 0 || scale > 1000) r.fail(kv.second.Mark(), where + "." + col, "expected a scale from 0 to 1000");
              t.decimal_scales[col] = static_cast<int>(scale);
            }
          },
          [](const TableOverride& t) {
            YAML::Node out(YAML::NodeType::Map);
            for (const auto& [col, scale] : t.decimal_scales) out[col] = std::to_string(scale);
            return out;
          }),
      shown_as("{} (by the column's scale)",
               Table::custom(
                   "routing.tables.*.epoch_units", "map<string,enum(s|ms|us|ns)>",
                   "Schemaless records: the unit of epoch integers per DATETIME column. Default: the Doris column's "
                   "scale, as Debezium's adaptive precision mode writes it (DATETIME(0-3) ms, (4-6) us); set it for "
                   "time.precision.mode=connect (ms) or nanoseconds (ns).",
                   [](const Reader& r, const YAML::Node& n, const std::string& where, TableOverride& t) {
                     for (const auto& [col, unit] : r.string_map(n, where)) {
                       auto u = decode::parse_epoch_unit(unit);
                       if (!u) r.fail(n[col].Mark(), where + "." + col, "expected one of s, ms, us, ns, got '" + unit + "'");
                       t.epoch_units[col] = *u;
                     }
                   },
                   [](const TableOverride& t) {
                     static const char* const names[] = {"s", "ms", "us", "ns"};
                     YAML::Node out(YAML::NodeType::Map);
                     for (const auto& [col, unit] : t.epoch_units) out[col] = names[static_cast<int>(unit)];
                     return out;
                   })),
  };
  for (auto& k : rest) keys.push_back(std::move(k));
  return keys;
}

// ---------------------------------------------------------------- the configuration
// Keep grouped by section; docs/configuration.md lists them in this order.
std::vector<Key<Config>> declare() {
  using L = pipeline::PipelineConfig::LostGroupOffsets;
  return {
      // ---------------------------------------------------------------- kafka
      shown_as("(required)", C::string("kafka.bootstrap_servers", FIELD(bootstrap_servers),
                                       "Kafka bootstrap servers, `host:port[,host:port...]`.")),
      C::string("kafka.group_id", FIELD(group_id),
                "Consumer group. Offsets are committed to it after every epoch so standard lag tools work."),
      shown_as("(the host name)",
               C::string("kafka.instance_id", FIELD(instance_id),
                         "This instance's stable identity in the consumer group: `group.instance.id` (static "
                         "membership) and `{instance_id}` in `delivery.label_prefix`. Unique per live instance of a "
                         "group: a second live instance with the same id fences the first, which stops with an "
                         "error. A StatefulSet pod name fits.",
                         [](const Reader& r, const YAML::Node& n, const std::string& where, const std::string& id) {
                           bool ok = !id.empty() && id.size() <= 64;
                           for (char ch : id) ok = ok && (label_char(ch) || ch == '.');
                           if (!ok) r.expected(n, where, "1 to 64 letters, digits, '-', '_', '.' or ':'");
                         })),
      C::boolean("kafka.static_membership", FIELD(static_membership),
                 "Join with `group.instance.id` = `instance_id`: a restarted instance gets its partitions back "
                 "without a rebalance; a stopped one keeps them until `session.timeout.ms` (see docs/operations.md)."),
      C::choice("kafka.on_offset_gap", FIELD(delivery.skip_offset_gaps),
                std::vector<std::pair<std::string, bool>>{{"fail", false}, {"skip", true}},
                "When the next offset to read was deleted (retention, DeleteRecords) before it was loaded: `fail` "
                "stops the daemon (exit 1) naming the partition, the offset, the log start and the remedies; `skip` "
                "continues at the log start (logged, `cdc2doris_offset_gaps_skipped_total`). Global, for every "
                "topic. Never skips inside a replay. A partition nobody has an offset for still starts per "
                "`auto.offset.reset` (default earliest)."),
      C::choice("kafka.on_group_offsets_lost", FIELD(delivery.on_group_offsets_lost),
                std::vector<std::pair<std::string, L>>{{"fail", L::Fail}, {"stored", L::Stored}, {"beginning", L::Beginning}},
                "A partition the consumer group has no offset for while this instance's state has one inside the "
                "log: the topic was deleted and re-created, or the group's offsets expired, or `group_id` changed "
                "(Kafka cannot tell which). `fail` stops the daemon (exit 1) naming the partition; `stored` "
                "continues at the stored offset (expiry, rename); `beginning` reads the partition from its log "
                "start (re-created topic). A stored offset above the high watermark is always a re-created topic "
                "and is read from its start (logged, `cdc2doris_topics_recreated_total`). Set it for one restart, "
                "then remove it."),
      shown_as("(required unless topic_regex)",
               C::strings("kafka.topics", FIELD(topics), "Topics to consume.",
                          [](const Reader& r, const YAML::Node& n, const std::string& where,
                             const std::vector<std::string>& topics) {
                            for (size_t i = 0; i < topics.size(); ++i)
                              check_subscription(r, element(n, i), where + "[" + std::to_string(i) + "]", topics[i]);
                          })),
      // Joins kafka.topics as one more subscription (librdkafka's regex form starts with '^').
      shown_as("", C::custom(
                       "kafka.topic_regex", "string",
                       "A regex subscription (POSIX extended, as librdkafka compiles it), e.g. `^dbserver1\\..*`.",
                       [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
                         std::string re = r.str(n, where);
                         c.topics.push_back(re.rfind('^', 0) == 0 ? re : "^" + re);
                         check_subscription(r, n, where, c.topics.back());
                       },
                       [](const Config& c) {
                         YAML::Node out(YAML::NodeType::Null);
                         for (const auto& t : c.topics)
                           if (t.rfind('^', 0) == 0) out.push_back(t);
                         return out;
                       })),
      C::string_map("kafka.properties", FIELD(kafka_properties),
                    "librdkafka properties passed through verbatim (SASL/SSL, fetch sizes...). Values of keys holding "
                    "secrets (`sasl.password`, `ssl.key.password`, `sasl.jaas.config`, ...) are redacted everywhere. "
                    "`enable.auto.commit` must stay false. Unless given here, cdc2doris sets "
                    "`queued.max.messages.kbytes` 32768, `queued.min.messages` 10000000 and `fetch.max.bytes` "
                    "8388608 (full catch-up speed within ~150 MiB RSS, see docs/kafka-source.md). librdkafka itself "
                    "judges names, values and combinations when the configuration is loaded; files they name "
                    "(`ssl.ca.location`, ...) are read by `run` and `check --connect`. Tested examples for TLS, "
                    "SASL/SCRAM and PLAIN over TLS, mutual TLS and Kerberos (GSSAPI), and the errors Kafka's "
                    "refusals give: docs/operations.md \"Security\".",
                    true),
      // ---------------------------------------------------------------- doris
      shown_as("(required)",
               C::custom(
                   "doris.fe", "list<string>",
                   "FE HTTP addresses: `host:port`, `http://host:port` or `https://host:port`. Several give failover. "
                   "Credentials in a URL are never printed.",
                   [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
                     c.doris.fe_urls = r.strings(n, where);
                     for (size_t i = 0; i < c.doris.fe_urls.size(); ++i)
                       if (!doris::parse_url(c.doris.fe_urls[i]))
                         r.fail(element(n, i).Mark(), where + "[" + std::to_string(i) + "]",
                                "expected an http:// or https:// URL or host:port, got '" +
                                    doris::redact_url(c.doris.fe_urls[i]) + "'");
                   },
                   [](const Config& c) {
                     // Userinfo hidden where it stands, never by searching text for the password.
                     YAML::Node out(YAML::NodeType::Sequence);
                     for (const auto& fe : c.doris.fe_urls) out.push_back(doris::redact_url(fe));
                     return out;
                   })),
      C::string("doris.user", FIELD(doris.user), "Doris user for Basic auth.",
                [](const Reader& r, const YAML::Node& n, const std::string& where, const std::string& user) {
                  if (user.empty()) r.expected(n, where, "a Doris user name");
                }),
      C::secret("doris.password", FIELD(doris.password), "Doris password. Prefer `password_file` or `${ENV}`."),
      C::secret_file("doris.password_file", FIELD(doris_password_file), FIELD(doris.password),
                     "File whose content (trailing newline stripped) is the password."),
      C::choice("doris.route", FIELD(doris.route),
                std::vector<std::pair<std::string, doris::Route>>{{"fe", doris::Route::ViaFe},
                                                                  {"direct", doris::Route::DirectBe}},
                "`fe`: PUT to an FE and follow its redirect to a BE; `direct`: PUT to BEs (`backends`, else "
                "discovered)."),
      C::strings("doris.backends", FIELD(doris.backends), "Static BE list `host:port` for `route: direct`.",
                 [](const Reader& r, const YAML::Node& n, const std::string& where, const std::vector<std::string>& bes) {
                   for (size_t i = 0; i < bes.size(); ++i)
                     if (!doris::split_host_port(bes[i]))
                       r.fail(element(n, i).Mark(), where + "[" + std::to_string(i) + "]",
                              "expected host:port, got '" + bes[i] + "'");
                 }),
      C::string_map("doris.address_rewrite", FIELD(doris.address_rewrite),
                    "BE address as Doris reports it (`host:port` or `host`) -> address reachable from the daemon "
                    "(Kubernetes, Docker)."),
      C::duration("doris.precommit_timeout", FIELD(delivery.precommit_timeout_ms), at_least(1000),
                  "Doris' FE `stream_load_default_precommit_timeout_second` (3600): how long Doris keeps a "
                  "pre-committed txn before aborting it. Within it (less `doris.clock_skew_allowance`) a label Doris "
                  "no longer knows was committed and forgotten (`label_num_threshold`), so its epoch is not re-read. "
                  "Never set it above Doris' value."),
      C::duration("doris.clock_skew_allowance", FIELD(delivery.clock_skew_allowance_ms), at_least(0),
                  "How far this host's clock may be from the Doris FE's: `doris.precommit_timeout` counts from a "
                  "time taken here, Doris counts from its own. Within the timeout less this, a label Doris forgot "
                  "was committed; within the timeout plus this, the start waits for a later decision."),
      C::string("doris.tls.ca_file", FIELD(doris.tls.ca_file),
                "PEM CA bundle for https FEs and the https BEs they redirect to (default: system CAs)."),
      C::boolean("doris.tls.verify", FIELD(doris.tls.verify_peer), "Verify the FE certificate."),
      C::boolean("doris.tls.verify_hostname", FIELD(doris.tls.verify_hostname),
                 "Check the certificate's name against the host."),
      C::string_map("doris.load_headers", FIELD(load_headers),
                    "Stream Load headers for every table (e.g. `max_filter_ratio`). Full-row loads send `strict_mode: "
                    "true` unless this or a table's `headers` sets it (a value Doris cannot convert then fails the "
                    "load instead of becoming NULL).",
                    true),
      C::boolean("doris.gzip", FIELD(doris.gzip), "Send load bodies gzip-compressed (`compress_type: gz`)."),
      C::size("doris.buffer_bytes", FIELD(doris.buffer_bytes), at_least(1),
              "Per-table load buffer; writers block when it is full."),
      C::integer("doris.io_threads", FIELD(doris.io_threads), between(1, 256), "Threads running the HTTP client."),
      C::duration("doris.connect_timeout", FIELD(doris.timeouts.connect), at_least(1), "TCP/TLS connect timeout."),
      C::duration("doris.request_timeout", FIELD(doris.timeouts.request), at_least(1),
                  "Timeout of one 2PC/metadata request."),
      C::duration("doris.load_timeout", FIELD(doris.timeouts.response), at_least(1),
                  "Wait for Doris' answer after a load body ended."),
      C::integer("doris.max_attempts", FIELD(doris.retry.max_attempts), between(1, 100),
                 "Attempts for idempotent requests (2PC, probes, metadata)."),
      // ---------------------------------------------------------------- routing
      shown_as("[] (all)", C::strings("routing.include", FIELD(include),
                                      "Regexes over the source `db.table`; only matches are loaded.", check_regexes)),
      C::strings("routing.exclude", FIELD(exclude), "Regexes over the source `db.table` never loaded.", check_regexes),
      C::string("routing.target", FIELD(target_template),
                "Target template `db.table` with `{db}`, `{schema}`, `{table}`, e.g. `ods_{db}.{table}`.",
                check_template),
      nested(C::custom(
          "routing.rules", "list<map>",
          "Ordered many-to-one rules; the first whose `match` regex matches the source `db.table` wins. A rule may "
          "carry the delete mode and column transforms of the tables it routes to (`routing.rules.*.` below): "
          "`routing.tables.<target>` over the rule over `routing.*`, key by key.",
          [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
            if (!n.IsSequence()) r.expected(n, where, "a list of {match, target, ...}");
            for (size_t i = 0; i < n.size(); ++i) {
              const std::string p = where + "[" + std::to_string(i) + "]";
              if (!n[i]["match"] || !n[i]["target"]) r.fail(n[i].Mark(), p, "needs both 'match' and 'target'");
              RoutingRule rule;
              read_keys(r, rule_keys(), n[i], p, rule);
              check_row_settings(r, n[i], p, rule.row);
              c.rules.push_back(std::move(rule));
            }
          },
          [](const Config& c) {
            YAML::Node out(YAML::NodeType::Sequence);
            for (const auto& rule : c.rules) out.push_back(show_keys(rule_keys(), rule));
            return out;
          })),
      C::custom(
          "routing.map", "map<string,string>", "Explicit source `db.table` -> target `db.table`.",
          [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
            for (const auto& [src, dst] : r.string_map(n, where)) {
              auto dot = dst.find('.');
              if (dot == std::string::npos || dot == 0 || dot + 1 == dst.size())
                r.fail(n[src].Mark(), where + "." + src, "expected a target 'db.table', got '" + dst + "'");
              c.explicit_map[src] = {dst.substr(0, dot), dst.substr(dot + 1)};
            }
          },
          [](const Config& c) {
            YAML::Node out(YAML::NodeType::Map);
            for (const auto& [src, dst] : c.explicit_map) out[src] = dst.db + "." + dst.table;
            return out;
          }),
      C::boolean("routing.auto_create", FIELD(auto_create),
                 "Create a target table that does not exist from the first record's schema "
                 "(docs/schema-evolution.md)."),
      C::choice("routing.schema_evolution", FIELD(schema_evolution), kPolicies,
                "What a source column the table lacks or a changed column does: `off` (not loaded; counted and "
                "logged once), `add` (added, widened), `full` (also dropped, renamed). DDL runs between epochs."),
      shown_as("(apply for UNIQUE KEY tables, ignore for the others)",
               C::choice("routing.truncate", FIELD(truncate), kTruncate,
                         "What a source TRUNCATE (Debezium `op: t`) does: `apply` runs `TRUNCATE TABLE` in Doris "
                         "between epochs, exactly once; `ignore` skips it; `fail` stops the daemon naming the record "
                         "and the table. Counted in `cdc2doris_truncates_total{table,action}`; rules in "
                         "docs/schema-evolution.md (\"TRUNCATE\").")),
      C::choice("routing.delete_mode", FIELD(decoding.deletes.mode), kDeleteModes,
                "What a source delete (and a tombstone that deletes a key) does: `hard` deletes the Doris row "
                "(delete sign); `soft` keeps it with `soft_delete_column` true (and `deleted_at_column` set) and "
                "every other row of the table carries it false; `ignore` drops the delete "
                "(`cdc2doris_records_skipped_total{reason=\"delete_ignored\"}`, logged at debug). Rules in "
                "docs/decoding.md (\"Delete modes\")."),
      C::string("routing.soft_delete_column", FIELD(decoding.deletes.soft_column),
                "Soft deletes: the BOOLEAN flag column (the name Debezium's ExtractNewRecordState rewrite mode "
                "uses). Auto-created tables get it.",
                column_name(false)),
      shown_as("\"\" (none)",
               C::string("routing.deleted_at_column", FIELD(decoding.deletes.deleted_at_column),
                         "Soft deletes: a DATETIME(3) column set to the delete's `source.ts_ms` (wall clock of "
                         "`decoding.time_zone`), NULL on every other row. Auto-created tables get it.",
                         column_name(true))),
      C::choice("routing.column_case", FIELD(decoding.transforms.name_case), name_cases(),
                "How source column names become Doris names: `as_is`, `lower` or `upper` (ASCII letters); an "
                "explicit `routing.tables.*.rename` wins. Applies to rows, auto-created tables and schema evolution."),
      C::custom("routing.computed_columns", "map<string,enum>",
                "Doris columns every table gets from the record's metadata: column -> one of `op`, `source_ts`, "
                "`source.db`, `source.schema`, `source.table`, `source.connector`, `source.snapshot`, `topic`, "
                "`partition`, `offset`, `sequence`. Auto-created tables get them; schema evolution leaves them "
                "alone. (`decoding.extra_columns` still works.)",
                [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
                  c.decoding.transforms.computed = read_computed(r, n, where);
                },
                [](const Config& c) { return show_computed(c.decoding.transforms.computed); }),
      C::string_map("routing.create_properties", FIELD(create_properties),
                    "PROPERTIES of auto-created tables (e.g. `replication_num`, `replication_allocation`); merged over "
                    "the defaults `enable_unique_key_merge_on_write`, `light_schema_change` (true) and "
                    "`replication_num` (3)."),
      C::string_map("routing.create_database_properties", FIELD(create_database_properties),
                    "PROPERTIES of a target database that auto_create finds missing and creates (`CREATE DATABASE IF "
                    "NOT EXISTS`; e.g. `replication_allocation`). Needs CREATE_PRIV on it (docs/schema-evolution.md)."),
      nested(C::custom(
          "routing.tables", "map<db.table,map>",
          "Settings of one target table `db.table` (the keys `routing.tables.*.` below); unset ones follow the "
          "`routing.*` defaults.",
          [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
            if (!n.IsMap()) r.expected(n, where, "a map of target tables");
            for (const auto& kv : n) {
              const std::string name = kv.first.Scalar();
              const std::string p = where + "." + name;
              if (name.find('.') == std::string::npos) r.fail(kv.first.Mark(), p, "expected a target 'db.table' as the key");
              TableOverride t;
              read_keys(r, table_keys(), kv.second, p, t);
              check_table(r, kv.second, p, t);
              c.tables[name] = std::move(t);
            }
          },
          [](const Config& c) {
            YAML::Node out(YAML::NodeType::Map);
            for (const auto& [name, t] : c.tables) out[name] = show_keys(table_keys(), t);
            return out;
          })),
      // ---------------------------------------------------------------- delivery
      shown_as("cdc2doris_{instance_id}",
               C::custom(
                   "delivery.label_prefix", "string",
                   "Label prefix; labels are `{prefix}_{db}_{table}_{epoch}`. Unique per instance writing to one "
                   "Doris: `{instance_id}` in it is replaced by `kafka.instance_id` (`.` becomes `_`). Unset, a state "
                   "that recorded epochs under a prefix (e.g. the old default `cdc2doris`) keeps it.",
                   [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
                     auto& prefix = c.delivery.label_prefix;
                     c.label_prefix_explicit = true;
                     prefix = r.str(n, where);
                     // Each instance of a group needs its own prefix: `{instance_id}` is
                     // replaced by it ('.' of a host name becomes '_', a label has no dots).
                     if (auto at = prefix.find("{instance_id}"); at != std::string::npos) {
                       std::string id = c.instance_id;
                       std::replace(id.begin(), id.end(), '.', '_');
                       prefix.replace(at, std::string_view("{instance_id}").size(), id);
                     }
                     for (char ch : prefix)
                       if (!label_char(ch)) r.expected(n, where, "letters, digits, '-', '_' or ':' (a Doris label)");
                     if (prefix.empty() || prefix.size() > 64) r.expected(n, where, "1 to 64 characters");
                   },
                   [](const Config& c) { return YAML::Node(c.delivery.label_prefix); })),
      C::duration("delivery.epoch_interval", FIELD(delivery.epoch_interval), at_least(1),
                  "Checkpoint interval: every epoch ends (pre-commit, commit)."),
      C::size("delivery.epoch_max_bytes", FIELD(delivery.epoch_max_bytes), at_least(1),
              "An epoch also ends when one table's load reaches this size."),
      C::integer("delivery.epoch_max_rows", FIELD(delivery.epoch_max_rows), at_least(1), "... or this many rows."),
      C::size("delivery.memory_cap", FIELD(delivery.memory_cap_bytes), at_least(1),
              "Rows buffered in the daemon; Kafka partitions pause above it."),
      C::integer("delivery.open_transaction_budget", FIELD(delivery.open_txn_budget_per_db), between(1, kIntMax),
                 "Open + pre-committed txns per Doris database; keep it below `max_running_txn_num_per_db` (1000 on "
                 "Doris 2.1/3.0; on 2.0 and older the limit is 100: set 80). With more active tables than this, "
                 "epochs end early. Refused by Doris' running-transaction limit, the daemon halves it for that "
                 "database (logged)."),
      shown_as("\"\" (none)",
               C::custom(
                   "delivery.unproven_epoch", "string",
                   "`<epoch>:committed` or `<epoch>:replay`: the operator's verdict on an epoch the daemon stopped on "
                   "because Doris forgot a txn of a table that is not UNIQUE KEY (docs/operations.md, \"An epoch "
                   "Doris forgot\"); `<label prefix>:<epoch>:...` for another instance's epoch pending in the "
                   "consumer group. Applies to that epoch only. Remove it once the epoch is committed.",
                   [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
                     // [<label prefix>:]<epoch>:<verdict>; a prefix has no ':' (label characters only).
                     const std::string v = r.str(n, where);
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
                       r.expected(n, where,
                                  "'<epoch>:committed', '<epoch>:replay', or '<label prefix>:<epoch>:committed|replay'");
                     c.delivery.unproven_epoch = epoch;
                     c.delivery.unproven_epoch_prefix = prefix;
                     c.delivery.unproven_epoch_committed = verdict == "committed";
                   },
                   [](const Config& c) {
                     const auto& d = c.delivery;
                     if (d.unproven_epoch == 0) return YAML::Node("");
                     return YAML::Node((d.unproven_epoch_prefix.empty() ? "" : d.unproven_epoch_prefix + ":") +
                                       std::to_string(d.unproven_epoch) + (d.unproven_epoch_committed ? ":committed" : ":replay"));
                   })),
      C::integer("delivery.max_loads_per_table", FIELD(delivery.max_loads_per_table), between(1, kIntMax),
                 "Stream Loads one table may hold within one epoch when its rows change column set (TOAST partial "
                 "rows, key-only deletes) and the table has no flexible partial updates; reaching it ends the epoch "
                 "early."),
      C::boolean("delivery.end_epoch_when_caught_up", FIELD(delivery.end_epoch_when_caught_up),
                 "When a backlog has been read to its end (polls came at least half full, 5,000 records or 4 MiB, "
                 "then one waited its whole timeout for nothing), end the epoch at once rather than at "
                 "`epoch_interval`: the backlog's last rows are visible sooner. Once per backlog; a steady stream "
                 "still gets one epoch per interval."),
      C::choice("delivery.bad_records", FIELD(delivery.bad_record_policy),
                std::vector<std::pair<std::string, pipeline::BadRecordPolicy>>{
                    {"fail", pipeline::BadRecordPolicy::Fail},
                    {"skip", pipeline::BadRecordPolicy::Skip},
                    {"dead_letter", pipeline::BadRecordPolicy::DeadLetter}},
                "What a record that cannot be decoded, whose row does not fit its Doris column "
                "(`check_rows`), or whose rows Doris refuses to load does: stop the daemon, skip it (logged, "
                "counted), or copy it to `dead_letter_topic`. Refused rows are found by loading the table's "
                "rows of the epoch again in halves (docs/decoding.md, \"What Doris still rejects\")."),
      C::boolean("delivery.check_rows", FIELD(delivery.check_rows),
                 "Check each row against its Doris table's columns before loading it: CHAR/VARCHAR byte length, "
                 "DECIMAL digits before the point, integer ranges, DATE/DATETIME years, NOT NULL columns without a "
                 "default. A row that does not fit makes its record a bad record (`bad_records`, reason "
                 "`does_not_fit`, naming the column, the value's start and the limit) instead of a load Doris "
                 "rejects whole. Costs one DESC per table at its first record."),
      C::string("delivery.dead_letter_topic", FIELD(delivery.dead_letter_topic), "Topic for `bad_records: dead_letter`."),
      C::duration("delivery.shutdown_deadline", FIELD(delivery.shutdown_deadline), at_least(0),
                  "On SIGTERM: time to finish and commit the current epoch before exiting non-zero."),
      C::duration("delivery.backoff_base", FIELD(delivery.backoff_base), at_least(1),
                  "First retry delay (capped exponential, full jitter)."),
      C::duration("delivery.backoff_max", FIELD(delivery.backoff_cap), at_least(1),
                  "Retry delay cap (at least `backoff_base`)."),
      // ---------------------------------------------------------------- decoding
      C::choice("decoding.envelope", FIELD(decoding.envelope),
                std::vector<std::pair<std::string, decode::Envelope>>{{"auto", decode::Envelope::Auto},
                                                                      {"schema", decode::Envelope::Schema},
                                                                      {"plain", decode::Envelope::Plain},
                                                                      {"flattened", decode::Envelope::Flattened}},
                "Debezium JSON shape: detected, with schema envelope, without, or ExtractNewRecordState output."),
      C::string("decoding.time_zone", FIELD(decoding.time_zone), "IANA zone for ZonedTimestamp/ZonedTime values."),
      C::choice("decoding.binary_mode", FIELD(decoding.binary_mode),
                std::vector<std::pair<std::string, decode::BinaryMode>>{{"base64", decode::BinaryMode::Base64},
                                                                        {"hex", decode::BinaryMode::Hex}},
                "How bytes columns are written."),
      // The decoder derives the base64, hex and array forms from the one placeholder.
      C::custom(
          "decoding.toast_placeholder", "string", "Debezium's `unavailable.value.placeholder`.",
          [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
            c.decoding.toast_placeholders = {r.str(n, where)};
          },
          [](const Config& c) {
            return YAML::Node(c.decoding.toast_placeholders.empty() ? "" : c.decoding.toast_placeholders.front());
          }),
      C::size("decoding.max_record_bytes", FIELD(decoding.max_record_bytes), at_least(1),
              "Larger records are bad records."),
      C::integer("decoding.max_depth", FIELD(decoding.max_depth), between(1, 1024), "Deeper nesting makes a bad record."),
      C::string("decoding.flattened.deleted_field", FIELD(decoding.flattened.deleted),
                "ExtractNewRecordState delete marker field."),
      C::string("decoding.flattened.op_field", FIELD(decoding.flattened.op), "ExtractNewRecordState op field."),
      C::string("decoding.extra_columns.op", FIELD(decoding.extra_columns.op),
                "If set, a column receiving the op (`c`/`u`/`d`/`r`)."),
      C::string("decoding.extra_columns.source_ts", FIELD(decoding.extra_columns.source_ts),
                "If set, a column receiving `source.ts_ms`."),
      C::choice("decoding.format", FIELD(record_format.format), record_formats(),
                "How keys and values are serialised: Kafka Connect's JsonConverter; Avro with its schema from "
                "`decoding.schema_registry`, the id in Apicurio's `apicurio.{key,value}.{globalId,contentId}` "
                "headers where present, else after magic byte 0 (`decoding.avro.*`); or `auto`: per key and value, "
                "JSON when it starts with `{`, Avro when it carries such a header or starts with byte 0, anything "
                "else a bad record (`unknown_format`). For topics `topic_formats` does not name (docs/avro.md)."),
      C::custom(
          "decoding.topic_formats", "map<regex,enum(json|avro|auto)>",
          "Formats per topic: ECMAScript regexes matching the whole topic name, each with `json`, `avro` or "
          "`auto`; the first that matches, in the order written, decides; other topics take `format`.",
          [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
            auto& out = c.record_format.topic_formats;
            out.clear();
            if (n.IsNull()) return;
            if (!n.IsMap()) r.expected(n, where, "a map of topic regex: json, avro or auto");
            for (const auto& kv : n) {
              const std::string pattern = kv.first.Scalar();
              const std::string at = where + "." + pattern;
              try {
                std::regex test(pattern);
              } catch (const std::regex_error& e) {
                r.fail(kv.first.Mark(), at, "invalid regex '" + pattern + "': " + e.what());
              }
              const std::string name = r.str(kv.second, at);
              bool known = false;
              for (const auto& [known_name, f] : record_formats()) {
                if (known_name != name) continue;
                out.emplace_back(pattern, f);
                known = true;
              }
              if (!known) r.expected(kv.second, at, "one of json, avro, auto");
            }
          },
          [](const Config& c) {
            YAML::Node out(YAML::NodeType::Map);
            for (const auto& [pattern, f] : c.record_format.topic_formats)
              for (const auto& [name, v] : record_formats())
                if (v == f) out[pattern] = name;
            return out;
          }),
      C::choice("decoding.avro.id_bytes", FIELD(record_format.id_bytes),
                std::vector<std::pair<std::string, int>>{{"4", 4}, {"8", 8}},
                "Length of the big-endian schema id after magic byte 0: 4 (Confluent's converter, Apicurio's with "
                "`apicurio.registry.as-confluent=true`) or 8 (Apicurio's converter by default). Records whose id "
                "travels in Apicurio's headers have no magic byte and ignore it."),
      C::choice("decoding.avro.id_kind", FIELD(record_format.payload_id),
                std::vector<std::pair<std::string, avro::IdKind>>{{"content", avro::IdKind::Content},
                                                                  {"global", avro::IdKind::Global}},
                "What the id after magic byte 0 counts, as Apicurio's `apicurio.registry.use-id`: `content` "
                "(Confluent's schema id, Apicurio's contentId) or `global` (Apicurio's globalId, its converter's "
                "default; needs `schema_registry.api: apicurio`). A header names its own kind."),
      C::string("decoding.avro.id_headers.key_global_id", FIELD(record_format.id_headers.key_global),
                "Header carrying a key's global id, as Apicurio's converter names it "
                "(`apicurio.registry.headers.key.globalId.name`).", header_name),
      C::string("decoding.avro.id_headers.key_content_id", FIELD(record_format.id_headers.key_content),
                "Header carrying a key's content id (`apicurio.registry.headers.key.contentId.name`).", header_name),
      C::string("decoding.avro.id_headers.value_global_id", FIELD(record_format.id_headers.value_global),
                "Header carrying a value's global id (`apicurio.registry.headers.value.globalId.name`).", header_name),
      C::string("decoding.avro.id_headers.value_content_id", FIELD(record_format.id_headers.value_content),
                "Header carrying a value's content id (`apicurio.registry.headers.value.contentId.name`).", header_name),
      C::choice("decoding.schema_registry.api", FIELD(schema_registry.api),
                std::vector<std::pair<std::string, avro::RegistryApi>>{{"confluent", avro::RegistryApi::Confluent},
                                                                       {"apicurio", avro::RegistryApi::Apicurio}},
                "The API `url` is the base of: Confluent's (`{url}/schemas/ids/{id}`; Apicurio's ccompat API "
                "answers content ids there) or Apicurio's own (`{url}/ids/globalIds/{id}`, "
                "`{url}/ids/contentIds/{id}`), which alone serves global ids."),
      C::string("decoding.schema_registry.url", FIELD(schema_registry.url),
                "Schema registry for Avro records, the base of the API `api` names: e.g. `http://registry:8081` "
                "(Confluent), `http://registry:8080/apis/ccompat/v7` or, with `api: apicurio`, "
                "`http://registry:8080/apis/registry/v2` (Apicurio); https with `tls.*`."),
      C::string("decoding.schema_registry.user", FIELD(schema_registry.user),
                "User for HTTP basic authentication to the registry; empty: none."),
      C::secret("decoding.schema_registry.password", FIELD(schema_registry.password),
                "Password for `user`. Prefer `password_file` or `${ENV}`."),
      C::secret_file("decoding.schema_registry.password_file", FIELD(schema_registry_password_file),
                     FIELD(schema_registry.password),
                     "File whose content (trailing newline stripped) is `decoding.schema_registry.password`."),
      C::secret("decoding.schema_registry.bearer_token", FIELD(schema_registry.bearer_token),
                "Token sent as `Authorization: Bearer TOKEN` to the registry (not with `user`); empty: none. "
                "Prefer `bearer_token_file` or `${ENV}`."),
      C::secret_file("decoding.schema_registry.bearer_token_file", FIELD(schema_registry_bearer_token_file),
                     FIELD(schema_registry.bearer_token),
                     "File whose content (trailing newline stripped) is `decoding.schema_registry.bearer_token`."),
      C::string("decoding.schema_registry.tls.ca_file", FIELD(schema_registry.ca_file),
                "With an https `url`: PEM bundle the registry's certificate must chain to (its name or IP address "
                "is checked against the URL's host); empty: the system's CAs."),
      C::string("decoding.schema_registry.tls.cert_file", FIELD(schema_registry.cert_file),
                "With an https `url`: PEM client certificate (chain) presented to the registry; with `key_file`."),
      C::string("decoding.schema_registry.tls.key_file", FIELD(schema_registry.key_file),
                "PEM private key of `tls.cert_file`."),
      C::duration("decoding.schema_registry.timeout", FIELD(schema_registry.timeout), at_least(1),
                  "Connect, send and read timeout of one registry request; an unanswered request is retried "
                  "with the pipeline's backoff."),
      // ---------------------------------------------------------------- state, admin, logging
      C::string("state.dir", FIELD(state_dir), "RocksDB checkpoint directory (one daemon per directory)."),
      C::integer("state.retention_epochs", FIELD(state_retention_epochs), between(1, kIntMax),
                 "Committed epochs kept for `state show`."),
      C::custom(
          "admin.listen", "string",
          "Admin HTTP (`/healthz`, `/readyz`, `/metrics`, `/status`): `HOST:PORT`, HOST an IP address (`[::1]` for "
          "IPv6) or a name resolved at startup (`localhost`); port 0 picks a free one.",
          [](const Reader& r, const YAML::Node& n, const std::string& where, Config& c) {
            auto listen = resolve_listen(r.str(n, where));
            if (!listen) r.expected(n, where, listen.error().expected);
            c.admin_listen = *listen;
          },
          [](const Config& c) { return YAML::Node(c.admin_listen); }),
      C::secret("admin.token", FIELD(admin_token),
                "Bearer token required on `/status` and `/metrics` (`Authorization: Bearer TOKEN`; otherwise 401 "
                "with `WWW-Authenticate: Bearer`). Empty: no authentication. Prefer `token_file` or `${ENV}`."),
      C::secret_file("admin.token_file", FIELD(admin_token_file), FIELD(admin_token),
                     "File whose content (trailing newline stripped) is `admin.token` (a Kubernetes Secret volume)."),
      C::boolean("admin.probes_require_token", FIELD(admin_probes_require_token),
                 "Also require the token on `/healthz` and `/readyz` (open by default: kubelet probes send no "
                 "token)."),
      C::string("admin.tls.cert_file", FIELD(admin_tls_cert_file),
                "PEM certificate (chain) for HTTPS on the admin endpoint; with `key_file`. Empty: plain HTTP. "
                "`cdc2doris status --config` trusts exactly this certificate."),
      C::string("admin.tls.key_file", FIELD(admin_tls_key_file), "PEM private key of `admin.tls.cert_file`."),
      C::duration("admin.kafka_grace", FIELD(health.kafka_grace), at_least(1),
                  "`/readyz` fails once Kafka is unreachable, or a configured topic is missing, for longer (at once "
                  "if Kafka never answered)."),
      C::duration("admin.doris_failure_grace", FIELD(health.doris_failure_grace), at_least(0),
                  "`/readyz` fails once Doris loads or commits have failed for longer without a success in between. "
                  "`0s`: from the first failed load or commit until one succeeds again, across every retry (no 200 "
                  "between retries)."),
      C::duration("admin.stall_timeout", FIELD(health.stall_timeout), at_least(1),
                  "`/readyz` fails once the epoch machine has not advanced for longer (at least 2 x "
                  "`delivery.epoch_interval`)."),
      C::duration("admin.heartbeat_timeout", FIELD(health.heartbeat_timeout), at_least(1),
                  "`/healthz` fails and the systemd watchdog starves once the pipeline thread made no progress for "
                  "longer; keep it above `doris.load_timeout`."),
      C::duration("admin.lag_refresh_interval", FIELD(health.lag_refresh_interval), at_least(1),
                  "How often watermarks and committed offsets are queried for lag, also while nothing is consumed."),
      C::choice("logging.level", FIELD(log_level), same({"trace", "debug", "info", "warn", "error"}), "Log level."),
      C::choice("logging.format", FIELD(log_format), same({"text", "json"}), "Log line format."),
  };
}

}  // namespace

// ---------------------------------------------------------------- the registry

const std::vector<Key<Config>>& config_keys() {
  static const std::vector<Key<Config>> keys = declare();
  return keys;
}
const std::vector<Key<TableOverride>>& table_keys() {
  static const std::vector<Key<TableOverride>> keys = declare_tables();
  return keys;
}
const std::vector<Key<RoutingRule>>& rule_keys() {
  static const std::vector<Key<RoutingRule>> keys = declare_rules();
  return keys;
}

const std::vector<KeyInfo>& schema() {
  static const std::vector<KeyInfo> all = [] {
    // Shown from default-constructed fields unless the declaration says otherwise.
    auto info = [](const auto& k, const auto& fresh) {
      KeyInfo i = k;
      if (!i.default_text) i.shown = show_default(k.show(fresh));
      else i.shown = std::string(*i.default_text);
      return i;
    };
    std::vector<KeyInfo> out;
    const Config config;
    for (const auto& k : config_keys()) {
      out.push_back(info(k, config));
      if (k.path == "routing.rules")
        for (const auto& r : rule_keys()) out.push_back(info(r, RoutingRule{}));
      if (k.path == "routing.tables")
        for (const auto& t : table_keys()) out.push_back(info(t, TableOverride{}));
    }
    return out;
  }();
  return all;
}

const KeyInfo* find_key(std::string_view path) {
  for (const auto& k : schema())
    if (k.path == path) return &k;
  return nullptr;
}

bool is_section(std::string_view path) {
  for (const auto& k : schema())
    if (k.path.size() > path.size() && std::string_view(k.path).substr(0, path.size()) == path &&
        k.path[path.size()] == '.')
      return true;
  return false;
}

std::string type_with_bounds(const KeyInfo& k) {
  std::string out(k.type);
  if (!k.bounds) return out;
  auto show = [&](int64_t v) {
    std::string n = std::to_string(v);
    if (k.type == "duration") return n + "ms";
    if (k.type == "size") return n + "B";
    return n;
  };
  const bool open_max = k.bounds->max == std::numeric_limits<int64_t>::max() || k.bounds->max == kIntMax;
  return out + (open_max ? " (>= " + show(k.bounds->min) + ")" : " (" + show(k.bounds->min) + ".." + show(k.bounds->max) + ")");
}

std::string show_default(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar().empty() ? "\"\"" : n.Scalar();
  if (n.IsSequence() && n.size() == 0) return "[]";
  if (n.IsMap() && n.size() == 0) return "{}";
  if (!n.IsDefined() || n.IsNull()) return "";
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

// The largest unit that shows the value exactly: 10s, 5m, 1h, 200ms.
std::string format_duration(int64_t ms) {
  if (ms == 0) return "0s";
  if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string format_size(uint64_t bytes) {
  for (const auto& [unit, size] : {std::pair{"GiB", 1ull << 30}, std::pair{"MiB", 1ull << 20}, std::pair{"KiB", 1ull << 10}})
    if (bytes != 0 && bytes % size == 0) return std::to_string(bytes / size) + unit;
  return std::to_string(bytes);
}

}  // namespace cdc2doris::config
