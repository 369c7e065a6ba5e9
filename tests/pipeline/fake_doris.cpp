// The Doris side of the pipeline's fakes: FakeDoris (tables, 2PC txns,
// scripted failures).
#include <algorithm>
#include <stdexcept>
#include <thread>

#include "tests/pipeline/fakes.hpp"
#include "tools/workload/workload.hpp"

namespace cdc2doris::test {

// ================================================================== FakeDoris

const char* to_string(TxnState s) {
  switch (s) {
    case TxnState::Prepare: return "PREPARE";
    case TxnState::Precommitted: return "PRECOMMITTED";
    case TxnState::Committed: return "COMMITTED";
    case TxnState::Aborted: return "ABORTED";
  }
  return "?";
}

namespace {
template <class T>
std::future<T> ready(T v) {
  std::promise<T> p;
  p.set_value(std::move(v));
  return p.get_future();
}

doris::DorisError err(doris::ErrorKind k, Disposition d, std::string msg, const std::string& db = "",
                      const std::string& table = "", const std::string& label = "") {
  ErrorContext ctx;
  ctx.table = table.empty() ? db : db + "." + table;
  ctx.label = label;
  return doris::DorisError(k, d, std::move(msg), std::move(ctx));
}

bool open_state(TxnState s) { return s == TxnState::Prepare || s == TxnState::Precommitted; }
}  // namespace

// ---------------------------------------------------------------- stream

FakeLoadStream::~FakeLoadStream() {
  if (!done_) cancel();
}

std::optional<doris::DorisError> FakeLoadStream::begin() {
  if (txn_id_ >= 0) return std::nullopt;
  auto r = doris_.begin_txn(spec_);
  if (!r) return r.error();
  txn_id_ = *r;
  return std::nullopt;
}

doris::DorisResult<void> FakeLoadStream::write(std::string_view rows) {
  if (failed_) return *failed_;
  if (done_) return err(doris::ErrorKind::Cancelled, Disposition::Fail, "stream is finished");
  if (auto e = begin()) return *(failed_ = e);
  if (auto e = doris_.on_write(spec_)) return *(failed_ = e);
  body_.append(rows);
  return {};
}

doris::DorisResult<doris::LoadResult> FakeLoadStream::finish() {
  if (failed_) return *failed_;
  if (done_) return err(doris::ErrorKind::Cancelled, Disposition::Fail, "stream is finished");
  if (auto e = begin()) return *(failed_ = e);
  done_ = true;
  auto r = doris_.precommit(spec_, txn_id_, body_);
  if (!r) failed_ = r.error();
  return r;
}

void FakeLoadStream::cancel() {
  // The connection closes; the txn stays PREPARE until aborted by label
  // (or, in Doris, by its timeout).
  done_ = true;
  if (!failed_) failed_ = err(doris::ErrorKind::Cancelled, Disposition::Fail, "cancelled");
}

// ---------------------------------------------------------------- client

void FakeDoris::add_table(const std::string& db, const std::string& table, bool unique) {
  std::lock_guard lk(mu_);
  tables_[db + "." + table].unique = unique;
}

int64_t FakeDoris::seed_txn(const std::string& db, const std::string& table, const std::string& label, TxnState state,
                            std::vector<std::string> rows) {
  std::lock_guard lk(mu_);
  Txn t{next_txn_++, db, table, label, state, std::move(rows), {}};
  txns_[t.id] = t;
  if (state == TxnState::Committed) apply_locked(t);
  track_open_locked(db);
  return t.id;
}

void FakeDoris::expire_txn(int64_t txn_id) {
  std::lock_guard lk(mu_);
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || !open_state(it->second.state)) throw std::logic_error("expire_txn: not an open txn");
  it->second.state = TxnState::Aborted;
}

void FakeDoris::forget_txn(int64_t txn_id) {
  std::lock_guard lk(mu_);
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || open_state(it->second.state)) throw std::logic_error("forget_txn: not a finished txn");
  it->second.forgotten = true;
}

void FakeDoris::fail_next_writes(int n, doris::DorisError e, const std::string& table, int after_ok) {
  std::lock_guard lk(mu_);
  write_faults_.push_back({n, after_ok, table, std::move(e)});
}

void FakeDoris::fail_next_finishes(int n, doris::DorisError e, const std::string& table) {
  std::lock_guard lk(mu_);
  finish_faults_.push_back({n, 0, table, std::move(e)});
}

void FakeDoris::fail_next_commits(int n, doris::DorisError e) {
  std::lock_guard lk(mu_);
  commit_faults_.push_back({n, 0, "", std::move(e)});
}

