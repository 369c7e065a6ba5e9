// The emulator engine: auth, catalog lookups, transaction state changes,
// time-driven housekeeping, error logs and the 2PC endpoint. Loads are in
// load_*.cpp, persistence in wal.cpp, inspection and faults in inspect.cpp.
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/engine_internal.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <malloc.h>
#include <unistd.h>

namespace cdc2doris::emu {
using namespace detail;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void keep_freed_heap() {
  ::mallopt(M_MMAP_THRESHOLD, 256 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// ---------------------------------------------------------------------------
PrettyObject& PrettyObject::str(std::string_view k, std::string_view v) {
  key(k);
  append_json_string(&s_, v);
  return *this;
}
PrettyObject& PrettyObject::num(std::string_view k, int64_t v) {
  key(k);
  s_ += std::to_string(v);
  return *this;
}
void PrettyObject::key(std::string_view k) {
  s_ += s_.empty() ? "{\n    " : ",\n    ";
  append_json_string(&s_, k);
  s_ += ": ";
}
std::string PrettyObject::done(bool nl) const {
  std::string r = s_.empty() ? "{}" : s_ + "\n}";
  if (nl) r += "\n";
  return r;
}

std::string compact_string(std::string_view s) {
  std::string r;
  append_json_string(&r, s);
  return r;
}

const char* to_string(TxnState s) {
  switch (s) {
    case TxnState::Prepare: return "PREPARE";
    case TxnState::Precommitted: return "PRECOMMITTED";
    case TxnState::Committed: return "COMMITTED";
    case TxnState::Visible: return "VISIBLE";
    case TxnState::Aborted: return "ABORTED";
  }
  return "UNKNOWN";
}

int Table::col_index(std::string_view n) const {
  for (size_t i = 0; i < cols.size(); ++i)
    if (iequals(cols[i].name, n)) return static_cast<int>(i);
  return -1;
}

int64_t Table::visible_rows() const {
  if (model == Model::Duplicate) return static_cast<int64_t>(dup_rows.size()) + count_only_rows;
  int64_t n = count_only_rows;
  for (auto& [k, r] : unique_rows)
    if (!r.deleted) ++n;
  return n;
}

// ---------------------------------------------------------------------------
Engine::Engine(Config cfg) : cfg_(std::move(cfg)) {
  for (const auto& [name, pw] : cfg_.users) superusers_.insert(name);
  superusers_.insert({"root", "admin"});
}

Engine::~Engine() {
  if (wal_fd_ >= 0) ::close(wal_fd_);
}

Engine::Auth Engine::check_auth(std::string_view authz, std::string* user_out) const {
  std::string user, pw;
  if (!parse_basic(authz, &user, &pw)) return Auth::Missing;
  if (user_out) *user_out = user;
  auto it = cfg_.users.find(user);
  if (it == cfg_.users.end() || it->second != pw) return Auth::Denied;
  return Auth::Ok;
}

std::string Engine::denied_text(std::string_view authz) const {
  std::string user, pw;
  if (!parse_basic(authz, &user, &pw)) return "Access denied for user 'null' (using password: NO)";
  return "Access denied for user '" + user + "' (using password: " + (pw.empty() ? "NO" : "YES") + ")";
}

Database* Engine::find_db(const std::string& name) {
  auto it = dbs_.find(name);
  return it == dbs_.end() ? nullptr : it->second.get();
}
const Database* Engine::find_db(const std::string& name) const {
  auto it = dbs_.find(name);
  return it == dbs_.end() ? nullptr : it->second.get();
}
Table* Engine::find_table(const std::string& db, const std::string& table) {
  auto* d = find_db(db);
  if (!d) return nullptr;
  auto it = d->tables.find(table);
  return it == d->tables.end() ? nullptr : it->second.get();
}
Txn* Engine::find_txn(int64_t id) {
  auto it = txns_.find(id);
  return it == txns_.end() ? nullptr : &it->second;
}

int64_t Engine::running_txns(const Database& db) const {
  int64_t n = 0;
  for (auto it = live_txns_.begin(); it != live_txns_.end();) {
    auto t = txns_.find(*it);
    if (t == txns_.end() || t->second.state == TxnState::Visible || t->second.state == TxnState::Aborted) {
      it = live_txns_.erase(it);
      continue;
    }
    if (t->second.db == db.name) ++n;
    ++it;
  }
  return n;
}

// ---- transactions ------------------------------------------------------------
void Engine::abort_txn(Txn& t, const std::string& reason) {
  t.state = TxnState::Aborted;
  t.abort_reason = reason;
  t.finish_ms = now_ms();
  t.rows.clear();
  t.rows.shrink_to_fit();
  note_final(t);
  ++stats_.aborts;
  std::string r = "A";
  put_i64(&r, t.id);
  put_i64(&r, t.finish_ms);
  put_s(&r, reason);
  wal_write(r, true);
}

void Engine::precommit_or_commit(Txn& t, bool publish_timeout, int64_t visible_after_ms) {
  wal_stage(t);
  int64_t now = now_ms();
  if (t.two_pc) {
    t.state = TxnState::Precommitted;
    t.precommit_ms = now;
    ++stats_.precommits;
    std::string r = "P";
    put_i64(&r, t.id);
    put_i64(&r, now);
    wal_write(r, true);
    return;
  }
  t.state = TxnState::Committed;
  t.visible_at_ms = publish_timeout ? now + visible_after_ms : 0;
  ++stats_.commits;
  std::string r = "C";
  put_i64(&r, t.id);
  put_i64(&r, now);
  put_i64(&r, t.visible_at_ms);
  wal_write(r, !(t.visible_at_ms == 0));
  publish(t, t.visible_at_ms);
}

void Engine::publish(Txn& t, int64_t visible_at_ms) {
  int64_t after = visible_at_ms;
  for (int64_t id : publishing_)
    if (auto* q = find_txn(id); q && q->state == TxnState::Committed && q->table_id == t.table_id)
      after = std::max(after, q->visible_at_ms);
  if (after == 0) {
    apply_visible(t);
    return;
  }
  t.visible_at_ms = after;
  publishing_.push_back(t.id);
}

void Engine::publish_due(int64_t now, bool all) {
  std::set<int64_t> waiting_tables;
  for (auto it = publishing_.begin(); it != publishing_.end();) {
    Txn* t = find_txn(*it);
    if (!t || t->state != TxnState::Committed) {
      it = publishing_.erase(it);
      continue;
    }
    if (!waiting_tables.count(t->table_id) && (all || t->visible_at_ms <= now)) {
      apply_visible(*t);
      it = publishing_.erase(it);
      continue;
    }
    waiting_tables.insert(t->table_id);
    ++it;
  }
}

void Engine::apply_visible(Txn& t) {
  t.state = TxnState::Visible;
  t.finish_ms = now_ms();
  Table* tb = nullptr;
  if (auto* d = find_db(t.db))
    for (auto& [n, tab] : d->tables)
      if (tab->id == t.table_id) tb = tab.get();
  if (tb) {
    if (tb->schema_version != t.schema_version && !t.rows.empty()) {
      // Rows staged before an ALTER were rendered with the old columns; the
      // schema history is not kept, so migrate by column id from what the
      // lines carry (see migrate_rows).
      migrate_rows(*tb, {}, t.rows);
    }
    if (cfg_.count_only) {
      tb->count_only_rows += t.row_count;
    } else if (tb->model == Model::Duplicate) {
      for (auto& r : t.rows) tb->dup_rows.push_back(std::move(r.line));
    } else {
      bool has_seq = tb->seq_col >= 0 || tb->hidden_seq.has_value();
      tb->unique_rows.reserve(tb->unique_rows.size() + t.rows.size());
      for (auto& r : t.rows) {
        auto it = tb->unique_rows.find(r.key);
        if (r.partial) {
          // Columns the load did not set keep their stored values (a new or
          // deleted key gets defaults/NULL); an unset sequence value is the
          // stored one, or the lowest possible for a new key.
          const StoredRow* old = it != tb->unique_rows.end() ? &it->second : nullptr;
          const bool live = old && !old->deleted;
          if (r.seq_missing) r.seq = old ? old->seq : std::string();
          // A key deleted earlier keeps its sequence value: a row without one
          // takes the deleted row's (the mapped column too), every other left-out
          // column its default (suite test_f_seq_read_from_old).
          if (old && !live && r.seq_missing && tb->seq_col >= 0 && !r.del)
            r.line = with_column_of(*tb, tb->seq_col, old->line, r.line);
          // Delete rows too carry the stored values (Doris writes the old row
          // with the delete sign), so a later row can read the sequence from it.
          r.line = merge_partial_line(*tb, live ? &old->line : nullptr, r.line);
          // A new key without a sequence value takes the mapped column's
          // DEFAULT (or NULL) as its sequence, as the row itself does
          // (partial_update_info.cpp fills the sequence like any missing column).
          if (r.seq_missing && !old) r.seq = seq_of_line(*tb, r.line);
        }
        if (has_seq) {
          if (it != tb->unique_rows.end() && it->second.seq > r.seq) continue;
          if (it == tb->unique_rows.end()) it = tb->unique_rows.emplace(std::move(r.key), StoredRow{}).first;
          it->second.seq = std::move(r.seq);
          it->second.deleted = r.del;
          it->second.line = std::move(r.line);  // a tombstone keeps its values (see above)
        } else if (r.del) {
          if (it != tb->unique_rows.end()) tb->unique_rows.erase(it);
        } else if (it != tb->unique_rows.end()) {
          it->second.line = std::move(r.line);
        } else {
          tb->unique_rows.emplace(std::move(r.key), StoredRow{std::move(r.line), {}, false});
        }
      }
    }
  }
  t.rows.clear();
  t.rows.shrink_to_fit();
  note_final(t);
  std::string r = "V";
  put_i64(&r, t.id);
  put_i64(&r, t.finish_ms);
  wal_write(r, true);
}

void Engine::forget_txn(int64_t id) {
  auto it = txns_.find(id);
  if (it == txns_.end()) return;
  if (auto* d = find_db(it->second.db)) {
    // Forgotten from the front, except when a replayed log forgets a txn.
    if (!d->finished.empty() && d->finished.front() == id) d->finished.pop_front();
    else d->finished.erase(std::remove(d->finished.begin(), d->finished.end(), id), d->finished.end());
    auto lit = d->labels.find(it->second.label);
    if (lit != d->labels.end()) {
      auto& v = lit->second;
      v.erase(std::remove(v.begin(), v.end(), id), v.end());
      if (v.empty()) d->labels.erase(lit);
    }
  }
  txns_.erase(it);
  std::string r = "F";
  put_i64(&r, id);
  wal_write(r, false);
}

void Engine::tick(int64_t now) {
  // Running txns: timeouts and publish.
  const std::vector<int64_t> live(live_txns_.begin(), live_txns_.end());
  for (int64_t id : live) {
    auto it = txns_.find(id);
    if (it == txns_.end()) {
      live_txns_.erase(id);
      continue;
    }
    Txn& t = it->second;
    switch (t.state) {
      case TxnState::Prepare:
        if (now - t.begin_ms > t.timeout_s * 1000) abort_txn(t, "timeout by txn manager");
        break;
      case TxnState::Precommitted:
        if (now - t.precommit_ms > cfg_.precommit_timeout_s * 1000) abort_txn(t, "timeout by txn manager");
        break;
      case TxnState::Committed: break;  // publish_due, below
      case TxnState::Visible:
      case TxnState::Aborted:
        break;
    }
    if (t.state == TxnState::Visible || t.state == TxnState::Aborted) live_txns_.erase(id);
  }
  publish_due(now, false);
  // BEs back from a be_restart.
  for (auto it = faults_.begin(); it != faults_.end();) {
    if (it->type == "be_offline" && it->online_at_ms != 0 && it->online_at_ms <= now) {
      const int be = it->be;
      it = faults_.erase(it);
      if (on_be_state) on_be_state(be, true);
    } else {
      ++it;
    }
  }
  for (auto it = live_txns_.begin(); it != live_txns_.end();) {
    auto t = txns_.find(*it);
    if (t == txns_.end() || t->second.state == TxnState::Visible || t->second.state == TxnState::Aborted)
      it = live_txns_.erase(it);
    else
      ++it;
  }
  advance_alter_jobs(now);
  // Finished txns and their labels are forgotten by Doris' txn cleaner, a
  // daemon running every transaction_clean_interval_second (FE Config.java),
  // not as soon as they qualify.
  if (last_clean_ms_ != 0 && now - last_clean_ms_ < cfg_.txn_clean_interval_s * 1000) return;
  last_clean_ms_ = now;
  for (auto& [name, db] : dbs_) remove_useless_txns(*db, now);
}

void Engine::note_final(const Txn& t) {
  if (auto* d = find_db(t.db)) d->finished.push_back(t.id);
}

// DatabaseTransactionMgr.unprotectedRemoveUselessTxns (apache/doris fe-core):
// first the expired ones from the front of the finished deque (finished more
// than streaming_label_keep_max_second ago, whole seconds; it stops at the
// first one not expired), then, while the deque holds more than
// label_num_threshold, the oldest finished regardless of age; at most
// MAX_REMOVE_TXN_PER_ROUND (10000) per database and round.
void Engine::remove_useless_txns(Database& db, int64_t now) {
  constexpr int kMaxRemovePerRound = 10000;
  int cleared = 0;
  std::vector<int64_t> forget;
  size_t i = 0;
  for (; i < db.finished.size() && cleared < kMaxRemovePerRound; ++i) {
    auto it = txns_.find(db.finished[i]);
    if (it != txns_.end() && (now - it->second.finish_ms) / 1000 <= cfg_.label_retention_s) break;
    forget.push_back(db.finished[i]);
    ++cleared;
  }
  const auto threshold = static_cast<size_t>(std::max<int64_t>(cfg_.label_num_threshold, 0));
  for (; threshold > 0 && db.finished.size() - i > threshold && cleared < kMaxRemovePerRound; ++i) {
    forget.push_back(db.finished[i]);
    ++cleared;
  }
  for (int64_t id : forget) forget_txn(id);
}

// ---- error logs ----------------------------------------------------------------
std::string Engine::add_error_log(const std::string& text, int be) {
  char name[128];
  ++error_log_seq_;
  std::snprintf(name, sizeof name, "__shard_%d/error_log_insert_stmt_%llx_%llx_%llx", static_cast<int>(error_log_seq_ % 8),
                static_cast<unsigned long long>(now_ms()), static_cast<unsigned long long>(error_log_seq_),
                static_cast<unsigned long long>(std::random_device{}()));
  error_logs_[name] = text;
  error_log_order_.push_back(name);
  // Bounded: error logs are diagnostics, not data.
  if (error_log_order_.size() > 1000) {
    error_logs_.erase(error_log_order_.front());
    error_log_order_.erase(error_log_order_.begin());
  }
  std::string host = be >= 0 && be < static_cast<int>(cfg_.be_addrs.size()) ? cfg_.be_addrs[static_cast<size_t>(be)]
                                                                            : std::string("127.0.0.1:8040");
  return "http://" + host + "/api/_load_error_log?file=" + name;
}

std::optional<std::string> Engine::error_log(const std::string& file) const {
  auto it = error_logs_.find(file);
  if (it == error_logs_.end()) return std::nullopt;
  return it->second;
}

// ---- 2PC -------------------------------------------------------------------------
Reply Engine::two_pc_error(const std::string& status, const std::string& msg) const {
  PrettyObject o;
  o.str("status", status).str("msg", msg);
  return Reply{o.done(false), false};
}

Reply Engine::txn_2pc(const std::string& dbname, const std::map<std::string, std::string>& h,
                      const std::string& authorization, int be) {
  ++stats_.requests;
  std::string op = header(h, "txn_operation");
  std::string id_s = header(h, "txn_id");
  std::string label = header(h, "label");
  std::optional<int64_t> id;
  if (!id_s.empty()) {
    try {
      id = std::stoll(id_s);  // same parser as the BE, so "12abc" is 12 there too
    } catch (const std::exception& e) {
      return two_pc_error("INTERNAL_ERROR", "convert txn_id [" + id_s + "] failed, reason=" + e.what());
    }
  }
  if (op != "commit" && op != "abort")
    return two_pc_error("INTERNAL_ERROR", "transaction operation should be 'commit' or 'abort'");
  if (!id && label.empty()) return two_pc_error("INVALID_ARGUMENT", "No transaction id or label selected.");
  if (check_auth(authorization) != Auth::Ok) return two_pc_error("ANALYSIS_ERROR", kFe + denied_text(authorization));
  Database* db = find_db(dbname);
  if (!db) return two_pc_error("ANALYSIS_ERROR", kFe + "unknown database, database=" + dbname);
  Txn* t = nullptr;
  if (id) {
    t = find_txn(*id);
    if (t && t->db != dbname) t = nullptr;
    if (!t) return two_pc_error("ANALYSIS_ERROR", kFe + "transaction [" + std::to_string(*id) + "] not found");
  } else {
    auto lit = db->labels.find(label);
    if (lit == db->labels.end() || lit->second.empty())
      return two_pc_error("ANALYSIS_ERROR", kFe + "transaction not found, label=" + label);
    for (int64_t tid : lit->second) {
      Txn* c = find_txn(tid);
      if (c && (c->state == TxnState::Precommitted || (op == "abort" && c->state == TxnState::Prepare))) t = c;
    }
    if (!t) return two_pc_error("ANALYSIS_ERROR", kFe + "running transaction not found, label=" + label);
  }
  // fe FrontendServiceImpl.loadTxn2PCImpl checks LOAD on the txn's tables.
  std::string user;
  check_auth(authorization, &user);
  if (!has_priv(user, t->db, t->table, kLoadPriv)) return two_pc_error("ANALYSIS_ERROR", kFe + kLoadDenied);
  std::string tx = "transaction [" + std::to_string(t->id) + "] ";
  std::optional<Fault> injected;
  if (op == "commit") injected = take_fault("fail_commit", t->db, t->table, be);
  auto injected_reply = [&]() {
    Reply r = two_pc_error(injected->status, injected->message);
    r.reset = injected->reset;
    return r;
  };
  if (injected && !injected->apply) return injected_reply();
  if (op == "commit") {
    switch (t->state) {
      case TxnState::Precommitted: break;
      case TxnState::Committed: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already committed, not pre-committed.");
      case TxnState::Visible: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already visible, not pre-committed.");
      case TxnState::Aborted:
        return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already aborted. abort reason: " + t->abort_reason);
      case TxnState::Prepare: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is prepare, not pre-committed.");
    }
    Table* tb = nullptr;
    for (auto& [n, tab] : db->tables)
      if (tab->id == t->table_id) tb = tab.get();
    if (!tb) return two_pc_error("ANALYSIS_ERROR", kFe + "table not found, tableName=" + t->table);
    // GlobalTransactionMgr.commitTransaction2PC commits and returns without
    // waiting for the publish (unlike commitAndPublishTransaction of a
    // non-2PC load, which waits publish_wait_time_second and answers
    // "Publish Timeout"): a slow publish still answers Success, the txn
    // stays COMMITTED and its rows become visible later.
    const auto slow = take_fault("publish_timeout", t->db, t->table, be);
    const int64_t now = now_ms();
    t->state = TxnState::Committed;
    t->visible_at_ms = slow ? now + slow->visible_after_ms : 0;
    ++stats_.commits;
    std::string r = "C";
    put_i64(&r, t->id);
    put_i64(&r, now);
    put_i64(&r, t->visible_at_ms);
    wal_write(r, slow.has_value());
    publish(*t, t->visible_at_ms);
  } else {
    switch (t->state) {
      case TxnState::Prepare:
      case TxnState::Precommitted: abort_txn(*t, "User Abort"); break;
      case TxnState::Aborted:
        return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already aborted, abort reason: " + t->abort_reason);
      case TxnState::Committed: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already COMMITTED, could not abort.");
      case TxnState::Visible: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already VISIBLE, could not abort.");
    }
  }
  if (injected) return injected_reply();
  std::string msg;
  if (!label.empty()) msg += "label [" + label + "] ";
  if (id) msg += "transaction [" + std::to_string(*id) + "] ";
  msg += op + " successfully.";
  return two_pc_error("Success", msg);
}

}  // namespace cdc2doris::emu
