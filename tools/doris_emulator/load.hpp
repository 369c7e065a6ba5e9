#pragma once
// One stream load after its header phase (not a public header): the plan
// built from the load headers (load_plan.cpp), the body decoders for
// CSV/JSON (load_body.cpp), row building and the final reply
// (load_rows.cpp), new-key checks of partial updates (partial_update.cpp).
//
// The simdjson parser is a member, so every file including this one must be
// compiled with the same -march (see CMakeLists.txt): simdjson's ondemand
// types differ per target architecture.
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/engine_internal.hpp"

#include <simdjson.h>
#include <zlib.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cdc2doris::emu {

class LoadImpl : public Load {
 public:
  LoadImpl(Engine& e, Txn& txn, const Table& tb, detail::LoadReply base) : e_(e), reply_(std::move(base)) {
    txn_id_ = txn.id;
    table_id_ = tb.id;
    db_ = tb.db;
    table_ = tb.name;
    cols_ = tb.cols;
    schema_version_ = tb.schema_version;
    unique_ = tb.model == Model::Unique;
    seq_col_ = tb.seq_col;
    hidden_seq_ = tb.hidden_seq;
    for (const auto& [k, v] : tb.props)
      if (k == "enable_unique_key_skip_bitmap_column") skip_bitmap_ = detail::lower(v) == "true";
      else if (k == "enable_unique_key_merge_on_write") mow_ = detail::lower(v) != "false";
      else if (k == "light_schema_change") light_sc_ = detail::lower(v) != "false";
    count_only_ = e.config().count_only;
    be_ = txn.be;
    start_ms_ = now_ms();
  }
  ~LoadImpl() override {
    if (zs_init_) inflateEnd(&zs_);
  }

  // Plan from headers; returns an error message (full "[CODE]..." text) or "".
  std::string plan(const std::map<std::string, std::string>& h);
  void set_limits(int64_t limit, bool json_whole, bool gz, bool deflate);
  bool feed(const char* data, size_t n) override;
  void cancel(const std::string& reason) override;
  int64_t txn_id() const override { return txn_id_; }
  int64_t received() const override { return received_; }
  Reply finish() override;

 private:
  enum class Fmt { Csv, Json };
  enum class Merge { Append, Delete, MergeOn };

  void consume(const char* data, size_t n);
  // readable_end: how far past the line the caller's buffer may be read;
  // lines with SIMDJSON_PADDING bytes behind them are parsed in place.
  void process_line(std::string_view line, const char* readable_end = nullptr);
  void consume_enclosed(const char* data, size_t n);
  void process_whole_json();
  void filter(std::string_view reason, std::string_view src);
  void parse_json_text(std::string_view text, const char* readable_end = nullptr);
  // Returns false when the JSON itself is broken (caller stops the line).
  bool read_object(simdjson::ondemand::object& obj, std::string_view text);
  void parse_csv(std::string_view line);
  void build_row(std::string_view src);
  // Partial update rows whose key the table does not have (nor an earlier row
  // of this load): ERROR fails the load; APPEND needs a value for every
  // NOT NULL column without a default that the row leaves out.
  void check_new_keys(const Table& tb);

  Engine& e_;
  detail::LoadReply reply_;
  int64_t txn_id_ = 0, table_id_ = 0;
  std::string db_, table_;
  std::vector<Column> cols_;
  uint64_t schema_version_ = 0;
  bool unique_ = false;
  bool skip_bitmap_ = false;  // "enable_unique_key_skip_bitmap_column" = "true"
  // FE PropertyAnalyzer: merge-on-write and light schema change default to true
  // for new tables (Doris 2.1+); only an explicit "false" turns them off.
  bool mow_ = true, light_sc_ = true;
  int seq_col_ = -1;
  std::optional<ColType> hidden_seq_;
  bool count_only_ = false;
  int be_ = 0;
  int64_t start_ms_ = 0;

  Fmt fmt_ = Fmt::Csv;
  bool by_line_ = true, strip_outer_ = false, json_whole_ = false;
  std::string col_sep_ = "\t", line_delim_ = "\n";
  char enclose_ = 0, escape_ = 0;
  bool trim_dq_ = false;
  int64_t skip_lines_ = 0;
  bool strict_ = false;
  LoadZone zone_;  // header `timezone` (or `time_zone`)
  double max_filter_ratio_ = 0;
  Merge merge_ = Merge::Append;
  enum class Partial { None, Fixed, Flexible } partial_ = Partial::None;
  bool new_key_error_ = false;  // partial_update_new_key_behavior: ERROR
  int merge_src_ = -1;
  std::string merge_value_;
  bool merge_neq_ = false;

  std::vector<std::string> src_names_;
  std::vector<int> col_src_;
  int del_src_ = -1, seq_src_ = -1;
  std::vector<std::string> prefixes_;
  std::vector<InValue> vals_;
  std::vector<char> present_;
  size_t next_src_ = 0;
  std::vector<std::pair<size_t, bool>> fields_;
  std::vector<std::string> csv_store_;

  int64_t limit_ = INT64_MAX;
  z_stream zs_{};
  bool zs_init_ = false, zdone_ = false;
  std::string zbuf_;
  int64_t received_ = 0;
  std::string pending_, linebuf_;
  simdjson::ondemand::parser parser_;
  std::vector<StagedRow> rows_;
  int64_t loaded_ = 0, filtered_ = 0;
  int64_t writer_filtered_ = 0;  // of filtered_: new keys a strict partial update drops at write time
  std::string errlog_;
  int64_t errlog_lines_ = 0;
  bool failed_ = false;
  std::string fail_;
};

}  // namespace cdc2doris::emu
