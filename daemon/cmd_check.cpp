// `cdc2doris check`: validate the configuration (the same validator `run`
// uses); with --connect also reach Kafka (a metadata round trip with the
// configured security settings), the configured topics, the schema registry
// (when records may be Avro), every Doris FE with the configured credentials, and
// every target table that can be known
// before data arrives. Every line printed goes through redaction.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <variant>

#include "core/avro/registry_client.hpp"
#include "core/common/redact.hpp"
#include "core/doris/classify.hpp"
#include "core/doris/client.hpp"
#include "core/doris/grants.hpp"
#include "core/doris/url.hpp"
#include "core/kafka/probe.hpp"
#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"
#include "daemon/logging.hpp"

namespace cdc2doris::daemon {

namespace {

constexpr std::chrono::milliseconds kDefaultTimeout{10'000};

std::optional<std::chrono::milliseconds> parse_timeout(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > 9) return std::nullopt;
  const int64_t n = std::stoll(s.substr(0, i));
  const std::string unit = s.substr(i);
  if (unit == "ms") return std::chrono::milliseconds(n);
  if (unit == "s" || unit.empty()) return std::chrono::seconds(n);
  if (unit == "m") return std::chrono::minutes(n);
  return std::nullopt;
}

// The source a Debezium topic name stands for under the default topic naming
// (`server.db.table`, or `server.db.schema.table` for SQL Server), so the
// routing templates can be applied before any record arrived. PostgreSQL
// topics (`server.schema.table`) do not carry the database: their {db} is a
// guess here, and the line printed says which topic it came from.
std::optional<decode::Change> source_of(const std::string& topic) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const auto dot = topic.find('.', start);
    parts.push_back(topic.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  decode::Change c;
  if (parts.size() == 3) {
    c.db = parts[1];
    c.table = parts[2];
  } else if (parts.size() == 4) {
    c.db = parts[1];
    c.schema = parts[2];
    c.table = parts[3];
  } else {
    return std::nullopt;
  }
  return c;
}

class Checker {
 public:
  explicit Checker(const config::Config& cfg) : cfg_(cfg) {}

  void ok(const std::string& line) { say(line); }
  void warn(const std::string& line) { say(line); }
  void failed(const std::string& what, const std::string& why) {
    say(what + ": FAILED: " + why);
    ++problems_;
  }
  int problems() const { return problems_; }

  // Topic name -> partitions of every topic the subscription takes; nullopt
  // when Kafka did not answer.
  std::optional<std::map<std::string, int>> kafka(std::chrono::milliseconds timeout) {
    timeout_ = timeout;
    auto probe = kafka::probe_metadata(cfg_.source_config().properties, timeout);
    if (!probe.metadata) {
      failed("kafka", probe.error + " (bootstrap " + cfg_.bootstrap_servers + ")");
      return std::nullopt;
    }
    const auto& md = *probe.metadata;
    ok("kafka: reachable (bootstrap " + cfg_.bootstrap_servers + ", " + std::to_string(md.brokers.size()) +
       " broker(s), group " + cfg_.group_id + ")");
    std::map<std::string, int> subscribed;
    for (const auto& t : cfg_.topics) {
      if (t.rfind('^', 0) == 0) {
        std::string matched;
        size_t n = 0;
        for (const auto& [name, parts] : md.topics)
          if (kafka::topic_regex_matches(t, name)) {
            subscribed[name] = parts;
            if (++n <= 5) matched += (matched.empty() ? "" : ", ") + name;
          }
        if (n == 0)
          warn("topic regex " + t + ": WARNING: no existing topic matches (the daemon waits for one to appear)");
        else
          ok("topic regex " + t + ": matches " + std::to_string(n) + " topic(s): " + matched + (n > 5 ? ", ..." : ""));
        continue;
      }
      if (auto it = md.topics.find(t); it != md.topics.end()) {
        subscribed[t] = it->second;
        ok("topic " + t + ": exists (" + std::to_string(it->second) + (it->second == 1 ? " partition)" : " partitions)"));
      } else if (auto e = md.topic_errors.find(t); e != md.topic_errors.end()) {
        failed("topic " + t, e->second);
      } else {
        // With an authorizer, Kafka lists only the topics the principal may
        // DESCRIBE: a missing READ ACL looks like a missing topic.
        failed("topic " + t, "does not exist, or the principal may not DESCRIBE it (grant READ on topic " + t +
                                 " if the cluster uses ACLs)");
      }
    }
    if (cfg_.delivery.bad_record_policy == pipeline::BadRecordPolicy::DeadLetter &&
        !md.topics.count(cfg_.delivery.dead_letter_topic))
      warn("dead-letter topic " + cfg_.delivery.dead_letter_topic +
           ": WARNING: does not exist (dead letters fail unless the brokers create topics on first write)");
    group(md.topics, subscribed);
    return subscribed;
  }

