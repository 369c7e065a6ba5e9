// `cdc2doris state show|reset`: inspect or delete the checkpoint state.
#include <boost/json.hpp>

#include <filesystem>
#include <iostream>

#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"
#include "daemon/logging.hpp"

namespace cdc2doris::daemon {

namespace {
// RocksDB keeps its CURRENT file in every database directory.
bool holds_state(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec);
}
}  // namespace

int cmd_state(const Args& a) {
  if (a.positional.empty() || (a.positional[0] != "show" && a.positional[0] != "reset")) {
    std::cerr << "cdc2doris state: expected 'show' or 'reset'\n\n" << kStateUsage;
    return kExitUsage;
  }
  const bool reset = a.positional[0] == "reset";
  config::Config cfg = load_config_or_exit(a);
  setup_logging("warn", "text", cfg.secrets());
  if (reset && !a.has("yes")) {
    std::cerr << "cdc2doris: state reset deletes every checkpoint in " << cfg.state_dir
              << "; the next run resumes from the consumer group's offsets. Add --yes to confirm.\n";
    return kExitUsage;
  }
  // Opening the store creates it; a mistyped state.dir (or --config) must not
  // leave a fresh empty state behind, least of all in a directory that exists.
  if (!holds_state(cfg.state_dir)) {
    if (reset) {
      std::cout << "no checkpoint state in " << cfg.state_dir << "; nothing to reset\n";
      return kExitOk;
    }
    std::cerr << "cdc2doris: no checkpoint state in " << cfg.state_dir
              << " (state.dir of " << cfg.path << "); nothing has run with this configuration yet, or the path is wrong\n";
    return kExitState;
  }
  auto store = open_state_or_exit(cfg);
  if (reset) {
    store->reset();
    std::cout << "state in " << cfg.state_dir << " reset\n";
    return kExitOk;
  }
  boost::json::object o;
  o["state_dir"] = cfg.state_dir;
  boost::json::array epochs;
  for (const auto& e : store->list()) {
    boost::json::array txns, parts;
    for (const auto& t : e.txns)
      txns.push_back({{"db", t.db}, {"table", t.table}, {"label", t.label}, {"txn_id", t.txn_id}, {"committed", t.committed}});
    for (const auto& p : e.partitions)
      parts.push_back({{"topic", p.topic}, {"partition", p.partition}, {"start", p.start_offset}, {"end", p.end_offset}});
    epochs.push_back({{"epoch", e.epoch},
                      {"state", state::to_string(e.state)},
                      {"label_prefix", e.label_prefix},
                      {"created_unix_ms", e.created_unix_ms},
                      {"txns", std::move(txns)},
                      {"partitions", std::move(parts)}});
  }
  o["epochs"] = std::move(epochs);
  boost::json::object offsets;
  for (const auto& [tp, off] : store->committed_offsets())
    offsets[tp.topic + "[" + std::to_string(tp.partition) + "]"] = {{"offset", off.offset}, {"epoch", off.epoch}};
  o["committed_offsets"] = std::move(offsets);
  boost::json::array prefixes;
  for (const auto& p : store->label_prefixes())
    prefixes.push_back({{"prefix", p.prefix}, {"first_epoch", p.first_epoch}, {"last_epoch", p.last_epoch}});
  o["label_prefixes"] = std::move(prefixes);
  std::cout << boost::json::serialize(o) << "\n";
  return kExitOk;
}

}  // namespace cdc2doris::daemon