void FakeDoris::fail_all_commits(std::optional<doris::DorisError> e) {
  std::lock_guard lk(mu_);
  all_commits_fail_ = std::move(e);
}

void FakeDoris::lose_next_commit(const std::string& table) {
  std::lock_guard lk(mu_);
  lose_.insert(table);
}

void FakeDoris::forget_next_commit(const std::string& table) {
  std::lock_guard lk(mu_);
  forget_.insert(table);
}

void FakeDoris::busy_next_probes(const std::string& table, int n) {
  std::lock_guard lk(mu_);
  for (int i = 0; i < n; ++i) busy_probes_.insert(table);
}

void FakeDoris::delay_commits(const std::string& table, std::chrono::milliseconds delay) {
  std::lock_guard lk(mu_);
  commit_delays_[table] = delay;
}

void FakeDoris::heal() {
  std::lock_guard lk(mu_);
  commit_delays_.clear();
  write_faults_.clear();
  finish_faults_.clear();
  commit_faults_.clear();
  all_commits_fail_.reset();
  lose_.clear();
  forget_.clear();
  busy_probes_.clear();
}

FakeDoris::Stats FakeDoris::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

std::vector<FakeDoris::Txn> FakeDoris::txns() const {
  std::lock_guard lk(mu_);
  std::vector<Txn> out;
  for (const auto& [id, t] : txns_) out.push_back(t);
  return out;
}

std::optional<FakeDoris::Txn> FakeDoris::txn_by_label(const std::string& db, const std::string& label) const {
  std::lock_guard lk(mu_);
  const Txn* found = nullptr;
  for (const auto& [id, t] : txns_)
    if (t.db == db && t.label == label) found = &t;  // the newest
  if (found == nullptr) return std::nullopt;
  return *found;
}

int FakeDoris::open_txns(const std::string& db) const {
  std::lock_guard lk(mu_);
  int n = 0;
  for (const auto& [id, t] : txns_)
    if (t.db == db && open_state(t.state)) ++n;
  return n;
}

FakeDoris::Table FakeDoris::table(const std::string& db, const std::string& table) const {
  std::lock_guard lk(mu_);
  auto it = tables_.find(db + "." + table);
  return it == tables_.end() ? Table{} : it->second;
}

std::map<std::string, FakeDoris::Table> FakeDoris::tables() const {
  std::lock_guard lk(mu_);
  return tables_;
}

std::optional<doris::DorisError> FakeDoris::take(std::vector<Fault>& faults, const std::string& table) {
  for (auto it = faults.begin(); it != faults.end(); ++it) {
    if (!it->table.empty() && it->table != table) continue;
    if (it->skip > 0) {
      --it->skip;
      return std::nullopt;
    }
    auto e = it->error;
    if (--it->remaining <= 0) faults.erase(it);
    return e;
  }
  return std::nullopt;
}

FakeDoris::Txn* FakeDoris::find_label_locked(const std::string& db, const std::string& label) {
  Txn* found = nullptr;
  for (auto& [id, t] : txns_)
    if (t.db == db && t.label == label && !t.forgotten) found = &t;
  return found;
}

void FakeDoris::track_open_locked(const std::string& db) {
  int n = 0;
  for (const auto& [id, t] : txns_)
    if (t.db == db && open_state(t.state)) ++n;
  int& m = stats_.max_open_per_db[db];
  m = std::max(m, n);
}

doris::DorisResult<int64_t> FakeDoris::begin_txn(const doris::LoadSpec& spec) {
  std::lock_guard lk(mu_);
  ++stats_.streams_opened;
  if (!tables_.count(spec.db + "." + spec.table))
    return err(doris::ErrorKind::UnknownTable, Disposition::Fatal, "unknown table", spec.db, spec.table, spec.label);
  if (Txn* t = find_label_locked(spec.db, spec.label); t != nullptr && t->state != TxnState::Aborted) {
    ++stats_.label_conflicts;
    const bool finished = t->state == TxnState::Committed;
    auto e = err(doris::ErrorKind::LabelExists, finished ? Disposition::Fail : Disposition::Retry,
                 "Label Already Exists", spec.db, spec.table, spec.label);
    e.existing_label = doris::LabelState{finished                           ? doris::LabelState::Finished
                                         : t->state == TxnState::Prepare ? doris::LabelState::Running
                                                                          : doris::LabelState::Precommitted,
                                         t->id};
    return e;
  }
  Txn t{next_txn_++, spec.db, spec.table, spec.label, TxnState::Prepare, {}, spec.headers};
  txns_[t.id] = t;
  track_open_locked(spec.db);
  return t.id;
}