  // The group's committed offsets, as `run` reads them first: a principal
  // without READ on the group (or a topic) fails here.
  void group(const std::map<std::string, int>& all, const std::map<std::string, int>& subscribed) {
    std::vector<std::pair<std::string, int32_t>> partitions;
    for (const auto& [topic, parts] : subscribed)
      if (all.count(topic))
        for (int32_t p = 0; p < parts; ++p) partitions.emplace_back(topic, p);
    if (partitions.empty()) return;
    if (auto err = kafka::probe_group(cfg_.source_config().properties, partitions, timeout_))
      failed("kafka group " + cfg_.group_id, *err);
    else
      ok("kafka group " + cfg_.group_id + ": committed offsets readable (" + std::to_string(partitions.size()) +
         " partition(s))");
  }

  // An authenticated call per FE: a wrong password must fail here. Doris
  // answers auth failures with HTTP 200 and {"code":401,"msg":"Unauthorized"},
  // which the client reports as an error of kind auth.
  // Avro records (decoding.format, topic_formats): the registry's API with the configured credentials.
  void schema_registry() {
    if (!cfg_.record_format.any_avro()) return;
    const std::string what = "schema registry " + cfg_.schema_registry.url;
    auto options = cfg_.schema_registry;
    options.timeout = std::min(options.timeout, timeout_);
    std::variant<size_t, avro::RegistryFailure> got;
    try {
      got = avro::RegistryClient(options).probe();
    } catch (const std::invalid_argument& e) {
      failed(what, e.what());
      return;
    }
    if (auto* f = std::get_if<avro::RegistryFailure>(&got)) {
      failed(what, f->message);
      return;
    }
    ok(what + ": reachable" + (cfg_.schema_registry.user.empty() ? "" : " as '" + cfg_.schema_registry.user + "'") +
       ", " + std::to_string(std::get<size_t>(got)) +
       (cfg_.schema_registry.api == avro::RegistryApi::Apicurio ? " artifact(s)" : " subject(s)"));
  }

  void doris_fes() {
    for (const auto& fe : cfg_.doris.fe_urls) {
      const std::string what = "doris FE " + doris::redact_url(fe);
      auto one = cfg_.doris;
      one.fe_urls = {fe};
      try {
        auto client = doris::make_client(one);
        auto r = client->sql("information_schema", "SHOW DATABASES");
        if (!r)
          failed(what, std::string(doris::to_string(r.error().kind())) + ": " + r.error().what());
        else
          ok(what + ": authenticated as " + cfg_.doris.user);
      } catch (const std::exception& e) {
        failed(what, e.what());
      }
    }
  }

  // `_schema` of every table the routing names, and of every table the
  // subscribed topics' names route to.
  void tables(const std::optional<std::map<std::string, int>>& topics) {
    std::unique_ptr<doris::DorisClient> client;
    try {
      client = doris::make_client(cfg_.doris);
    } catch (const std::exception& e) {
      failed("doris", e.what());
      return;
    }
    auto router = config::make_router(cfg_);
    std::map<pipeline::Target, std::string> targets;  // -> where it came from
    for (const auto& t : router->known_targets()) targets.emplace(t, "routing");
    if (topics)
      for (const auto& [topic, parts] : *topics) {
        auto source = source_of(topic);
        if (!source) {
          warn("topic " + topic + ": WARNING: not a Debezium topic name (server.db.table); its table is known only "
               "from the data");
          continue;
        }
        if (auto t = router->route(*source)) targets.emplace(*t, "topic " + topic);
      }
    if (targets.empty()) {
      warn("tables: none known before data arrives (routing names no table" +
           std::string(topics ? ", and no existing topic routes to one" : "; Kafka did not answer") + ")");
      return;
    }
    auto grants = doris_grants(*client);
    for (const auto& [t, from] : targets) {
      auto schema = client->schema(t.db, t.table);
      const bool exists = schema.has_value();
      if (grants) privileges(*grants, t, exists);
      if (!schema) {
        auto& err = schema.error();
        failed("table " + t.name() + " (from " + from + ")", err.what());
        continue;
      }
      const auto& keys = schema->keys_type;
      std::string line = "table " + t.name() + ": " + keys + " (from " + from + ")";
      if (keys == "DUP_KEYS") line += " (WARNING: deletes cannot apply to a DUPLICATE KEY table; every change is appended)";
      ok(line);
    }
  }

