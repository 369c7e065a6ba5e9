// Stream load header phase: checks before the txn begins (Engine::start_load)
// and the load plan built from the headers (LoadImpl::plan).
#include "tools/doris_emulator/load.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace cdc2doris::emu {
using namespace detail;

std::string LoadImpl::plan(const std::map<std::string, std::string>& h) {
  std::string fmt = lower(header(h, "format"));
  if (fmt.empty() || fmt == "csv") fmt_ = Fmt::Csv;
  else if (fmt == "csv_with_names") { fmt_ = Fmt::Csv; skip_lines_ = 1; }
  else if (fmt == "csv_with_names_and_types") { fmt_ = Fmt::Csv; skip_lines_ = 2; }
  else fmt_ = Fmt::Json;
  std::string rjbl = lower(header(h, "read_json_by_line")), soa = lower(header(h, "strip_outer_array"));
  strip_outer_ = soa == "true";
  by_line_ = rjbl == "true" || (rjbl.empty() && soa.empty());
  if (fmt_ == Fmt::Csv) {
    if (has_header(h, "column_separator")) col_sep_ = decode_sep(header(h, "column_separator"));
    if (has_header(h, "line_delimiter")) line_delim_ = decode_sep(header(h, "line_delimiter"));
    if (col_sep_.empty()) col_sep_ = "\t";
    if (line_delim_.empty()) line_delim_ = "\n";
    std::string enc = header(h, "enclose"), esc = header(h, "escape");
    if (enc.size() > 1) return "[INVALID_ARGUMENT]enclose must be single-char, actually is " + enc;
    if (esc.size() > 1) return "[INVALID_ARGUMENT]escape must be single-char, actually is " + esc;
    enclose_ = enc.empty() ? 0 : enc[0];
    escape_ = esc.empty() ? 0 : esc[0];
    trim_dq_ = lower(header(h, "trim_double_quotes")) == "true";
    // csv_with_names[_and_types] skip their 1 or 2 header lines, whatever
    // `skip_lines` says (be/src/vec/exec/format/csv/csv_reader.cpp).
    if (has_header(h, "skip_lines") && skip_lines_ == 0) skip_lines_ = std::atoll(header(h, "skip_lines").c_str());
  } else {
    line_delim_ = "\n";
  }
  std::string strict = lower(header(h, "strict_mode"));
  if (!strict.empty() && strict != "true" && strict != "false")
    return "[INVALID_ARGUMENT]Invalid strict mode format. Must be bool type";
  strict_ = strict == "true";
  std::string tz = has_header(h, "timezone") ? header(h, "timezone") : header(h, "time_zone");
  if (tz.empty() && e_.global_time_zone() != zone_.name) tz = e_.global_time_zone();
  if (!tz.empty()) {
    auto z = find_zone(tz);
    if (!z) return "[ANALYSIS_ERROR]" + kFe + "Unknown or incorrect time zone: '" + tz + "'";
    zone_ = *z;
  }
  if (has_header(h, "max_filter_ratio")) {
    try {
      max_filter_ratio_ = std::stod(header(h, "max_filter_ratio"));
    } catch (const std::exception&) {
      return "[INVALID_ARGUMENT]Invalid max_filter_ratio: " + header(h, "max_filter_ratio");
    }
  }
  // BE StreamLoadAction::_process_put parses it with std::stoi; the texts
  // carry the exception's what() ("stoi").
  if (has_header(h, "send_batch_parallelism")) {
    try {
      (void)std::stoi(header(h, "send_batch_parallelism"));
    } catch (const std::invalid_argument& e) {
      return std::string("[INVALID_ARGUMENT]send_batch_parallelism must be an integer, ") + e.what();
    } catch (const std::out_of_range& e) {
      return std::string("[INVALID_ARGUMENT]send_batch_parallelism out of range, ") + e.what();
    }
  }
  std::string mt = header(h, "merge_type");
  std::string mtu = lower(mt);
  bool has_delete = has_header(h, "delete");
  if (mtu.empty() || mtu == "append") merge_ = Merge::Append;
  else if (mtu == "delete") merge_ = Merge::Delete;
  else if (mtu == "merge") merge_ = Merge::MergeOn;
  else return "[INVALID_ARGUMENT]Invalid merge type " + mt;
  // Partial updates: the BE's checks (stream_load.cpp), in its order.
  std::string ukum = header(h, "unique_key_update_mode");
  if (!ukum.empty()) {
    std::string u = lower(ukum);
    if (u == "update_flexible_columns") {
      if (fmt_ != Fmt::Json)
        return "[INVALID_ARGUMENT]flexible partial update only support json format as input file currently";
      if (lower(header(h, "fuzzy_parse")) == "true")
        return "[INVALID_ARGUMENT]Don't support flexible partial update when 'fuzzy_parse' is enabled";
      for (const char* forbidden : {"columns", "jsonpaths", "hidden_columns", "function_column.sequence_col",
                                    "merge_type", "where", "delete"})
        if (!header(h, forbidden).empty())
          return std::string("[INVALID_ARGUMENT]Don't support flexible partial update when '") + forbidden +
                 "' is specified";
      partial_ = Partial::Flexible;
    } else if (u == "update_fixed_columns") {
      partial_ = Partial::Fixed;
    } else if (u != "upsert") {
      return "[INVALID_ARGUMENT]Invalid unique_key_partial_mode " + ukum +
             ", must be one of 'UPSERT', 'UPDATE_FIXED_COLUMNS' or 'UPDATE_FLEXIBLE_COLUMNS'";
    }
  } else if (lower(header(h, "partial_columns")) == "true") {
    partial_ = Partial::Fixed;
  }
  if (std::string nk = header(h, "partial_update_new_key_behavior"); !nk.empty()) {
    for (auto& c : nk) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (nk != "APPEND" && nk != "ERROR")
      return "[INVALID_ARGUMENT]Invalid partial_update_new_key_behavior " + nk + ", must be one of {'APPEND', 'ERROR'}";
    new_key_error_ = nk == "ERROR";
  }
  // The FE's checks come after the BE's header checks above.
  if (merge_ == Merge::MergeOn && !has_delete)
    return "[ANALYSIS_ERROR]" + kFe + "Excepted DELETE ON clause when merge type is MERGE.";
  if (merge_ != Merge::MergeOn && has_delete)
    return "[ANALYSIS_ERROR]" + kFe + "Not support DELETE ON clause when merge type is not MERGE.";
  if (merge_ != Merge::Append && !unique_)
    return "[ANALYSIS_ERROR]" + kFe + "load by MERGE or DELETE is only supported in unique tables.";
  // FE planner: only merge-on-write UNIQUE tables (every UNIQUE table here);
  // fixed columns without a `columns` list is a plain upsert.
  if (partial_ != Partial::None && (!unique_ || !mow_))
    return "[ANALYSIS_ERROR]" + kFe + "Only unique key merge on write support partial update";
  // FE NereidsStreamLoadPlanner.plan, in its order: the table needs the hidden
  // skip-bitmap column (not added by default: Config.enable_skip_bitmap_column_by_default
  // is false), then light schema change.
  if (partial_ == Partial::Flexible && !skip_bitmap_)
    return "[ANALYSIS_ERROR]" + kFe + "Flexible partial update can only support table with skip bitmap hidden column. "
           "But table " + table_ + " doesn't have it. You can use `ALTER TABLE " + table_ +
           " ENABLE FEATURE \"UPDATE_FLEXIBLE_COLUMNS\";` to add it to the table.";
  if (partial_ == Partial::Flexible && !light_sc_)
    return "[ANALYSIS_ERROR]" + kFe + "Flexible partial update can only support table with light_schema_change enabled. "
           "But table " + table_ + "'s property light_schema_change is false";
  if (partial_ == Partial::Fixed && trim(header(h, "columns")).empty()) partial_ = Partial::None;
  for (const char* unsupported : {"where", "jsonpaths", "json_root"})
    if (has_header(h, unsupported))
      return std::string("[NOT_IMPLEMENTED_ERROR]header '") + unsupported + "' is not supported by the emulator";

  // Sources: the names the data carries, in order (CSV is positional).
  std::string columns = header(h, "columns");
  std::vector<std::pair<std::string, std::string>> mappings;  // target = source
  if (!columns.empty()) {
    std::string_view cs = columns;
    while (!cs.empty()) {
      // split on commas outside parentheses
      int depth = 0;
      size_t i = 0;
      for (; i < cs.size(); ++i) {
        if (cs[i] == '(') ++depth;
        else if (cs[i] == ')') --depth;
        else if (cs[i] == ',' && depth == 0) break;
      }
      std::string item(trim(cs.substr(0, i)));
      cs.remove_prefix(i < cs.size() ? i + 1 : i);
      auto strip = [](std::string s) {
        s = std::string(trim(s));
        if (s.size() >= 2 && s.front() == '`' && s.back() == '`') s = s.substr(1, s.size() - 2);
        return s;
      };
      auto eq = item.find('=');
      if (eq == std::string::npos) {
        src_names_.push_back(strip(item));
      } else {
        std::string target = strip(item.substr(0, eq)), source = strip(item.substr(eq + 1));
        bool ident = !source.empty();
        for (char c : source)
          if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) ident = false;
        if (!ident)
          return "[NOT_IMPLEMENTED_ERROR]column expression '" + item +
                 "' is not supported by the emulator (only col or col=other_col)";
        mappings.emplace_back(target, source);
      }
    }
  } else {
    for (auto& c : cols_) src_names_.push_back(c.name);
    // Flexible rows may carry the delete sign and the hidden sequence column.
    if (partial_ == Partial::Flexible) {
      src_names_.push_back("__DORIS_DELETE_SIGN__");
      if (hidden_seq_) src_names_.push_back("__DORIS_SEQUENCE_COL__");
    }
    std::string hidden = header(h, "hidden_columns");
    std::string_view hs = hidden;
    while (!hs.empty()) {
      auto c = hs.find(',');
      std::string n(trim(hs.substr(0, c)));
      if (!n.empty()) src_names_.push_back(n);
      if (c == std::string_view::npos) break;
      hs.remove_prefix(c + 1);
    }
  }
  col_src_.assign(cols_.size(), -1);
  for (size_t i = 0; i < src_names_.size(); ++i) {
    const std::string& n = src_names_[i];
    if (iequals(n, "__DORIS_DELETE_SIGN__")) del_src_ = static_cast<int>(i);
    else if (iequals(n, "__DORIS_SEQUENCE_COL__")) seq_src_ = static_cast<int>(i);
    else {
      for (size_t c = 0; c < cols_.size(); ++c)
        if (iequals(cols_[c].name, n)) col_src_[c] = static_cast<int>(i);
    }
  }
  auto src_index = [&](const std::string& n) {
    for (size_t i = 0; i < src_names_.size(); ++i)
      if (iequals(src_names_[i], n)) return static_cast<int>(i);
    return -1;
  };
  for (auto& [target, source] : mappings) {
    int s = src_index(source);
    if (s < 0) return "[ANALYSIS_ERROR]" + kFe + "Unknown column '" + source + "' in 'table list'";
    if (iequals(target, "__DORIS_DELETE_SIGN__")) del_src_ = s;
    else if (iequals(target, "__DORIS_SEQUENCE_COL__")) seq_src_ = s;
    else {
      bool found = false;
      for (size_t c = 0; c < cols_.size(); ++c)
        if (iequals(cols_[c].name, target)) { col_src_[c] = s; found = true; }
      if (!found) return "[ANALYSIS_ERROR]" + kFe + "Unknown column '" + target + "' in '" + table_ + "'";
    }
  }
  if (partial_ == Partial::Fixed) {
    if (seq_src_ >= 0)  // only `columns` can have named it at this point
      return "[ANALYSIS_ERROR]" + kFe +
             "Partial update should not include invisible column except delete sign column: __DORIS_SEQUENCE_COL__";
    for (size_t c = 0; c < cols_.size(); ++c)
      if (cols_[c].key && col_src_[c] < 0)
        return "[ANALYSIS_ERROR]" + kFe + "Partial update should include all key columns, missing: " + cols_[c].name;
  }
  if (hidden_seq_) {
    std::string seq_src = header(h, "function_column.sequence_col");
    // A hidden sequence column must be given by plain and fixed partial loads
    // alike (suite test_partial_update_seq_type: "need to specify the sequence
    // column"); flexible rows carry __DORIS_SEQUENCE_COL__ or reuse the stored one.
    if (seq_src.empty() && seq_src_ < 0 && partial_ != Partial::Flexible)
      return "[ANALYSIS_ERROR]" + kFe + "Table " + table_ + " has sequence column, need to specify the sequence column";
    if (!seq_src.empty()) {
      seq_src_ = src_index(seq_src);
      if (seq_src_ < 0) {
        // The sequence source may be a table column the data carries.
        int c = -1;
        for (size_t i = 0; i < cols_.size(); ++i)
          if (iequals(cols_[i].name, seq_src)) c = static_cast<int>(i);
        if (c < 0 || col_src_[static_cast<size_t>(c)] < 0)
          return "[ANALYSIS_ERROR]" + kFe + "Unknown column '" + seq_src + "' in 'table list'";
        seq_src_ = col_src_[static_cast<size_t>(c)];
      }
    }
  }
  // Columns a partial update leaves out come from the stored row (new keys
  // are checked per row in finish()).
  for (size_t c = 0; c < cols_.size() && partial_ == Partial::None; ++c)
    if (col_src_[c] < 0 && !cols_[c].nullable && !cols_[c].def)
      return "[ANALYSIS_ERROR]" + kFe + "Column has no default value. column: " + cols_[c].name;
  if (merge_ == Merge::MergeOn) {
    // Only "<col> = <literal>" predicates are understood.
    std::string pred = header(h, "delete");
    auto eq = pred.find('=');
    if (eq == std::string::npos)
      return "[NOT_IMPLEMENTED_ERROR]delete predicate '" + pred + "' is not supported by the emulator (use col=value)";
    std::string lhs(trim(std::string_view(pred).substr(0, eq))), rhs(trim(std::string_view(pred).substr(eq + 1)));
    if (!lhs.empty() && lhs.back() == '!') { merge_neq_ = true; lhs = std::string(trim(lhs.substr(0, lhs.size() - 1))); }
    if (rhs.size() >= 2 && (rhs.front() == '\'' || rhs.front() == '"')) rhs = rhs.substr(1, rhs.size() - 2);
    merge_src_ = src_index(lhs);
    if (merge_src_ < 0) return "[ANALYSIS_ERROR]" + kFe + "Unknown column '" + lhs + "' in 'table list'";
    merge_value_ = rhs;
  }
  for (auto& c : cols_) {
    std::string p;
    append_json_string(&p, c.name);
    p += ':';
    prefixes_.push_back(std::move(p));
  }
  vals_.resize(src_names_.size());
  present_.resize(src_names_.size());
  return "";
}