std::optional<doris::DorisError> FakeDoris::on_write(const doris::LoadSpec& spec) {
  std::lock_guard lk(mu_);
  ++stats_.writes;
  return take(write_faults_, spec.table);
}

doris::DorisResult<doris::LoadResult> FakeDoris::precommit(const doris::LoadSpec& spec, int64_t txn_id,
                                                                        const std::string& body) {
  std::lock_guard lk(mu_);
  ++stats_.finishes;
  if (auto e = take(finish_faults_, spec.table)) return *e;
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || it->second.state != TxnState::Prepare)
    return err(doris::ErrorKind::ServerError, Disposition::Retry, "txn is not PREPARE any more", spec.db, spec.table,
               spec.label);
  Txn& t = it->second;
  size_t start = 0;
  while (start < body.size()) {
    size_t nl = body.find('\n', start);
    if (nl == std::string::npos) nl = body.size();
    if (nl > start) t.rows.push_back(body.substr(start, nl - start));
    start = nl + 1;
  }
  t.state = TxnState::Precommitted;
  doris::LoadResult r;
  r.txn_id = t.id;
  r.label = t.label;
  r.status = "Success";
  r.total_rows = r.loaded_rows = static_cast<int64_t>(t.rows.size());
  r.load_bytes = static_cast<int64_t>(body.size());
  return r;
}

void FakeDoris::apply_row(Table& tab, const std::string& row) {
  if (!tab.unique) {
    tab.dup_rows.push_back(row);
    return;
  }
  // Rows are {"<key>":<value>,...}: the first member is the key.
  const size_t colon = row.find(':');
  const size_t comma = row.find(',', colon);
  std::string key = row.substr(colon + 1, comma - colon - 1);
  const bool del = row.find("\"__DORIS_DELETE_SIGN__\":1") != std::string::npos;
  if (del)
    tab.rows.erase(key);
  else
    tab.rows[key] = workload::strip_delete_sign(row);
}

void FakeDoris::apply_locked(const Txn& t) {
  Table& tab = tables_[t.db + "." + t.table];
  for (const auto& row : t.rows) apply_row(tab, row);
}

doris::TxnResult FakeDoris::commit_locked(Txn& t) {
  ++stats_.commits;
  if (all_commits_fail_) return *all_commits_fail_;
  if (auto e = take(commit_faults_, "")) return *e;
  if (lose_.count(t.table) && open_state(t.state)) {
    lose_.erase(lose_.find(t.table));
    t.state = TxnState::Aborted;
    stats_.lost_labels.push_back(t.label);
    return doris::TxnOutcome::Aborted;
  }
  if (t.forgotten) return doris::TxnOutcome::NotFoundOrAborted;
  if (forget_.count(t.table) && t.state == TxnState::Precommitted) {
    forget_.erase(forget_.find(t.table));
    t.state = TxnState::Committed;
    apply_locked(t);
    t.forgotten = true;
    return doris::TxnOutcome::NotFoundOrAborted;
  }
  switch (t.state) {
    case TxnState::Prepare:
      return err(doris::ErrorKind::TxnNotPrecommitted, Disposition::Retry, "txn is PREPARE", t.db, t.table, t.label);
    case TxnState::Precommitted:
      t.state = TxnState::Committed;
      apply_locked(t);
      return doris::TxnOutcome::Done;
    case TxnState::Committed: return doris::TxnOutcome::AlreadyDone;
    case TxnState::Aborted: return doris::TxnOutcome::Aborted;
  }
  return doris::TxnOutcome::NotFoundOrAborted;
}

doris::TxnResult FakeDoris::abort_locked(Txn& t) {
  switch (t.state) {
    case TxnState::Prepare:
    case TxnState::Precommitted:
      t.state = TxnState::Aborted;
      ++stats_.aborts;
      return doris::TxnOutcome::Done;
    case TxnState::Committed:
      return err(doris::ErrorKind::AlreadyCommitted, Disposition::Fail, "txn is already COMMITTED", t.db, t.table,
                 t.label);
    case TxnState::Aborted: return doris::TxnOutcome::AlreadyDone;
  }
  return doris::TxnOutcome::AlreadyDone;
}

std::unique_ptr<doris::LoadStream> FakeDoris::open_load(doris::LoadSpec spec) {
  return std::make_unique<FakeLoadStream>(*this, std::move(spec));
}

std::future<doris::TxnResult> FakeDoris::commit_async(const std::string& db, int64_t txn_id) {
  std::lock_guard lk(mu_);
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || it->second.db != db) {
    ++stats_.commits;
    return ready<doris::TxnResult>(doris::TxnOutcome::NotFoundOrAborted);
  }
  if (auto d = commit_delays_.find(it->second.table); d != commit_delays_.end()) {
    const auto delay = d->second;
    return std::async(std::launch::async, [this, txn_id, delay] {
      std::this_thread::sleep_for(delay);
      std::lock_guard lk2(mu_);
      return commit_locked(txns_.at(txn_id));
    });
  }
  return ready(commit_locked(it->second));
}

