// Opening the per-table Stream Loads, streaming rows into them, memory cap.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <variant>

#include "core/doris/label.hpp"

namespace cdc2doris::pipeline {

int Pipeline::Impl::open_txns_in_db(const std::string& db) const {
  int n = 0;
  for (const auto& [t, l] : open_.loads)
    if (t.db == db) ++n;
  if (closing_)
    for (const auto& txn : closing_->record.txns)
      if (txn.db == db && !txn.committed) ++n;
  return n;
}

OpenLoad* Pipeline::Impl::load_for(std::map<Target, OpenLoad>& loads, const Target& target, const decode::Row& row,
                                   uint64_t epoch, bool may_end_epoch) {
  auto it = loads.find(target);
  if (it != loads.end()) {
    if (it->second.spec.partial_columns == row.partial_columns || !may_end_epoch) return &it->second;
    // One column set per load: a partial (TOAST) row after full rows, or the
    // reverse, starts a new epoch so Doris applies them in order.
    const uint64_t generation = rewind_generation_;
    end_open_epoch("column set change");
    if (rewind_generation_ != generation || replay_) return nullptr;
    if (closing_) {  // not ended: stopping, past the shutdown deadline
      abort_open_epoch_stopping();
      return nullptr;
    }
    return load_for(open_.loads, target, row, open_.epoch, may_end_epoch);
  }
  if (may_end_epoch && open_txns_in_db(target.db) >= cfg_.open_txn_budget_per_db) {
    const uint64_t generation = rewind_generation_;
    drive_closing(/*block=*/true);
    if (!replay_ && open_txns_in_db(target.db) >= cfg_.open_txn_budget_per_db) {
      end_open_epoch("open-transaction budget");
      drive_closing(/*block=*/true);
    }
    if (rewind_generation_ != generation || replay_) return nullptr;
    if (closing_) {  // not committed: stopping, past the shutdown deadline
      abort_open_epoch_stopping();
      return nullptr;
    }
    if (open_txns_in_db(target.db) >= cfg_.open_txn_budget_per_db) {
      // Nothing of ours is open any more: the budget itself is below one epoch's need.
      failure_ = Error(Disposition::Fatal, "delivery.open_transaction_budget (" +
                                               std::to_string(cfg_.open_txn_budget_per_db) +
                                               ") is too small for one table's load in database " + target.db);
      step(Who::Open, Event::LoadFailedFatal);
    }
    return load_for(open_.loads, target, row, open_.epoch, may_end_epoch);
  }
  TableSettings settings = deps_.router.settings(target);
  auto unique = table_unique_key(target, settings);
  if (!unique) return nullptr;
  OpenLoad load;
  load.target = target;
  load.spec.db = target.db;
  load.spec.table = target.table;
  load.spec.label = doris::make_label(cfg_.label_prefix, target.db, target.table, epoch);
  load.spec.unique_key = *unique;
  load.spec.sequence_col = settings.sequence_col;
  load.spec.partial_columns = row.partial_columns;
  load.spec.headers = settings.headers;
  // No silent NULLs: a value Doris cannot convert fails the load (quoting
  // the ErrorURL lines) instead of becoming NULL. Not for partial-column
  // loads: there Doris before 3.0 reads strict_mode as "no new keys", which
  // a key-only delete of an absent row would hit. An explicit header wins.
  if (row.partial_columns.empty()) load.spec.headers.try_emplace("strict_mode", "true");
  load.stream = deps_.doris.open_load(load.spec);
  return &loads.emplace(target, std::move(load)).first->second;
}

std::optional<bool> Pipeline::Impl::table_unique_key(const Target& t, const TableSettings& s) {
  if (s.unique_key) return *s.unique_key;
  if (auto it = unique_key_cache_.find(t); it != unique_key_cache_.end()) return it->second;
  auto schema = deps_.doris.schema(t.db, t.table);
  if (auto* err = std::get_if<doris::DorisError>(&schema)) {
    fail(*err, "schema lookup");
    return std::nullopt;
  }
  const auto& keys = std::get<doris::TableSchema>(schema).keys_type;
  bool unique = keys == "UNIQUE_KEYS";
  unique_key_cache_[t] = unique;
  log_->info("table {} has key model {}", t.name(), keys);
  return unique;
}

void Pipeline::Impl::append_row(OpenLoad& load, const decode::Row& row) {
  load.pending.append(row.json);
  load.pending.push_back('\n');
  load.rows += 1;
  load.bytes += row.json.size() + 1;
  if (load.pending.size() >= cfg_.write_chunk_bytes) {
    if (auto err = flush_pending(load)) fail(*err, "load");
  }
}

std::optional<doris::DorisError> Pipeline::Impl::flush_pending(OpenLoad& load) {
  if (load.pending.empty()) return std::nullopt;
  // Rows already handed to a stream that then fails are gone with it, so a
  // failed stream is never reopened in place: the epoch is aborted and
  // re-read from Kafka. That includes "Label Already Exists" for a txn an
  // earlier run left behind: aborting the epoch aborts by label, which frees
  // the label for the retry.
  auto err = load.stream->write(load.pending);
  if (err) {
    deps_.metrics.add_doris_error(doris::to_string(err->kind()));
    deps_.metrics.set_table_error(load.target.name(), err->what());
    deps_.metrics.load_failed(err->what());
    deps_.metrics.note_error("load", err->what());
    return err;
  }
  load.pending.clear();
  return std::nullopt;
}

void Pipeline::Impl::apply_memory_cap() {
  uint64_t buffered = 0;
  for (const auto& [t, l] : open_.loads) buffered += l.pending.size() + l.stream->buffered_bytes();
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
