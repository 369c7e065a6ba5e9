// Opening the per-table Stream Loads, streaming rows into them, memory cap.
#include "core/pipeline/pipeline_impl.hpp"
#include "core/common/ascii_case.hpp"

#include <limits>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <variant>

#include "core/doris/label.hpp"

namespace cdc2doris::pipeline {

const char* to_string(LoadMode m) {
  switch (m) {
    case LoadMode::Flexible: return "flexible";
    case LoadMode::Sequence: return "sequence";
    case LoadMode::Runs: return "runs";
  }
  return "unknown";
}

namespace {

bool dominating(const decode::Row& row) { return row.partial_columns.empty() || row.is_delete(); }

// The load of `t` the row may join, or -1 when it needs a new one. Why this
// keeps Doris' result equal to the source's is in docs/architecture.md.
int pick_load(const TableLoads& t, const decode::Row& row) {
  if (t.loads.empty()) return -1;
  const int last = static_cast<int>(t.loads.size()) - 1;
  switch (t.mode) {
    case LoadMode::Flexible: return 0;
    case LoadMode::Runs: return t.loads.back().spec.partial_columns == row.partial_columns ? last : -1;
    case LoadMode::Sequence:
      if (dominating(row)) {
        for (int i = 0; i <= last; ++i) {
          const OpenLoad& l = t.loads[static_cast<size_t>(i)];
          if (l.dominating && l.spec.partial_columns == row.partial_columns) return i;
        }
        return -1;
      }
      // A partial row merges with what Doris stores: only after every row
      // of its key that came before it, so only the newest partial load.
      if (!t.loads.back().dominating && t.loads.back().spec.partial_columns == row.partial_columns) return last;
      return -1;
  }
  return -1;
}

}  // namespace

int Pipeline::Impl::open_txns_in_db(const std::string& db) const {
  int n = 0;
  for (const auto& [t, tl] : open_.loads)
    if (t.db == db) n += static_cast<int>(tl.loads.size());
  if (closing_)
    for (const auto& txn : closing_->record.txns)
      if (txn.db == db && !txn.committed) ++n;
  return n;
}

bool Pipeline::Impl::table_list_full(const Target& added) const {
  // Sequence-mode tables may commit their parts out of label order, which
  // the list then spells out (a table not asked about yet may be one).
  auto entry = [](const Target& t, bool sequence) {
    return state::EpochTable{t.db, t.table, 1, sequence ? std::vector<uint32_t>{0} : std::vector<uint32_t>{}};
  };
  std::vector<state::EpochTable> tables;
  for (const auto& [t, tl] : open_.loads) tables.push_back(entry(t, tl.mode == LoadMode::Sequence));
  auto info = table_info_cache_.find(added);
  tables.push_back(entry(added, info == table_info_cache_.end() || info->second.mode == LoadMode::Sequence));
  const auto parts = static_cast<uint32_t>(std::max(1, cfg_.max_loads_per_table));
  return state::pending_bytes_bound(open_.epoch, std::numeric_limits<int64_t>::max(), cfg_.label_prefix, tables,
                                    parts) > state::kMaxMetadataBytes;
}

int Pipeline::Impl::txn_budget(const std::string& db) const {
  auto it = txn_limit_budget_.find(db);
  return it == txn_limit_budget_.end() ? cfg_.open_txn_budget_per_db
                                       : std::min(cfg_.open_txn_budget_per_db, it->second);
}

void Pipeline::Impl::note_txn_limit(const doris::DorisError& err, const std::string& db) {
  if (err.kind() != doris::ErrorKind::TxnLimit) return;
  // Which of ours Doris counted is not known (loads open lazily, other
  // clients share the limit): halve what is open now, the refused one
  // included, at each refusal, down to one load per epoch.
  const int budget = std::max(1, std::min(txn_budget(db), open_txns_in_db(db)) / 2);
  txn_limit_budget_[db] = budget;
  log_->warn("database {}: Doris refused a transaction at its running-transaction limit; epochs now end early at "
             "{} open transaction(s) of this daemon in it (delivery.open_transaction_budget {})",
             db, budget, cfg_.open_txn_budget_per_db);
}

OpenLoad* Pipeline::Impl::load_for(LoadMap& loads, const Target& target, const decode::Row& row, uint64_t epoch,
                                   bool may_end_epoch) {
  auto it = loads.find(target);
  if (it != loads.end()) {
    TableLoads& tl = it->second;
    if (int i = pick_load(tl, row); i >= 0) return &tl.loads[static_cast<size_t>(i)];
    const bool replaying = replay_ && &loads == &replay_->loads;
    const bool bound = static_cast<int>(tl.loads.size()) >= cfg_.max_loads_per_table;
    const bool budget = open_txns_in_db(target.db) >= txn_budget(target.db);
    // A replay re-reads a recorded range: it splits as the record did and never ends early.
    if (!may_end_epoch || (!bound && !budget))
      return new_load(tl, target, row, epoch, tl.loads.front().spec.unique_key, replaying);
    // The rest of this table's rows go to the next epoch, which ends this one early.
    const uint64_t generation = rewind_generation_;
    const uint64_t ending = open_.epoch;
    end_open_epoch(bound ? "load bound" : "open-transaction budget");
    if (rewind_generation_ != generation || replay_) return nullptr;
    // The ended epoch now commits in the background (closing_); the open
    // epoch is still the same only when stopping past the shutdown deadline.
    if (open_.epoch == ending) {
      abort_open_epoch_stopping();
      return nullptr;
    }
    return load_for(open_.loads, target, row, open_.epoch, may_end_epoch);
  }
  if (may_end_epoch && open_txns_in_db(target.db) >= txn_budget(target.db)) {
    const uint64_t generation = rewind_generation_;
    drive_closing(/*block=*/true);
    if (!replay_ && open_txns_in_db(target.db) >= txn_budget(target.db)) {
      end_open_epoch("open-transaction budget");
      drive_closing(/*block=*/true);
    }
    if (rewind_generation_ != generation || replay_) return nullptr;
    if (closing_) {  // not committed: stopping, past the shutdown deadline
      abort_open_epoch_stopping();
      return nullptr;
    }
    if (open_txns_in_db(target.db) >= txn_budget(target.db)) {
      // Nothing of ours is open any more: the budget itself is below one epoch's need.
      failure_ = Error(Disposition::Fatal, "delivery.open_transaction_budget (" +
                                               std::to_string(txn_budget(target.db)) +
                                               ") is too small for one table's load in database " + target.db);
      step(Who::Open, Event::LoadFailedFatal);
    }
    return load_for(open_.loads, target, row, open_.epoch, may_end_epoch);
  }
  if (may_end_epoch && &loads == &open_.loads && !loads.empty() && table_list_full(target)) {
    // The epoch's table list goes into the commit point's metadata whole
    // (state/group_meta.hpp): this table goes to the next epoch.
    const uint64_t generation = rewind_generation_;
    const uint64_t ending = open_.epoch;
    end_open_epoch("table list");
    if (rewind_generation_ != generation || replay_) return nullptr;
    if (open_.epoch == ending) {
      abort_open_epoch_stopping();
      return nullptr;
    }
    return load_for(open_.loads, target, row, open_.epoch, may_end_epoch);
  }
  TableSettings settings = deps_.router.settings(target);
  auto info = table_info(target, settings);
  if (!info) return nullptr;
  TableLoads& tl = loads[target];
  tl.mode = info->mode;
  return new_load(tl, target, row, epoch, info->unique, replay_ && &loads == &replay_->loads);
}

OpenLoad* Pipeline::Impl::new_load(TableLoads& tl, const Target& target, const decode::Row& row, uint64_t epoch,
                                   bool unique, bool replaying) {
  // Part n's txn must begin in Doris after part n-1's: the lingering-txn
  // probe at the next start walks a table's parts in order and stops at the
  // first unused label. Streams open on their first write, so the rows
  // gathered so far are handed over first.
  for (auto& l : tl.loads)
    if (!l.skip)
      if (auto err = flush_pending(l)) {
        fail(*err, "load");
        return nullptr;
      }
  TableSettings settings = deps_.router.settings(target);
  OpenLoad load;
  load.target = target;
  load.spec.db = target.db;
  load.spec.table = target.table;
  const uint32_t part = tl.labels++;
  load.spec.label = doris::make_label(cfg_.label_prefix, target.db, target.table, epoch, part);
  load.spec.unique_key = unique;
  load.spec.headers = settings.headers;
  if (tl.mode == LoadMode::Flexible) {
    // Doris refuses `columns`, `hidden_columns` and
    // `function_column.sequence_col` in this mode: deletes travel as
    // __DORIS_DELETE_SIGN__ in the row, the sequence is the table's own mapping.
    load.spec.flexible_partial_update = true;
  } else {
    load.spec.sequence_col = settings.sequence_col;
    load.spec.partial_columns = row.partial_columns;
  }
  // No silent NULLs: a value Doris cannot convert fails the load (quoting
  // the ErrorURL lines) instead of becoming NULL. Not for loads that may
  // carry partial columns (a partial-column load, or any flexible one):
  // there Doris before 3.0 reads strict_mode as "no new keys", which a
  // key-only delete of an absent row would hit. An explicit header wins.
  if (tl.mode != LoadMode::Flexible && row.partial_columns.empty())
    load.spec.headers.try_emplace("strict_mode", "true");
  load.dominating = dominating(row);
  load.part = part;
  load.skip = replaying && replay_->committed_labels.count(load.spec.label) > 0;
  if (!load.skip && isolate_.count(target))
    load.isolated = std::make_unique<IsolatedRows>();  // sent when the epoch ends (isolation.cpp)
  else if (!load.skip)
    load.stream = deps_.doris.open_load(load.spec);
  // Sequence mode: loads of full rows and deletes commit before the partial ones.
  auto pos = tl.loads.end();
  if (tl.mode == LoadMode::Sequence && load.dominating)
    pos = std::find_if(tl.loads.begin(), tl.loads.end(), [](const OpenLoad& l) { return !l.dominating; });
  if (!tl.loads.empty())
    log_->debug("table {}: load {} ({} mode, {} columns)", target.name(), load.spec.label, to_string(tl.mode),
                row.partial_columns.empty() ? std::string("all") : std::to_string(row.partial_columns.size()));
  return &*tl.loads.insert(pos, std::move(load));
}

std::optional<TableInfo> Pipeline::Impl::table_info(const Target& t, const TableSettings& s) {
  if (auto it = table_info_cache_.find(t); it != table_info_cache_.end()) return it->second;
  TableInfo info;
  const decode::DeleteOptions del = s.deletes.value_or(decoder_.options().deletes);
  const bool soft = del.mode == decode::DeleteMode::Soft;
  if (s.unique_key) info.unique = *s.unique_key;
  if (!s.unique_key || soft) {
    auto schema = deps_.doris.schema(t.db, t.table);
    if (!schema) {
      auto* err = &schema.error();
      fail(*err, "schema lookup");
      return std::nullopt;
    }
    const auto& ts = *schema;
    if (!s.unique_key) {
      info.unique = ts.keys_type == "UNIQUE_KEYS";
      log_->info("table {} has key model {}", t.name(), ts.keys_type);
    }
    // Stream Load drops JSON keys the table has no column for: without
    // these columns every soft delete would silently do nothing.
    if (soft)
      for (const std::string* col : {&del.soft_column, &del.deleted_at_column}) {
        if (col->empty()) continue;
        const bool found = std::any_of(ts.columns.begin(), ts.columns.end(),
                                       [&](const doris::ColumnSchema& c) { return ascii_iequals(c.name, *col); });
        if (found) continue;
        ErrorContext ctx;
        ctx.table = t.name();
        fail(Error(Disposition::Fatal,
                   "table " + t.name() + " has no column '" + *col + "', which delete_mode soft writes: add it (" +
                       "ALTER TABLE `" + t.db + "`.`" + t.table + "` ADD COLUMN `" + *col + "` " +
                       (col == &del.soft_column ? "BOOLEAN" : "DATETIME(3)") +
                       ") or let routing.auto_create create the table",
                   ctx),
             "schema lookup");
        return std::nullopt;
      }
  }
  if (info.unique) {
    auto mode = detect_mode(t, s);
    if (!mode) return std::nullopt;
    info.mode = *mode;
    log_->info("table {}: rows of different column sets are loaded in {} mode", t.name(), to_string(info.mode));
  }
  table_info_cache_[t] = info;
  return info;
}

std::optional<LoadMode> Pipeline::Impl::detect_mode(const Target& t, const TableSettings& s) {
  const LoadMode fallback = !s.sequence_col.empty() && s.sequence_from_source_position ? LoadMode::Sequence
                                                                                       : LoadMode::Runs;
  // Doris documents SHOW CREATE TABLE as the place to see the property
  // (data-operate/update/partial-column-update, "flexible partial update").
  auto res = deps_.doris.sql(t.db, "SHOW CREATE TABLE `" + t.db + "`.`" + t.table + "`");
  if (!res) {
    auto* err = &res.error();
    if (err->disposition() == Disposition::Retry) {
      fail(*err, "table properties lookup");
      return std::nullopt;
    }
    // An FE without the HTTP query API or without the statement: no flexible mode.
    log_->warn("table {}: SHOW CREATE TABLE failed ({}); loading partial rows without flexible partial updates",
               t.name(), err->what());
    return fallback;
  }
  const auto& sql = *res;
  std::string ddl;
  for (const auto& row : sql.rows)
    for (const auto& cell : row)
      if (cell && cell->find("CREATE TABLE") != std::string::npos) ddl = *cell;
  std::map<std::string, std::string> props;
  static const std::regex prop(R"re("([^"]+)"\s*=\s*"([^"]*)")re");
  for (auto m = std::sregex_iterator(ddl.begin(), ddl.end(), prop); m != std::sregex_iterator(); ++m)
    props[(*m)[1]] = (*m)[2];
  if (ascii_lower(props["enable_unique_key_skip_bitmap_column"]) != "true") return fallback;
  if (props.count("enable_unique_key_merge_on_write") && ascii_lower(props["enable_unique_key_merge_on_write"]) != "true")
    return fallback;
  // The load cannot name the sequence column in this mode: only the table's
  // own mapping can fill it.
  if (!s.sequence_col.empty() && ascii_lower(props["function_column.sequence_col"]) != ascii_lower(s.sequence_col)) {
    log_->warn("table {}: has flexible partial updates, but its sequence mapping ('{}') is not the configured "
               "sequence_col '{}': not used",
               t.name(), props["function_column.sequence_col"], s.sequence_col);
    return fallback;
  }
  return LoadMode::Flexible;
}

void Pipeline::Impl::append_row(OpenLoad& load, const decode::Row& row, const kafka::Message& msg) {
  if (load.skip) return;  // replay: the part these rows belong to is committed
  load.pending.append(row.json);
  load.pending.push_back('\n');
  load.rows += 1;
  load.bytes += row.json.size() + 1;
  if (load.isolated) {
    keep_row(*load.isolated, load.pending.size(), msg);
    return;
  }
  if (load.pending.size() >= cfg_.write_chunk_bytes) {
    if (auto err = flush_pending(load)) {
      fail(*err, "load");
      return;
    }
    // The stream may have kept the buffer (write_from) and handed back an
    // unsized one: growing it row by row would copy the next chunk again.
    if (load.pending.capacity() < cfg_.write_chunk_bytes)
      load.pending.reserve(cfg_.write_chunk_bytes + cfg_.write_chunk_bytes / 2);
  }
}

std::optional<doris::DorisError> Pipeline::Impl::flush_pending(OpenLoad& load) {
  if (load.pending.empty() || load.isolated) return std::nullopt;
  // Rows already handed to a stream that then fails are gone with it, so a
  // failed stream is never reopened in place: the epoch is aborted and
  // re-read from Kafka. That includes "Label Already Exists" for a txn an
  // earlier run left behind: aborting the epoch aborts by label, which frees
  // the label for the retry.
  auto written = load.stream->write_from(load.pending);
  if (!written) return load_failed(load, std::move(written.error()));
  return std::nullopt;
}

doris::DorisError Pipeline::Impl::load_failed(const OpenLoad& load, doris::DorisError err) {
  auto& ctx = err.context();
  if (ctx.table.empty()) ctx.table = load.target.name();
  if (ctx.label.empty()) ctx.label = load.spec.label;
  note_txn_limit(err, load.target.db);
  const std::string what = err.what();
  deps_.metrics.add_doris_error(doris::to_string(err.kind()));
  deps_.metrics.set_table_error(load.target.name(), what);
  deps_.metrics.load_failed(what);
  deps_.metrics.note_error("load", what);
  return err;
}

void Pipeline::Impl::apply_memory_cap() {
  uint64_t buffered = 0;
  for (const auto& [t, tl] : open_.loads)
    for (const auto& l : tl.loads) buffered += l.pending.size() + (l.stream ? l.stream->buffered_bytes() : 0);
  deps_.metrics.buffered_bytes = buffered;
  if (!paused_ && buffered > cfg_.memory_cap_bytes) {
    if (auto err = deps_.source.pause(deps_.source.assignment())) log_->warn("pause: {}", err->what());
    paused_ = true;
    log_->info("memory cap reached ({} bytes buffered): partitions paused", buffered);
    // The buffers drain when the epoch ends; end it now rather than wait for the timer.
    open_.end_requested = true;
  } else if (paused_ && buffered <= cfg_.memory_cap_bytes / 2) {
    if (auto err = deps_.source.resume(deps_.source.assignment())) log_->warn("resume: {}", err->what());
    paused_ = false;
  }
}

}  // namespace cdc2doris::pipeline
