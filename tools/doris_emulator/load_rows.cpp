// Stream load rows: each decoded row converted to the table's canonical row
// line (values.cpp) and staged; the final reply and the txn state change.
#include "tools/doris_emulator/load.hpp"

#include <absl/time/clock.h>
#include <absl/time/time.h>


namespace cdc2doris::emu {
using namespace detail;

Reply LoadImpl::finish() {
  int64_t read_done = now_ms();
  if (!failed_ && zs_init_ && received_ > 0 && !zdone_) {
    fail_ = "[INTERNAL_ERROR]failed to decompress gzip data: truncated stream";
    failed_ = true;
  }
  if (!failed_) {
    if (json_whole_) process_whole_json();
    else if (!pending_.empty()) {
      process_line(pending_);
      pending_.clear();
    }
  }
  if (!failed_ && partial_ != Partial::None && !count_only_)
    if (auto* d = e_.find_db(db_))
      for (auto& [n, tab] : d->tables)
        if (tab->id == table_id_) check_new_keys(*tab);
  auto& st = e_.stats();
  st.bytes += received_;
  reply_.bytes = received_;
  reply_.total = loaded_ + filtered_;
  reply_.filtered = filtered_;
  reply_.loaded = loaded_;
  reply_.read_ms = read_done - start_ms_;
  reply_.receive_ms = read_done - start_ms_;
  if (!errlog_.empty()) reply_.error_url = e_.add_error_log(errlog_, be_);
  Txn* t = e_.find_txn(txn_id_);
  auto fail = [&](const std::string& msg, const std::string& status = "Fail") {
    reply_.status = status;
    reply_.message = msg;
    reply_.loaded = 0;
    if (t && t->state == TxnState::Prepare) e_.abort_txn(*t, msg);
    ++st.loads_failed;
    reply_.load_ms = now_ms() - start_ms_;
    return Reply{reply_.render(), true};
  };
  if (!t || t->state != TxnState::Prepare) {
    std::string why = !t ? "transaction [" + std::to_string(txn_id_) + "] not found"
                         : "transaction [" + std::to_string(txn_id_) + "] is already aborted. abort reason: " +
                               t->abort_reason;
    return fail("[ANALYSIS_ERROR]" + kFe + why);
  }
  if (failed_) return fail(fail_);
  if (auto f = e_.take_fault("fail_load", db_, table_, be_); f) return fail(f->message, f->status);
  if (auto f = e_.take_fault("too_many_versions", db_, table_, be_); f)
    return fail("[E-235]failed to init rowset builder. version count: 2001, exceed limit: 2000, tablet: " +
                std::to_string(table_id_ * 10 + 1) +
                ". Please reduce the frequency of loading data or adjust the max_tablet_version_num or "
                "time_series_max_tablet_version_num in be.conf to a larger value.");
  // Too many filtered rows. Rows the reader filtered fail with
  // DATA_QUALITY_ERROR; when only the new keys a strict partial update drops
  // at write time exceed the ratio, the writer's INTERNAL_ERROR is what the
  // client sees (suite test_partial_update_strict_mode). NumberLoadedRows is 0
  // either way (stream_load_executor.cpp resets it on a failed fragment).
  auto too_many = [&](int64_t f) {
    return f > 0 && static_cast<double>(f) / static_cast<double>(filtered_ + loaded_) > max_filter_ratio_ + 1e-12;
  };
  if (too_many(filtered_ - writer_filtered_)) return fail("[DATA_QUALITY_ERROR]too many filtered rows");
  if (too_many(filtered_)) return fail("[INTERNAL_ERROR]too many filtered rows");
  Table* tb = nullptr;
  if (auto* d = e_.find_db(db_))
    for (auto& [n, tab] : d->tables)
      if (tab->id == table_id_) tb = tab.get();
  if (!tb) return fail("[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=" + table_);
  if (tb->schema_version != schema_version_) e_.migrate_rows(*tb, cols_, rows_);
  t->rows = std::move(rows_);
  t->row_count = loaded_;
  t->loaded = loaded_;
  t->filtered = filtered_;
  t->bytes = received_;
  t->schema_version = tb->schema_version;
  int64_t write_done = now_ms();
  reply_.write_ms = write_done - read_done;
  bool publish_timeout = false;
  int64_t visible_after = 0;
  if (!t->two_pc) {
    if (auto f = e_.take_fault("publish_timeout", db_, table_, be_); f) {
      publish_timeout = true;
      visible_after = f->visible_after_ms;
    }
  }
  e_.precommit_or_commit(*t, publish_timeout, visible_after);
  reply_.commit_ms = t->two_pc ? 0 : now_ms() - write_done;
  ++st.loads_ok;
  st.rows += loaded_;
  if (publish_timeout) {
    reply_.status = "Publish Timeout";
    reply_.message = "[PUBLISH_TIMEOUT]TStatus: transaction commit successfully, BUT data will be visible later";
  } else {
    reply_.status = "Success";
    reply_.message = "OK";
  }
  reply_.load_ms = now_ms() - start_ms_;
  return Reply{reply_.render(), false};
}

namespace {

// Now as DATETIME text in the load's zone (a zone name, else its fixed offset).
std::string current_time_text(const LoadZone& z) {
  absl::TimeZone tz;
  if (!absl::LoadTimeZone(z.name, &tz)) tz = absl::FixedTimeZone(static_cast<int>(-z.epoch_civil_s));
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::Now(), tz);
}

}  // namespace

