// Source TRUNCATE (Debezium `op: "t"`), applied like a DDL between epochs
// (docs/schema-evolution.md, "TRUNCATE"): the rows read before it commit
// first, it is recorded, run (TRUNCATE TABLE) and marked done through the
// DDL machinery of table_ddl.cpp, and the rows after it load after it. A restart
// or a replay that reads it again does not run it twice: the table's DDL
// record names the newest truncate applied. Rows of the table that other
// partitions deliver later but that precede it in source order are dropped.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <charconv>

#include "core/schema/types.hpp"

namespace cdc2doris::pipeline {

namespace {

std::string position_of(const kafka::Message& msg) {
  return kafka::to_string(TopicPartition{std::string(msg.topic), msg.partition}) + "@" + std::to_string(msg.offset);
}

// "topic[partition]@offset" (kafka::to_string plus the offset) back into its parts.
bool parse_position(const std::string& at, TopicPartition& tp, int64_t& offset) {
  const auto amp = at.rfind('@');
  if (amp == std::string::npos || amp < 3 || at[amp - 1] != ']') return false;
  const auto lb = at.rfind('[', amp);
  if (lb == std::string::npos) return false;
  int32_t partition = 0;
  auto p = std::from_chars(at.data() + lb + 1, at.data() + amp - 1, partition);
  if (p.ec != std::errc() || p.ptr != at.data() + amp - 1) return false;
  auto o = std::from_chars(at.data() + amp + 1, at.data() + at.size(), offset);
  if (o.ec != std::errc() || o.ptr != at.data() + at.size()) return false;
  tp = TopicPartition{at.substr(0, lb), partition};
  return true;
}

bool same_tp(const TopicPartition& tp, const kafka::Message& msg) {
  return tp.partition == msg.partition && tp.topic == msg.topic;
}

}  // namespace

std::optional<TruncatePolicy> Pipeline::Impl::truncate_policy(const Target& t, TableDdl& td) {
  if (td.settings.truncate) return *td.settings.truncate;
  // The default follows the key model: a UNIQUE KEY table mirrors the
  // source's current rows, so it empties with it; a DUPLICATE (or AGGREGATE)
  // KEY table is a history of changes, which a TRUNCATE does not undo.
  std::optional<bool> unique = td.settings.unique_key;
  if (!unique)
    if (auto it = table_info_cache_.find(t); it != table_info_cache_.end()) unique = it->second.unique;
  if (!unique) {
    auto schema = deps_.doris.schema(t.db, t.table);
    if (!schema) {
      auto& err = schema.error();
      // No table: nothing to empty (the rows after it create it, if auto_create).
      if (err.kind() == doris::ErrorKind::UnknownTable) return TruncatePolicy::Ignore;
      fail(err, "schema lookup");
      return std::nullopt;
    }
    unique = schema->keys_type == "UNIQUE_KEYS";
  }
  return *unique ? TruncatePolicy::Apply : TruncatePolicy::Ignore;
}

void Pipeline::Impl::handle_truncate(const kafka::Message& msg, const Target& t) {
  TableDdl& td = table_ddl(t);
  const std::string at = position_of(msg);
  const std::optional<int64_t> seq = change_.position.sequence();

  // Read again after it ran: a restart re-reads the epoch the truncate
  // opened, a partition that lagged delivers an older one, the connector
  // re-sends it after its own restart (Debezium is at least once; the copy
  // may land on another partition or further on the same). The source
  // position decides; without one, the Kafka position on its partition.
  if (!td.truncate_at.empty()) {
    TopicPartition tp{"", -1};
    int64_t offset = -1;
    const bool parsed = parse_position(td.truncate_at, tp, offset);
    if (seq && td.truncate_seq ? *seq <= *td.truncate_seq : parsed && same_tp(tp, msg) && msg.offset <= offset) {
      deps_.metrics.add_truncate(t.name(), "already_applied");
      log_->info("table {}: TRUNCATE at {} is not run again: the truncate at {} was applied and is not before it",
                 t.name(), at, td.truncate_at);
      return;
    }
  }

  const auto policy = truncate_policy(t, td);
  if (!policy) return;  // rewound; the record is read again
  if (*policy == TruncatePolicy::Ignore) {
    deps_.metrics.add_truncate(t.name(), "ignored");
    deps_.metrics.add_skipped(SkipReason::Truncate);
    log_->warn("table {}: source TRUNCATE at {} ignored (truncate: ignore{}); the table keeps its rows", t.name(), at,
               td.settings.truncate ? "" : ", the default for a table that is not UNIQUE KEY or does not exist");
    return;
  }
  if (*policy == TruncatePolicy::Fail) {
    deps_.metrics.add_truncate(t.name(), "failed");
    ErrorContext ctx;
    ctx.table = t.name();
    ctx.topic = std::string(msg.topic);
    ctx.partition = msg.partition;
    ctx.offset = msg.offset;
    const std::string text = "table " + t.name() + ": source TRUNCATE at " + at +
                             " and the table's truncate policy is fail (nothing from this record on is committed; "
                             "set routing.tables." + t.name() + ".truncate to apply or ignore)";
    failure_ = Error(Disposition::Fatal, text, ctx);
    log_->error("{}", text);
    step(Who::Open, Event::LoadFailedFatal);
    return;
  }

  // Rows of the table that follow the truncate in source order, already in
  // the open epoch (another partition was ahead): committing them before
  // the truncate would lose them. The epoch is aborted and re-read after it
  // instead, its rows before the truncate dropped (truncated_before).
  if (seq)
    if (auto it = open_.loads.find(t); it != open_.loads.end()) {
      std::optional<int64_t> newest;
      for (const auto& l : it->second.loads)
        if (l.newest_seq && (!newest || *l.newest_seq > *newest)) newest = l.newest_seq;
      if (newest && *newest > *seq) {
        log_->info("table {}: TRUNCATE at {} (source position {}) precedes rows of the table epoch {} already holds "
                   "(up to {}): the epoch is aborted and read again after the truncate",
                   t.name(), at, *seq, open_.epoch, *newest);
        abort_open_epoch_for_replay();
        rewind("truncate");
      }
    }

  // Beyond the open epoch nothing can be undone: rows after the truncate
  // that an earlier epoch committed (a partition ahead by more than an
  // epoch) are emptied with the rest. Said loudly, counted (documented).
  std::optional<int64_t> committed;  // the epoch still committing commits before it too
  if (auto it = committed_newest_seq_.find(t); it != committed_newest_seq_.end()) committed = it->second;
  if (closing_)
    if (auto it = closing_->newest_seq.find(t); it != closing_->newest_seq.end())
      committed = std::max(committed.value_or(it->second), it->second);
  if (seq && committed && *committed > *seq) {
    deps_.metrics.add_truncate(t.name(), "emptied_later_rows");
    const std::string text = "table " + t.name() + ": TRUNCATE at " + at + " (source position " +
                             std::to_string(*seq) + ") follows rows of the table committed in an earlier epoch "
                             "from another partition (up to position " + std::to_string(*committed) +
                             "): those rows are emptied by it and missing until they change again";
    log_->error("{}", text);
    deps_.metrics.set_table_error(t.name(), text);
  }

  state::DdlStep st;
  st.kind = kTruncateTable;
  st.arg = at;
  st.statement = "TRUNCATE TABLE " + schema::quote_ident(t.db) + "." + schema::quote_ident(t.table);
  const TruncateMark mark{seq, at};
  run_ddl(t, td, {std::move(st)}, &msg, &mark);
}

void Pipeline::Impl::note_truncate(const Target& t, TableDdl& td, const state::DdlRecord& rec) {
  td.truncate_seq = rec.truncate_seq;
  td.truncate_at = rec.truncate_at;
  if (rec.truncate_at.empty()) return;
  TruncateFilter f;
  if (!parse_position(rec.truncate_at, f.tp, f.offset)) return;
  f.seq = rec.truncate_seq;
  auto& cur = truncate_filters_[t];
  if (cur.tp == f.tp && cur.offset == f.offset) return;  // the same truncate (a later DDL carried it)
  cur = std::move(f);
}

bool Pipeline::Impl::truncated_before(const Target& t, const kafka::Message& msg) {
  auto it = truncate_filters_.find(t);
  if (it == truncate_filters_.end()) return false;
  TruncateFilter& f = it->second;
  // The truncate's own partition is in source order: before it in the log
  // is before it (read again after an abort that ran the truncate first).
  if (same_tp(f.tp, msg)) return msg.offset < f.offset;
  if (!f.seq) return false;  // no source position to order partitions by (documented)
  TopicPartition tp{std::string(msg.topic), msg.partition};
  auto passed = f.passed.find(tp);
  if (passed != f.passed.end() && msg.offset >= passed->second) return false;
  const auto seq = change_.position.sequence();
  if (!seq) return false;
  if (*seq < *f.seq) return true;
  // A partition is in source order too: from its first row after the
  // truncate on, nothing of it precedes the truncate.
  if (passed == f.passed.end() || msg.offset < passed->second) f.passed[tp] = msg.offset;
  return false;
}

}  // namespace cdc2doris::pipeline