void LoadImpl::set_limits(int64_t limit, bool json_whole, bool gz, bool deflate) {
  limit_ = limit;
  json_whole_ = json_whole;
  if (gz || deflate) {
    std::memset(&zs_, 0, sizeof zs_);
    // 16+MAX_WBITS: gzip wrapper; MAX_WBITS: zlib wrapper ("deflate").
    inflateInit2(&zs_, gz ? 16 + MAX_WBITS : MAX_WBITS);
    zs_init_ = true;
  }
}

std::unique_ptr<Load> Engine::start_load(const LoadRequest& req, Reply* early) {
  const auto& h = req.headers;
  ++stats_.loads;
  int64_t t0 = now_ms();
  bool two_pc = header(h, "two_phase_commit") == "true";
  std::string label = header(h, "label");
  if (label.empty()) label = uuid();  // BE StreamLoadAction::_on_header: an empty label is generated
  std::string comment = header(h, "comment");
  auto fail = [&](const std::string& msg) {
    ++stats_.loads_failed;
    *early = fail_reply(label, comment, two_pc, msg);
    return nullptr;
  };
  std::string gc = lower(header(h, "group_commit"));
  if (has_header(h, "group_commit") && gc != "async_mode" && gc != "sync_mode" && gc != "off_mode")
    return fail("[INVALID_ARGUMENT]group_commit can only be [async_mode, sync_mode, off_mode]");
  std::string user, pw;
  if (!parse_basic(req.authorization, &user, &pw)) return fail("[NOT_AUTHORIZED]no valid Basic authorization");
  std::string fmt = lower(header(h, "format"));
  static const std::vector<std::string> known{"", "csv", "json", "csv_with_names", "csv_with_names_and_types",
                                              "parquet", "orc", "arrow", "hive_text"};
  if (std::find(known.begin(), known.end(), fmt) == known.end())
    return fail("[INVALID_ARGUMENT]unknown data format, format=" + header(h, "format"));
  if (fmt == "parquet" || fmt == "orc" || fmt == "arrow" || fmt == "hive_text")
    return fail("[NOT_IMPLEMENTED_ERROR]format " + fmt + " is not supported by the emulator");
  std::string ct = lower(header(h, "compress_type"));
  bool gz = ct == "gz" || ct == "gzip", deflate = ct == "deflate";
  if (!ct.empty() && !gz && !deflate) {
    static const std::vector<std::string> doris_ct{"lzo", "bz2", "lz4", "lzop", "lz4frame", "zstd", "snappy", "plain"};
    if (ct == "plain") gz = false;
    else if (std::find(doris_ct.begin(), doris_ct.end(), ct) != doris_ct.end())
      return fail("[NOT_IMPLEMENTED_ERROR]compress_type " + ct + " is not supported by the emulator");
    else return fail("[INVALID_ARGUMENT]unknown compress type, compress_type=" + header(h, "compress_type"));
  }
  if (req.content_length && req.chunked)
    return fail("[INVALID_ARGUMENT]please do not set both content_length and transfer-encoding");
  if (!req.content_length && !req.chunked)
    return fail(
        "[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set content_length or "
        "transfer-encoding=chunked");
  std::string rjbl = lower(header(h, "read_json_by_line")), soa = lower(header(h, "strip_outer_array"));
  bool json_whole = fmt == "json" && !(rjbl == "true" || (rjbl.empty() && soa.empty()));
  int64_t limit = (json_whole ? cfg_.streaming_load_json_max_mb : cfg_.streaming_load_max_mb) * 1024 * 1024;
  if (req.content_length && *req.content_length > limit)
    return fail(std::string(json_whole ? "[EXCEEDED_LIMIT]json body size " : "[EXCEEDED_LIMIT]body size ") +
                std::to_string(*req.content_length) + " exceeds the limit " + std::to_string(limit));
  int64_t timeout_s = cfg_.default_load_timeout_s;
  if (has_header(h, "timeout")) {
    try {
      size_t used = 0;
      timeout_s = std::stoll(header(h, "timeout"), &used);
      if (used != header(h, "timeout").size()) throw std::invalid_argument("trailing characters");
    } catch (const std::exception& e) {
      return fail("[INVALID_ARGUMENT]Invalid timeout format, " + std::string(e.what()));
    }
  }
  if (has_header(h, "partitions") && has_header(h, "temporary_partitions"))
    return fail("[INVALID_ARGUMENT]Can not specify both partitions and temporary partitions");
  if (auto f = take_fault("fail_load_header", req.db, req.table, req.be); f) {
    ++stats_.loads_failed;
    LoadReply r;
    r.label = label;
    r.comment = comment;
    r.two_pc = two_pc;
    r.status = f->status;
    r.message = f->message;
    *early = Reply{r.render(), true};
    return nullptr;
  }
  // --- begin txn on the "FE" ---
  auto it = cfg_.users.find(user);
  if (it == cfg_.users.end() || it->second != pw) return fail("[ANALYSIS_ERROR]" + kFe + denied_text(req.authorization));
  // fe FrontendServiceImpl.loadTxnBegin -> checkPasswordAndPrivs(LOAD), before
  // the database is looked up.
  if (!has_priv(user, req.db, req.table, kLoadPriv)) return fail("[ANALYSIS_ERROR]" + kFe + kLoadDenied);
  Database* db = find_db(req.db);
  if (!db) return fail("[NOT_FOUND]TStatus: errCode = 7, detailMessage = unknown database, database=" + req.db);
  auto tit = db->tables.find(req.table);
  if (tit == db->tables.end())
    return fail("[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=" + req.table);
  Table& tb = *tit->second;
  if (!label_ok(label))
    return fail("[ANALYSIS_ERROR]" + kFe + "Label format error. regex: ^[-_A-Za-z0-9:]{1,128}$, label: " + label);
  if (auto lit = db->labels.find(label); lit != db->labels.end()) {
    for (int64_t id : lit->second) {
      Txn* t = find_txn(id);
      if (!t || t->state == TxnState::Aborted) continue;
      ++stats_.loads_failed;
      LoadReply r;
      r.label = label;
      r.comment = comment;
      r.two_pc = two_pc;
      r.status = "Label Already Exists";
      r.existing = t->state == TxnState::Prepare ? "RUNNING"
                   : t->state == TxnState::Precommitted ? "PRECOMMITTED" : "FINISHED";
      r.message = "[LABEL_ALREADY_EXISTS]" + kFe + "Label [" + label + "] has already been used, relate to txn [" +
                  std::to_string(id) + "]";
      *early = Reply{r.render(), true};
      return nullptr;
    }
  }
  int64_t running = running_txns(*db);
  if (take_fault("running_txn_limit", req.db, req.table, req.be) || running >= cfg_.max_running_txns)
    return fail("[ANALYSIS_ERROR]" + kFe + "current running txns on db " + std::to_string(db->id) + " is " +
                std::to_string(running) + ", larger than limit " + std::to_string(cfg_.max_running_txns));
  Txn txn;
  txn.id = next_txn_id_++;
  txn.db = req.db;
  txn.table = req.table;
  txn.table_id = tb.id;
  txn.label = label;
  txn.two_pc = two_pc;
  txn.begin_ms = now_ms();
  txn.timeout_s = timeout_s;
  txn.be = req.be;
  txn.schema_version = tb.schema_version;
  {
    std::string r = "B";
    put_i64(&r, txn.id);
    put_s(&r, txn.db);
    put_s(&r, txn.table);
    put_s(&r, txn.label);
    put_i64(&r, txn.table_id);
    put_i64(&r, txn.two_pc ? 1 : 0);
    put_i64(&r, txn.begin_ms);
    put_i64(&r, txn.timeout_s);
    put_i64(&r, txn.be);
    wal_write(r, false);
  }
  db->labels[label].push_back(txn.id);
  live_txns_.insert(txn.id);
  Txn& t = txns_[txn.id] = std::move(txn);
  LoadReply base;
  base.txn_id = t.id;
  base.label = label;
  base.comment = comment;
  base.two_pc = two_pc;
  base.begin_ms = now_ms() - t0;
  auto load = std::make_unique<LoadImpl>(*this, t, tb, base);
  std::string err = load->plan(h);
  if (!err.empty()) {
    abort_txn(t, err);
    ++stats_.loads_failed;
    base.message = err;
    *early = Reply{base.render(), true};
    return nullptr;
  }
  load->set_limits(limit, json_whole, gz, deflate);
  return load;
}

}  // namespace cdc2doris::emu
