// Inspection API (/_emulator/...) and the fault registry.
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/engine_internal.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <functional>

namespace cdc2doris::emu {
using namespace detail;

// ---- inspection ----------------------------------------------------------------------
std::string Engine::tables_json() const {
  boost::json::array arr;
  for (auto& [dn, d] : dbs_)
    for (auto& [tn, t] : d->tables)
      arr.push_back(boost::json::object{{"db", dn},
                                        {"table", tn},
                                        {"model", t->model == Model::Unique ? "UNIQUE" : "DUPLICATE"},
                                        {"rows", t->visible_rows()}});
  return boost::json::serialize(boost::json::object{{"tables", arr}});
}

std::optional<std::string> Engine::rows_jsonl(const std::string& db, const std::string& table) const {
  const Database* d = find_db(db);
  if (!d) return std::nullopt;
  auto it = d->tables.find(table);
  if (it == d->tables.end()) return std::nullopt;
  const Table& t = *it->second;
  std::string out;
  if (t.model == Model::Duplicate) {
    for (auto& l : t.dup_rows) { out += l; out += '\n'; }
    return out;
  }
  std::vector<const std::pair<const std::string, StoredRow>*> v;
  v.reserve(t.unique_rows.size());
  for (auto& kv : t.unique_rows)
    if (!kv.second.deleted) v.push_back(&kv);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (auto* kv : v) { out += kv->second.line; out += '\n'; }
  return out;
}

std::optional<std::pair<std::string, int64_t>> Engine::checksum(const std::string& db, const std::string& table) const {
  auto rows = rows_jsonl(db, table);
  if (!rows) return std::nullopt;
  // Order-independent: the sum of per-row FNV-1a hashes, so a DUPLICATE table
  // loaded in a different order still compares equal.
  uint64_t sum = 0;
  int64_t n = 0;
  std::string_view s = *rows;
  while (!s.empty()) {
    auto nl = s.find('\n');
    std::string_view line = s.substr(0, nl);
    uint64_t hsh = 1469598103934665603ULL;
    for (unsigned char c : line) { hsh ^= c; hsh *= 1099511628211ULL; }
    sum += hsh;
    ++n;
    s.remove_prefix(nl == std::string_view::npos ? s.size() : nl + 1);
  }
  const Table* t = find_db(db)->tables.at(table).get();
  n += t->count_only_rows;
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(sum));
  return std::make_pair(std::string(b), n);
}

std::string Engine::txns_json(const std::string& db) const {
  boost::json::array arr;
  for (auto& [id, t] : txns_) {
    if (!db.empty() && t.db != db) continue;
    // When the rows became visible (wall clock, ms): the ground truth of the
    // freshness bench (issue 36); null until then and for aborted txns.
    boost::json::value visible = nullptr;
    if (t.state == TxnState::Visible) visible = t.finish_ms;
    arr.push_back(boost::json::object{{"txn_id", id},
                                      {"db", t.db},
                                      {"table", t.table},
                                      {"label", t.label},
                                      {"state", to_string(t.state)},
                                      {"two_phase_commit", t.two_pc},
                                      {"rows", t.loaded},
                                      {"filtered", t.filtered},
                                      {"bytes", t.bytes},
                                      {"abort_reason", t.abort_reason},
                                      {"visible_unix_ms", visible}});
  }
  return boost::json::serialize(boost::json::object{{"txns", arr}});
}

std::string Engine::stats_json() const {
  int64_t running = 0;
  for (auto& [id, t] : txns_)
    if (t.state == TxnState::Prepare || t.state == TxnState::Precommitted || t.state == TxnState::Committed) ++running;
  return boost::json::serialize(boost::json::object{{"loads", stats_.loads},
                                                    {"loads_ok", stats_.loads_ok},
                                                    {"loads_failed", stats_.loads_failed},
                                                    {"precommits", stats_.precommits},
                                                    {"commits", stats_.commits},
                                                    {"aborts", stats_.aborts},
                                                    {"bytes", stats_.bytes},
                                                    {"rows", stats_.rows},
                                                    {"txn_requests", stats_.requests},
                                                    {"running_txns", running}});
}

