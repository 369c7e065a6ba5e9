// `cdc2doris state show|reset|abort-lingering`: inspect or delete the
// checkpoint state; abort a retired instance's lingering Doris txns.
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <set>
#include <variant>

#include "core/doris/client.hpp"
#include "core/doris/label.hpp"
#include "core/kafka/monitor.hpp"
#include "state/group_meta.hpp"

#include "daemon/abort_lingering.hpp"
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
// Aborts the RUNNING/PRECOMMITTED txns under label prefix P that nobody will
// commit: every epoch of P after the newest one the consumer group names (a
// pending epoch named there is left alone: the owner of its partitions
// commits it). Tables: the configuration's explicit targets plus --table.
int abort_lingering(const Args& a, const config::Config& cfg) {
  const std::string prefix = a.get("label-prefix");
  if (prefix.empty() || !doris::is_valid_label(prefix + "_x")) {
    std::cerr << "cdc2doris state abort-lingering: --label-prefix P is required (a Doris label prefix)\n";
    return kExitUsage;
  }
  if (prefix == cfg.delivery.label_prefix && !a.has("force")) {
    std::cerr << "cdc2doris: " << prefix << " is this configuration's own label prefix; a live instance may use it. "
              << "Run this for a retired instance's prefix (add --force if that instance is gone for good)\n";
    return kExitUsage;
  }
  std::set<pipeline::Target> tables;
  auto router = config::make_router(cfg);
  for (const auto& t : router->known_targets()) tables.insert(t);
  if (a.has("table")) {
    const std::string t = a.get("table");
    auto dot = t.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == t.size()) {
      std::cerr << "cdc2doris state abort-lingering: --table expects db.table, got '" << t << "'\n";
      return kExitUsage;
    }
    tables.insert({t.substr(0, dot), t.substr(dot + 1)});
  }
  if (tables.empty()) {
    std::cerr << "cdc2doris: no tables to walk: the routing config has no explicit targets; name one with "
                 "--table db.table\n";
    return kExitUsage;
  }
  // What the group names for this prefix: the newest epoch, and pending ones.
  uint64_t newest = 0;
  std::set<uint64_t> pending;
  try {
    auto src = cfg.source_config();
    src.properties.erase("group.instance.id");  // a tool, never a member
    auto monitor = kafka::make_kafka_monitor(src);
    auto view = monitor->cluster(std::chrono::seconds(10));
    if (auto* err = std::get_if<Error>(&view)) {
      std::cerr << "cdc2doris: Kafka: " << err->what() << "\n";
      return kExitFatal;
    }
    std::vector<kafka::TopicPartition> tps;
    for (const auto& [topic, n] : std::get<kafka::ClusterView>(view).partitions)
      for (int p = 0; p < n; ++p) tps.push_back({topic, p});
    auto got = monitor->committed_group(tps, std::chrono::seconds(10));
    if (auto* err = std::get_if<Error>(&got)) {
      std::cerr << "cdc2doris: Kafka: " << err->what() << "\n";
      return kExitFatal;
    }
    for (const auto& [tp, go] : std::get<kafka::GroupOffsetMap>(got)) {
      auto m = state::decode_group_meta(go.metadata);
      if (m.kind == state::GroupMeta::Kind::Legacy || m.label_prefix != prefix) continue;
      newest = std::max(newest, m.epoch);
      if (m.kind == state::GroupMeta::Kind::Pending) pending.insert(m.epoch);
    }
  } catch (const std::exception& e) {
    std::cerr << "cdc2doris: configuration: " << e.what() << "\n";
    return kExitUsage;
  }
  uint64_t from = newest + 1;
  if (a.has("from-epoch")) from = std::stoull(a.get("from-epoch"));
  if (newest == 0 && !a.has("from-epoch")) {
    std::cerr << "cdc2doris: the consumer group names no epoch of label prefix " << prefix
              << " (its partitions moved on since); pass --from-epoch N (the retired instance's last epoch + 1, "
                 "from its `state show` or its log)\n";
    return kExitUsage;
  }
  AbortLingering what;
  what.prefix = prefix;
  what.from_epoch = from;
  what.pending = std::move(pending);
  for (const auto& t : tables) what.tables.push_back({t.db, t.table, router->settings(t).sequence_col});
  auto client = doris::make_client(cfg.doris);
  return abort_lingering_txns(*client, what, std::cout, std::cerr);
}

}  // namespace

int cmd_state(const Args& a) {
  if (a.positional.empty() ||
      (a.positional[0] != "show" && a.positional[0] != "reset" && a.positional[0] != "abort-lingering")) {
    std::cerr << "cdc2doris state: expected 'show', 'reset' or 'abort-lingering'\n\n" << kStateUsage;
    return kExitUsage;
  }
  if (a.positional[0] == "abort-lingering") {
    config::Config cfg = load_config_or_exit(a);
    setup_logging("warn", "text");
    return abort_lingering(a, cfg);
  }
  const bool reset = a.positional[0] == "reset";
  config::Config cfg = load_config_or_exit(a);
  setup_logging("warn", "text");
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
