// `cdc2doris state show|reset`: inspect or delete the checkpoint state.
#include <boost/json.hpp>

#include <iostream>

#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"
#include "daemon/logging.hpp"

namespace cdc2doris::daemon {

int cmd_state(const Args& a) {
  if (a.positional.empty() || (a.positional[0] != "show" && a.positional[0] != "reset")) {
    std::cerr << "usage: cdc2doris state show|reset --config FILE [--yes]\n";
    return kExitUsage;
  }
  config::Config cfg = load_config_or_exit(a);
  setup_logging("warn", "text", cfg.secrets());
  auto store = open_state_or_exit(cfg);
  if (a.positional[0] == "reset") {
    if (!a.has("yes")) {
      std::cerr << "cdc2doris: state reset deletes every checkpoint in " << cfg.state_dir
                << "; the next run resumes from the consumer group's offsets. Add --yes to confirm.\n";
      return kExitUsage;
    }
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
