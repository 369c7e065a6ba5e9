// Partial-column updates: splitting a stored row line into columns, merging a
// partial row over the stored one, and the new-key checks of a partial load.
#include "tools/doris_emulator/load.hpp"

#include <unordered_set>

namespace cdc2doris::emu {
using namespace detail;

std::vector<std::pair<std::string_view, std::string_view>> split_row_line(std::string_view l) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  auto skip_string = [&](size_t i) {  // l[i] == '"'; returns the index after the closing quote
    for (++i; i < l.size() && l[i] != '"'; ++i)
      if (l[i] == '\\') ++i;
    return std::min(i + 1, l.size());
  };
  size_t p = 1;
  while (p < l.size() && l[p] == '"') {
    size_t name_end = skip_string(p);
    std::string_view name = l.substr(p, name_end - p);
    size_t v = name_end + 1, e = v;  // past ':'
    if (e < l.size() && l[e] == '"') {
      e = skip_string(e);
    } else if (e < l.size() && (l[e] == '{' || l[e] == '[')) {
      int depth = 0;
      for (; e < l.size(); ++e) {
        if (l[e] == '"') { e = skip_string(e) - 1; continue; }
        if (l[e] == '{' || l[e] == '[') ++depth;
        else if ((l[e] == '}' || l[e] == ']') && --depth == 0) { ++e; break; }
      }
    } else {
      while (e < l.size() && l[e] != ',' && l[e] != '}') ++e;
    }
    out.emplace_back(name, l.substr(v, e - v));
    p = e + 1;  // past ',' (or the final '}')
  }
  return out;
}

// What a column the row leaves out gets when there is no stored row to take it
// from: its DEFAULT, else NULL, else - a NOT NULL column without default, which
// only happens for a key deleted earlier in the same flexible load - the type's
// own default value (be/src/olap/partial_update_info.cpp: the missing columns'
// default_values are empty for such a column and the column inserts its
// type default, e.g. 0 or "").
static std::string missing_token(const Column& col) {
  if (col.def) return *col.def;
  if (col.nullable) return "null";
  std::string out, why;
  const bool text = col.type.kind == Kind::Char || col.type.kind == Kind::Varchar || col.type.kind == Kind::String;
  const char* zero = text ? "" : col.type.kind == Kind::Date ? "0000-01-01"
                     : col.type.kind == Kind::DateTime ? "0000-01-01 00:00:00"
                     : col.type.kind == Kind::Json ? "null" : col.type.kind == Kind::Array ? "[]" : "0";
  InValue v{InValue::Str, zero, false};
  if (!convert(col.type, v, &out, nullptr, &why)) return "null";
  return out;
}

std::string Engine::merge_partial_line(const Table& tb, const std::string* stored, const std::string& partial) {
  auto given = split_row_line(partial);
  std::vector<std::pair<std::string_view, std::string_view>> old;
  if (stored) old = split_row_line(*stored);
  std::string out = "{", qname;
  for (size_t c = 0; c < tb.cols.size(); ++c) {
    const Column& col = tb.cols[c];
    qname.clear();
    append_json_string(&qname, col.name);
    if (c) out += ',';
    out += qname;
    out += ':';
    auto find = [&](const auto& parts) -> const std::string_view* {
      for (auto& [n, v] : parts)
        if (n == qname) return &v;
      return nullptr;
    };
    if (auto* v = find(given)) out += *v;
    else if (auto* o = find(old)) out += *o;
    else out += missing_token(col);
  }
  return out + "}";
}

std::string Engine::with_column_of(const Table& tb, int col, const std::string& from, const std::string& line) {
  std::string q;
  append_json_string(&q, tb.cols[static_cast<size_t>(col)].name);
  for (auto& [n, tok] : split_row_line(from)) {
    if (n != q) continue;
    std::string out = line.substr(0, line.size() - 1);  // without '}'
    if (out.size() > 1) out += ',';
    out += q;
    out += ':';
    out += tok;
    return out + "}";
  }
  return line;
}

std::string Engine::seq_of_line(const Table& tb, const std::string& line) {
  std::string key;
  if (tb.seq_col < 0) {
    encode_null(&key);  // hidden sequence column: NULL
    return key;
  }
  const Column& col = tb.cols[static_cast<size_t>(tb.seq_col)];
  std::string q;
  append_json_string(&q, col.name);
  for (auto& [n, tok] : split_row_line(line)) {
    if (n != q) continue;
    std::string out, why;
    InValue v{tok.front() == '"' ? InValue::Str : InValue::Num,
              tok.front() == '"' ? tok.substr(1, tok.size() - 2) : tok, false};
    if (tok == "null") break;
    encode_not_null(&key);
    if (convert(col.type, v, &out, &key, &why)) return key;
    key.clear();
    break;
  }
  encode_null(&key);
  return key;
}

void LoadImpl::check_new_keys(const Table& tb) {
  std::unordered_set<std::string> added;
  size_t out = 0;
  for (size_t i = 0; i < rows_.size(); ++i) {
    StagedRow& r = rows_[i];
    auto it = tb.unique_rows.find(r.key);
    bool exists = (it != tb.unique_rows.end() && !it->second.deleted) || added.count(r.key);
    if (r.del) {
      added.erase(r.key);
    } else if (!exists) {
      auto parts = split_row_line(r.line);
      auto has = [&](size_t c) {
        std::string_view q(prefixes_[c].data(), prefixes_[c].size() - 1);  // without ':'
        for (auto& [n, v] : parts)
          if (n == q) return true;
        return false;
      };
      if (new_key_error_) {
        std::string key;
        for (size_t c = 0; c < cols_.size(); ++c) {
          if (!cols_[c].key) continue;
          std::string_view v;
          for (auto& [n, tok] : parts)
            if (n == std::string_view(prefixes_[c].data(), prefixes_[c].size() - 1)) v = tok;
          if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
          if (!key.empty()) key += ", ";
          key += v;
        }
        fail_ = "[E-7003]Can't append new rows in partial update when partial_update_new_key_behavior is ERROR. "
                "Row with key=[" + key + "] is not in table.";
        failed_ = true;
        return;
      }
      // Strict mode: the segment writer filters every new key of a partial
      // update (counted in NumberFilteredRows, checked against
      // max_filter_ratio after the reader's filtering; suites
      // test_partial_update_strict_mode, test_flexible_partial_update_filter_missing_key).
      if (strict_) {
        filter("can not append new rows in strict mode partial update, key is not in table", r.line);
        ++writer_filtered_;
        --loaded_;
        continue;
      }
      // Only a fixed partial update checks the left-out columns of a new key
      // (PartialUpdateInfo::init computes can_insert_new_rows_in_partial_update
      // for fixed columns only); a flexible one fills a NOT NULL column without
      // default with the type default (suite test_f_seq_col_no_vertical_segment_writer).
      int missing = -1;
      for (size_t c = 0; c < cols_.size() && missing < 0 && partial_ == Partial::Fixed; ++c)
        if (!cols_[c].nullable && !cols_[c].def && !has(c)) missing = static_cast<int>(c);
      if (missing >= 0) {
        filter("the unmentioned column `" + cols_[static_cast<size_t>(missing)].name +
                   "` should have default value or be nullable for newly inserted rows in non-strict mode partial update",
               r.line);
        --loaded_;
        continue;
      }
      added.insert(r.key);
    }
    if (out != i) rows_[out] = std::move(r);
    ++out;
  }
  rows_.resize(out);
}

}  // namespace cdc2doris::emu