// ---- faults --------------------------------------------------------------------------
std::string Fault::to_json() const {
  boost::json::object o{{"id", id}, {"type", type}, {"remaining", remaining}};
  if (!db.empty()) o["db"] = db;
  if (!table.empty()) o["table"] = table;
  if (be >= 0) o["be"] = be;
  if (!status.empty()) o["status"] = status;
  if (!message.empty()) o["message"] = message;
  if (bytes) o["bytes"] = bytes;
  if (ms) o["ms"] = ms;
  if (type == "publish_timeout") o["visible_after_ms"] = visible_after_ms;
  if (apply) o["apply"] = true;
  if (reset) o["reset"] = true;
  if (type == "fail_query" || type == "delay_query") {
    o["match"] = match;
    if (type == "fail_query") {
      o["http_status"] = http_status;
      o["code"] = code;
      o["raw"] = raw;
    }
  }
  return boost::json::serialize(o);
}

std::string Engine::add_fault(const std::string& body) {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) throw std::invalid_argument("fault body must be a JSON object: " + body);
  auto& o = v.as_object();
  auto s = [&](const char* k, std::string def = "") {
    auto* p = o.if_contains(k);
    if (!p) return def;
    if (!p->is_string()) throw std::invalid_argument(std::string("field '") + k + "' must be a string");
    return std::string(p->as_string());
  };
  auto i = [&](const char* k, int64_t def) -> int64_t {
    auto* p = o.if_contains(k);
    if (!p) return def;
    if (!p->is_int64()) throw std::invalid_argument(std::string("field '") + k + "' must be an integer");
    return p->as_int64();
  };
  auto b = [&](const char* k) {
    auto* p = o.if_contains(k);
    return p && p->is_bool() && p->as_bool();
  };
  Fault f;
  f.type = s("type");
  f.db = s("db");
  f.table = s("table");
  f.be = static_cast<int>(i("be", -1));
  f.remaining = i("count", 1);
  f.bytes = i("bytes", 0);
  f.ms = i("ms", 0);
  f.visible_after_ms = i("visible_after_ms", 1000);
  f.apply = b("apply");
  f.reset = b("reset");
  f.phase = s("phase", "body");
  f.match = s("match");
  f.http_status = i("http_status", 200);
  f.code = i("code", 500);
  f.raw = b("raw");
  if (f.remaining == 0) throw std::invalid_argument("count must be positive or -1");
  int64_t affected = 0;
  if (f.type == "fail_load") {
    f.status = s("status", "Fail");
    f.message = s("message", "[INTERNAL_ERROR]injected failure");
    if (f.phase == "header") f.type = "fail_load_header";
    else if (f.phase != "body") throw std::invalid_argument("phase must be 'header' or 'body'");
  } else if (f.type == "fail_commit") {
    f.status = s("status", "ANALYSIS_ERROR");
    f.message = s("message", kFe + "injected commit failure");
  } else if (f.type == "fail_query") {
    f.status = s("status", "Internal Error");
    f.message = s("message", "injected query failure");
    if (f.http_status < 100 || f.http_status > 599) throw std::invalid_argument("http_status must be 100..599");
  } else if (f.type == "reset_after_bytes" || f.type == "delay_response" || f.type == "delay_continue" ||
             f.type == "delay_commit" || f.type == "publish_timeout" || f.type == "too_many_versions" ||
             f.type == "running_txn_limit" || f.type == "schema_change_running" || f.type == "delay_query") {
  } else if (f.type == "be_offline" || f.type == "be_online") {
    if (f.be < 0 || f.be >= static_cast<int>(cfg_.be_addrs.size()))
      throw std::invalid_argument("be must be a BE index 0.." + std::to_string(cfg_.be_addrs.size() - 1));
    faults_.erase(std::remove_if(faults_.begin(), faults_.end(),
                                 [&](const Fault& x) { return x.type == "be_offline" && x.be == f.be; }),
                  faults_.end());
    if (f.type == "be_offline") {
      f.remaining = -1;
      f.id = next_fault_id_++;
      faults_.push_back(f);
    }
    if (on_be_state) on_be_state(f.be, f.type == "be_online");
    return f.type == "be_offline" ? f.to_json() : boost::json::serialize(boost::json::object{{"be", f.be}, {"online", true}});
  } else if (f.type == "be_restart") {
    if (f.be < 0 || f.be >= static_cast<int>(cfg_.be_addrs.size()))
      throw std::invalid_argument("be must be a BE index 0.." + std::to_string(cfg_.be_addrs.size() - 1));
    // The BE process restarts: its loads die with their connections, and
    // the FE, seeing a new start time in the heartbeat, aborts the PREPARE
    // txns it coordinated (fe HeartbeatMgr -> GlobalTransactionMgr.
    // abortTxnWhenCoordinateBeRestart, enable_abort_txn_by_checking_coordinator_be);
    // PRECOMMITTED ones stay.
    for (auto& [id, t] : txns_)
      if (t.state == TxnState::Prepare && t.be == f.be) {
        abort_txn(t, "coordinate BE restart");
        ++affected;
      }
    faults_.erase(std::remove_if(faults_.begin(), faults_.end(),
                                 [&](const Fault& x) { return x.type == "be_offline" && x.be == f.be; }),
                  faults_.end());
    Fault off = f;
    off.type = "be_offline";
    off.remaining = -1;
    off.id = next_fault_id_++;
    off.online_at_ms = now_ms() + (f.ms > 0 ? f.ms : 1000);
    faults_.push_back(off);
    if (on_be_state) on_be_state(f.be, false);
    return boost::json::serialize(boost::json::object{{"be", f.be}, {"aborted", affected}, {"back_in_ms", off.online_at_ms - now_ms()}});
  } else if (f.type == "expire_precommitted") {
    for (auto& [id, t] : txns_)
      if (t.state == TxnState::Precommitted && (f.db.empty() || t.db == f.db) && (f.table.empty() || t.table == f.table)) {
        abort_txn(t, "timeout by txn manager");
        ++affected;
      }
    return boost::json::serialize(boost::json::object{{"type", f.type}, {"aborted", affected}});
  } else if (f.type == "drop_labels") {
    std::vector<int64_t> ids;
    for (auto& [id, t] : txns_)
      if ((t.state == TxnState::Visible || t.state == TxnState::Aborted) && (f.db.empty() || t.db == f.db))
        ids.push_back(id);
    for (auto id : ids) forget_txn(id);
    return boost::json::serialize(boost::json::object{{"type", f.type}, {"dropped", static_cast<int64_t>(ids.size())}});
  } else {
    throw std::invalid_argument("unknown fault type '" + f.type + "'");
  }
  f.id = next_fault_id_++;
  faults_.push_back(f);
  return f.to_json();
}