  // The user's privileges (SHOW GRANTS), nullopt with a warning when Doris
  // does not say (then the first refused load names the GRANT instead).
  std::optional<doris::Grants> doris_grants(doris::DorisClient& client) {
    auto r = client.sql("", "SHOW GRANTS");
    if (!r) {
      auto& err = r.error();
      warn("doris privileges: WARNING: SHOW GRANTS failed, privileges not checked: " + std::string(err.what()));
      return std::nullopt;
    }
    auto g = doris::parse_grants(r.value());
    if (!g) warn("doris privileges: WARNING: SHOW GRANTS answered no privilege columns, privileges not checked");
    return g;
  }

  // What the daemon does to a target table needs: Stream Load and 2PC
  // LOAD_PRIV; schema evolution ALTER_PRIV; auto_create CREATE_PRIV (when the
  // table does not exist yet).
  void privileges(const doris::Grants& g, const pipeline::Target& t, bool exists) {
    std::vector<std::pair<std::string, std::string>> needed{{"LOAD_PRIV", "Stream Load"}};
    const auto over = cfg_.tables.find(t.name());
    const auto policy = over != cfg_.tables.end() && over->second.schema_evolution ? *over->second.schema_evolution
                                                                                   : cfg_.schema_evolution;
    const bool create = over != cfg_.tables.end() && over->second.auto_create ? *over->second.auto_create
                                                                              : cfg_.auto_create;
    if (policy != schema::Policy::Off)
      needed.emplace_back("ALTER_PRIV", std::string("schema_evolution: ") + schema::to_string(policy));
    if (create && !exists) needed.emplace_back("CREATE_PRIV", "auto_create");
    std::string held;
    for (const auto& [priv, why] : needed) {
      if (g.holds(priv, t.db, t.table)) {
        held += (held.empty() ? "" : ", ") + priv;
        continue;
      }
      failed("table " + t.name(), "doris user '" + cfg_.doris.user + "' lacks " + priv + " (needed for " + why +
                                      "); fix: " + doris::grant_statement(priv, t.db, t.table, cfg_.doris.user));
    }
    if (!held.empty()) ok("table " + t.name() + ": user '" + cfg_.doris.user + "' holds " + held);
  }

 private:
  void say(const std::string& line) { std::cout << redact_secrets(line) << "\n" << std::flush; }

  const config::Config& cfg_;
  int problems_ = 0;
  std::chrono::milliseconds timeout_{kDefaultTimeout};
};

}  // namespace

int cmd_check(const Args& a) {
  std::chrono::milliseconds timeout = kDefaultTimeout;
  if (a.has("timeout")) {
    auto t = parse_timeout(a.get("timeout"));
    if (!t || t->count() <= 0) {
      std::cerr << "cdc2doris check: --timeout: expected a duration such as 500ms, 10s, 1m, got '" << a.get("timeout")
                << "'\n";
      return kExitUsage;
    }
    timeout = *t;
  }
  config::Config cfg = load_config_or_exit(a);
  std::cout << "configuration " << cfg.path << " is valid\n";
  if (!a.has("connect")) return kExitOk;
  setup_logging("warn", "text");
  Checker check(cfg);
  auto topics = check.kafka(timeout);
  check.schema_registry();
  check.doris_fes();
  check.tables(topics);
  if (check.problems() == 0) return kExitOk;
  std::cout << check.problems() << " problem(s) found\n";
  return kExitCheckFailed;
}

}  // namespace cdc2doris::daemon