std::future<doris::TxnResult> FakeDoris::abort_async(const std::string& db, int64_t txn_id) {
  std::lock_guard lk(mu_);
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || it->second.db != db || it->second.forgotten)
    return ready<doris::TxnResult>(doris::TxnOutcome::NotFoundOrAborted);
  return ready(abort_locked(it->second));
}

std::future<doris::TxnResult> FakeDoris::commit_by_label_async(const std::string& db, const std::string& label) {
  std::lock_guard lk(mu_);
  Txn* t = find_label_locked(db, label);
  if (t == nullptr) return ready<doris::TxnResult>(doris::TxnOutcome::NotFoundOrAborted);
  return ready(commit_locked(*t));
}

std::future<doris::TxnResult> FakeDoris::abort_by_label_async(const std::string& db, const std::string& label) {
  std::lock_guard lk(mu_);
  Txn* t = find_label_locked(db, label);
  if (t == nullptr) return ready<doris::TxnResult>(doris::TxnOutcome::NotFoundOrAborted);
  return ready(abort_locked(*t));
}

doris::DorisResult<doris::LabelState> FakeDoris::probe_label(const doris::LoadSpec& spec) {
  std::lock_guard lk(mu_);
  ++stats_.probes;
  if (!tables_.count(spec.db + "." + spec.table))
    return err(doris::ErrorKind::UnknownTable, Disposition::Fatal, "unknown table", spec.db, spec.table, spec.label);
  if (auto busy = busy_probes_.find(spec.table); busy != busy_probes_.end()) {
    busy_probes_.erase(busy);
    return doris::LabelState{doris::LabelState::Running, next_txn_++};
  }
  Txn* t = find_label_locked(spec.db, spec.label);
  // An aborted label may be reused: the probe's own txn begins and is aborted.
  if (t == nullptr || t->state == TxnState::Aborted) return doris::LabelState{doris::LabelState::Unused, std::nullopt};
  switch (t->state) {
    case TxnState::Prepare: return doris::LabelState{doris::LabelState::Running, t->id};
    case TxnState::Precommitted: return doris::LabelState{doris::LabelState::Precommitted, t->id};
    default: return doris::LabelState{doris::LabelState::Finished, t->id};
  }
}

doris::DorisResult<doris::TableSchema> FakeDoris::schema(const std::string& db, const std::string& table) {
  std::lock_guard lk(mu_);
  auto it = tables_.find(db + "." + table);
  if (it == tables_.end()) return err(doris::ErrorKind::UnknownTable, Disposition::Fatal, "unknown table", db, table);
  doris::TableSchema s;
  s.keys_type = it->second.unique ? "UNIQUE_KEYS" : "DUP_KEYS";
  s.columns = it->second.columns;
  return s;
}

void FakeDoris::set_columns(const std::string& db, const std::string& table, std::vector<doris::ColumnSchema> columns) {
  std::lock_guard lk(mu_);
  tables_[db + "." + table].columns = std::move(columns);
}

// DESC `db`.`table` from the columns set_columns() gave (the DATETIME
// scale in the type, as Doris shows it); nothing else.
doris::DorisResult<doris::SqlResult> FakeDoris::sql(const std::string& db, const std::string& stmt) {
  std::lock_guard lk(mu_);
  const std::string prefix = "DESC `" + db + "`.`";
  if (stmt.rfind(prefix, 0) == 0 && stmt.size() > prefix.size() && stmt.back() == '`') {
    const std::string table = stmt.substr(prefix.size(), stmt.size() - prefix.size() - 1);
    auto it = tables_.find(db + "." + table);
    if (it == tables_.end()) return err(doris::ErrorKind::UnknownTable, Disposition::Fatal, "unknown table", db, table);
    doris::SqlResult r;
    r.columns = {"Field", "Type", "Null", "Key", "Default", "Extra"};
    for (const auto& c : it->second.columns) {
      std::string type = c.type == "DATETIMEV2" ? "DATETIME" : c.type;
      if (type == "DATETIME" && c.scale.value_or(0) > 0) type += "(" + std::to_string(*c.scale) + ")";
      r.rows.push_back({c.name, type, std::string("Yes"), std::string("false"), std::nullopt, std::string()});
    }
    return r;
  }
  return err(doris::ErrorKind::BadRequest, Disposition::Fatal, "the fake answers DESC only", db);
}

}  // namespace cdc2doris::test