std::string Engine::faults_json() const {
  std::string r = "{\"faults\":[";
  for (size_t i = 0; i < faults_.size(); ++i) r += (i ? "," : "") + faults_[i].to_json();
  return r + "]}";
}

bool Engine::delete_fault(int64_t id) {
  for (auto it = faults_.begin(); it != faults_.end(); ++it)
    if (it->id == id) {
      if (it->type == "be_offline" && on_be_state) on_be_state(it->be, true);
      faults_.erase(it);
      return true;
    }
  return false;
}

void Engine::clear_faults() {
  for (auto& f : faults_)
    if (f.type == "be_offline" && on_be_state) on_be_state(f.be, true);
  faults_.clear();
}

std::optional<Fault> Engine::take_first(const std::function<bool(const Fault&)>& matches) {
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (!matches(*it)) continue;
    Fault f = *it;
    if (it->remaining > 0 && --it->remaining == 0) faults_.erase(it);
    return f;
  }
  return std::nullopt;
}

std::optional<Fault> Engine::take_fault(const std::string& type, const std::string& db, const std::string& table, int be) {
  return take_first([&](const Fault& f) {
    return f.type == type && (f.db.empty() || f.db == db) && (f.table.empty() || f.table == table) &&
           (f.be < 0 || f.be == be);
  });
}

std::optional<Fault> Engine::take_query_fault(const std::string& type, const std::string& db, const std::string& stmt) {
  auto lower = [](std::string v) {
    for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return v;
  };
  const std::string lowered = lower(stmt);
  return take_first([&](const Fault& f) {
    return f.type == type && (f.db.empty() || f.db == db) && lowered.find(lower(f.match)) != std::string::npos;
  });
}

bool Engine::be_offline(int be) const {
  for (auto& f : faults_)
    if (f.type == "be_offline" && f.be == be) return true;
  return false;
}

}  // namespace cdc2doris::emu