void LoadImpl::build_row(std::string_view src) {
  StagedRow r;
  std::string& line = r.line;
  line.reserve(src.size() + 16);
  line.push_back('{');
  std::string why, now_text;
  for (size_t c = 0; c < cols_.size(); ++c) {
    const Column& col = cols_[c];
    int si = col_src_[c];
    if (partial_ != Partial::None) {
      // Fixed: the columns named in `columns`; flexible: the keys this row has.
      bool given = si >= 0 && (partial_ == Partial::Fixed || present_[static_cast<size_t>(si)]);
      if (!given) {
        if (col.key) {
          filter("column_name[" + col.name + "], key column missing in a flexible partial update row", src);
          return;
        }
        if (static_cast<int>(c) == seq_col_) r.seq_missing = true;
        continue;
      }
    }
    if (line.size() > 1) line.push_back(',');
    line += prefixes_[c];
    std::string* kp = (unique_ && col.key) ? &r.key : (static_cast<int>(c) == seq_col_ ? &r.seq : nullptr);
    InValue dv;
    const InValue* v = (si >= 0 && present_[static_cast<size_t>(si)]) ? &vals_[static_cast<size_t>(si)] : nullptr;
    if (!v) {
      if (col.def_now) {
        // DEFAULT CURRENT_TIMESTAMP / CURRENT_DATE: the time of the load in
        // the load's time zone (the FE plans now() with the session zone).
        now_text = current_time_text(zone_);
        dv.tag = InValue::Str;
        dv.text = now_text;
        v = &dv;
      } else if (col.def && *col.def != "null") {
        dv.tag = col.def->front() == '"' ? InValue::Str : InValue::Num;
        dv.text = dv.tag == InValue::Str ? std::string_view(*col.def).substr(1, col.def->size() - 2)
                                         : std::string_view(*col.def);
        v = &dv;
      } else {
        dv.tag = InValue::Null;
        v = &dv;
      }
    }
    if (v->tag == InValue::Null) {
      if (!col.nullable) {
        // Doris validates this in its tablet sink, which writes an empty
        // src line (vtablet_block_convertor.cpp, _internal_validate_column).
        filter("column_name[" + col.name + "], null value for not null column", "");
        return;
      }
      line += "null";
      if (kp) encode_null(kp);
      continue;
    }
    size_t mark = line.size(), kmark = kp ? kp->size() : 0;
    if (kp) encode_not_null(kp);
    why.clear();
    if (!convert(col.type, *v, &line, kp, &why, &zone_)) {
      line.resize(mark);
      if (kp) kp->resize(kmark);
      bool too_long = why.rfind("the length", 0) == 0;
      if (too_long) {  // the tablet sink's check, as above
        filter("column_name[" + col.name + "], " + why, "");
        return;
      }
      if (strict_ || !col.nullable) {
        filter("column_name[" + col.name + "], the value is incorrect: " + why + ", src value is " +
                   std::string(v->text.substr(0, 256)),
               src);
        return;
      }
      line += "null";
      if (kp) encode_null(kp);
    }
  }
  line.push_back('}');
  if (hidden_seq_) {
    const InValue* v = seq_src_ >= 0 && present_[static_cast<size_t>(seq_src_)] ? &vals_[static_cast<size_t>(seq_src_)] : nullptr;
    if (partial_ != Partial::None && (seq_src_ < 0 || (partial_ == Partial::Flexible && !v))) r.seq_missing = true;
    else if (!v || v->tag == InValue::Null) encode_null(&r.seq);
    else {
      std::string scratch;
      encode_not_null(&r.seq);
      if (!convert(*hidden_seq_, *v, &scratch, &r.seq, &why, &zone_)) {
        filter("column_name[__DORIS_SEQUENCE_COL__], the value is incorrect: " + why, src);
        return;
      }
    }
  }
  if (merge_ == Merge::Delete) r.del = true;
  else if (merge_ == Merge::MergeOn) {
    const InValue& mv = vals_[static_cast<size_t>(merge_src_)];
    bool eq = present_[static_cast<size_t>(merge_src_)] && mv.tag != InValue::Null &&
              (mv.tag == InValue::Bool ? (mv.b ? "true" : "false") == merge_value_ : mv.text == merge_value_);
    r.del = merge_neq_ ? !eq : eq;
  } else if (del_src_ >= 0 && present_[static_cast<size_t>(del_src_)]) {
    const InValue& dv = vals_[static_cast<size_t>(del_src_)];
    if (dv.tag == InValue::Bool) r.del = dv.b;
    else if (dv.tag != InValue::Null) {
      std::string_view t = trim(dv.text);
      if (t == "1" || iequals(t, "true")) r.del = true;
      else if (t == "0" || iequals(t, "false") || t.empty()) r.del = false;
      else {
        filter("column_name[__DORIS_DELETE_SIGN__], the value is incorrect, src value is " + std::string(t), src);
        return;
      }
    }
  }
  r.partial = partial_ != Partial::None;
  ++loaded_;
  rows_.push_back(std::move(r));
}

}  // namespace cdc2doris::emu
