// `cdc2doris check`: validate the configuration; with --connect also reach
// Kafka, every Doris FE and the target tables.
#include <spdlog/spdlog.h>

#include <iostream>
#include <variant>

#include "core/kafka/source.hpp"
#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"
#include "daemon/logging.hpp"

namespace cdc2doris::daemon {

int cmd_check(const Args& a) {
  config::Config cfg = load_config_or_exit(a);
  std::cout << "configuration " << cfg.path << " is valid\n";
  if (!a.has("connect")) return kExitOk;
  setup_logging("warn", "text", cfg.secrets());
  int problems = 0;
  // Kafka: a metadata round trip through the source's consumer.
  try {
    auto source = kafka::make_kafka_source(cfg.source_config());
    auto committed = source->committed({}, std::chrono::seconds(10));
    if (auto* err = std::get_if<Error>(&committed)) {
      std::cout << "kafka: FAILED: " << err->what() << "\n";
      ++problems;
    } else {
      std::cout << "kafka: reachable (" << cfg.bootstrap_servers << ", group " << cfg.group_id << ")\n";
    }
    source->close(std::chrono::seconds(5));
  } catch (const std::exception& e) {
    std::cout << "kafka: FAILED: " << config::redact(e.what(), cfg.secrets()) << "\n";
    ++problems;
  }
  // Doris: every FE, and every table the routing rules name.
  for (const auto& fe : cfg.doris.fe_urls) {
    auto one = cfg.doris;
    one.fe_urls = {fe};
    auto client = doris::make_client(one);
    if (auto err = client->health()) {
      std::cout << "doris FE " << fe << ": FAILED: " << err->what() << "\n";
      ++problems;
    } else {
      std::cout << "doris FE " << fe << ": reachable\n";
    }
  }
  auto client = doris::make_client(cfg.doris);
  auto router = config::make_router(cfg);
  for (const auto& t : router->known_targets()) {
    auto schema = client->schema(t.db, t.table);
    if (auto* err = std::get_if<doris::DorisError>(&schema)) {
      std::cout << "table " << t.name() << ": FAILED: " << err->what() << "\n";
      ++problems;
      continue;
    }
    const auto& keys = std::get<doris::TableSchema>(schema).keys_type;
    std::cout << "table " << t.name() << ": " << keys;
    if (keys == "DUP_KEYS") std::cout << " (WARNING: deletes cannot apply to a DUPLICATE KEY table; every change is appended)";
    std::cout << "\n";
  }
  if (router->known_targets().empty())
    std::cout << "tables: routing names no explicit target; tables are derived from the data ('"
              << cfg.target_template << "')\n";
  return problems == 0 ? kExitOk : kExitCheckFailed;
}

}  // namespace cdc2doris::daemon
