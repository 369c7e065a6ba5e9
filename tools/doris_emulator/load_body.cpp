// Stream load body: decompression, line splitting, JSON (simdjson On-Demand,
// in place where the buffer has padding) and CSV decoding into InValues.
#include "tools/doris_emulator/load.hpp"

#include <cstring>

namespace cdc2doris::emu {
using namespace detail;

bool LoadImpl::feed(const char* data, size_t n) {
  if (failed_) return false;
  received_ += static_cast<int64_t>(n);
  if (received_ > limit_) {
    fail_ = std::string(json_whole_ ? "[EXCEEDED_LIMIT]json body size " : "[EXCEEDED_LIMIT]body size ") +
            std::to_string(received_) + " exceeds the limit " + std::to_string(limit_);
    failed_ = true;
    return false;
  }
  if (!zs_init_) {
    consume(data, n);
    return true;
  }
  zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  zs_.avail_in = static_cast<uInt>(n);
  zbuf_.resize(1 << 18);
  while (zs_.avail_in > 0) {
    zs_.next_out = reinterpret_cast<Bytef*>(zbuf_.data());
    zs_.avail_out = static_cast<uInt>(zbuf_.size());
    int rc = inflate(&zs_, Z_NO_FLUSH);
    size_t produced = zbuf_.size() - zs_.avail_out;
    if (produced) consume(zbuf_.data(), produced);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are legal; keep decoding.
      if (zs_.avail_in == 0) { zdone_ = true; break; }
      inflateReset(&zs_);
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      fail_ = std::string("[INTERNAL_ERROR]failed to decompress gzip data: ") + (zs_.msg ? zs_.msg : "inflate error");
      failed_ = true;
      return false;
    }
    if (rc == Z_BUF_ERROR && produced == 0) break;
  }
  return true;
}

void LoadImpl::cancel(const std::string& reason) {
  if (auto* t = e_.find_txn(txn_id_); t && t->state == TxnState::Prepare) e_.abort_txn(*t, reason);
  ++e_.stats().loads_failed;
}

void LoadImpl::consume(const char* data, size_t n) {
  if (json_whole_) {
    pending_.append(data, n);
    return;
  }
  if (fmt_ == Fmt::Csv && enclose_) {
    consume_enclosed(data, n);
    return;
  }
  if (line_delim_.size() != 1) {
    pending_.append(data, n);
    size_t pos = 0, idx;
    while ((idx = pending_.find(line_delim_, pos)) != std::string::npos) {
      process_line(std::string_view(pending_).substr(pos, idx - pos));
      pos = idx + line_delim_.size();
    }
    pending_.erase(0, pos);
    return;
  }
  char d = line_delim_[0];
  const char* p = data;
  const char* end = data + n;
  if (!pending_.empty()) {
    const char* nl = static_cast<const char*>(std::memchr(p, d, static_cast<size_t>(end - p)));
    if (!nl) {
      pending_.append(p, end);
      return;
    }
    pending_.append(p, nl);
    process_line(pending_);
    pending_.clear();
    p = nl + 1;
  }
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, d, static_cast<size_t>(end - p)));
    if (!nl) {
      pending_.assign(p, end);
      return;
    }
    process_line(std::string_view(p, static_cast<size_t>(nl - p)), end);
    p = nl + 1;
  }
}

// CSV with `enclose`: a line delimiter inside an enclosed field belongs to
// the field, as in Doris' EncloseCsvLineReaderContext
// (be/src/exec/line_reader/new_plain_text_line_reader.cpp): an enclose char
// at the start of a field opens it, the escape char protects the next byte,
// and an enclose char followed by the column separator or the line delimiter
// closes it. The unfinished line is rescanned when more bytes arrive.
void LoadImpl::consume_enclosed(const char* data, size_t n) {
  pending_.append(data, n);
  const std::string& s = pending_;
  size_t line_start = 0, i = 0;
  bool field_start = true, quoted = false;
  auto at = [&](size_t pos, const std::string& tok) { return s.compare(pos, tok.size(), tok) == 0; };
  while (i < s.size()) {
    if (quoted) {
      if (escape_ && s[i] == escape_) {
        i += 2;
      } else if (s[i] == enclose_) {
        if (i + 1 == s.size()) break;  // cannot tell yet whether it closes the field
        if (at(i + 1, col_sep_) || at(i + 1, line_delim_)) quoted = false;
        ++i;
      } else {
        ++i;
      }
    } else if (at(i, line_delim_)) {
      process_line(std::string_view(s).substr(line_start, i - line_start));
      i += line_delim_.size();
      line_start = i;
      field_start = true;
    } else if (at(i, col_sep_)) {
      i += col_sep_.size();
      field_start = true;
    } else {
      if (field_start && s[i] == enclose_) quoted = true;
      field_start = false;
      ++i;
    }
  }
  pending_.erase(0, line_start);
}

void LoadImpl::process_line(std::string_view line, const char* readable_end) {
  if (!line.empty() && line.back() == '\r' && line_delim_ == "\n") line.remove_suffix(1);
  if (skip_lines_ > 0) {
    --skip_lines_;
    return;
  }
  if (fmt_ == Fmt::Json) {
    std::string_view t = trim(line);
    if (t.empty()) return;
    if (count_only_ && t.front() == '{') {
      ++loaded_;
      return;
    }
    parse_json_text(t, readable_end);
  } else {
    if (line.empty()) return;
    if (count_only_) {
      ++loaded_;
      return;
    }
    parse_csv(line);
  }
}

void LoadImpl::process_whole_json() {
  std::string_view t = trim(pending_);
  if (t.empty()) return;
  parse_json_text(t);
  pending_.clear();
}

void LoadImpl::filter(std::string_view reason, std::string_view src) {
  ++filtered_;
  if (errlog_lines_ < 1000) {
    ++errlog_lines_;
    errlog_ += "Reason: ";
    errlog_ += reason;
    errlog_ += ". src line [";
    errlog_ += src.substr(0, 4096);
    errlog_ += "]; \n";
  }
}

void LoadImpl::parse_json_text(std::string_view text, const char* readable_end) {
  const char* buf = text.data();
  size_t cap = readable_end ? static_cast<size_t>(readable_end - text.data()) : 0;
  if (cap < text.size() + simdjson::SIMDJSON_PADDING) {
    linebuf_.assign(text);
    linebuf_.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    buf = linebuf_.data();
    cap = linebuf_.capacity();
  }
  simdjson::ondemand::document doc;
  auto err = parser_.iterate(buf, text.size(), cap).get(doc);
  if (err) {
    filter(std::string("Parse json data for JsonDoc failed. error info: ") + simdjson::error_message(err), text);
    return;
  }
  simdjson::ondemand::json_type type;
  if (doc.type().get(type)) {
    filter("Parse json data for JsonDoc failed. invalid document", text);
    return;
  }
  if (type == simdjson::ondemand::json_type::array) {
    if (!strip_outer_) {
      filter("JSON data is array-object, `strip_outer_array` must be TRUE.", text);
      return;
    }
    simdjson::ondemand::array arr;
    if (doc.get_array().get(arr)) {
      filter("Parse json data for JsonDoc failed. invalid array", text);
      return;
    }
    for (auto elem : arr) {
      simdjson::ondemand::object obj;
      if (elem.get_object().get(obj)) {
        filter("Parse json data failed: array element is not an object", text);
        return;
      }
      if (count_only_) {
        ++loaded_;
        continue;
      }
      if (!read_object(obj, text)) return;
    }
    return;
  }
  if (type != simdjson::ondemand::json_type::object) {
    filter("Parse json data failed: not a JSON object", text);
    return;
  }
  if (strip_outer_ && !by_line_) {
    filter("JSON data is not an array-object, `strip_outer_array` must be FALSE.", text);
    return;
  }
  simdjson::ondemand::object obj;
  if (doc.get_object().get(obj)) {
    filter("Parse json data failed: not a JSON object", text);
    return;
  }
  if (count_only_) {
    ++loaded_;
    return;
  }
  // A line holding more than one JSON document fails the load (Doris'
  // NewJsonReader with read_json_by_line; regression suite
  // test_json_load_behavior_and_error_msg expects this message).
  const char* next = nullptr;
  if (read_object(obj, text) && by_line_ && !failed_ && doc.current_location().get(next) == simdjson::SUCCESS) {
    fail_ = "[DATA_QUALITY_ERROR]Multiple JSON objects in a single line";
    failed_ = true;
  }
}

namespace {

template <class V>
simdjson::error_code raw_container(V& v, simdjson::ondemand::json_type jt, std::string_view* out) {
  if (jt == simdjson::ondemand::json_type::object) {
    simdjson::ondemand::object o;
    if (auto e = v.get_object().get(o)) return e;
    return o.raw_json().get(*out);
  }
  simdjson::ondemand::array a;
  if (auto e = v.get_array().get(a)) return e;
  return a.raw_json().get(*out);
}

}  // namespace

bool LoadImpl::read_object(simdjson::ondemand::object& obj, std::string_view text) {
  std::fill(present_.begin(), present_.end(), 0);
  next_src_ = 0;
  for (auto field : obj) {
    std::string_view k;
    if (field.unescaped_key().get(k)) {
      filter("Parse json data failed: bad key", text);
      return false;
    }
    // Writers usually emit the keys in column order: try the slot after the
    // previous key first, then search.
    int si = -1;
    if (next_src_ < src_names_.size() && src_names_[next_src_] == k) si = static_cast<int>(next_src_);
    else
      for (size_t i = 0; i < src_names_.size(); ++i)
        if (src_names_[i].size() == k.size() && src_names_[i] == k) { si = static_cast<int>(i); break; }
    if (si < 0)
      for (size_t i = 0; i < src_names_.size(); ++i)
        if (iequals(src_names_[i], k)) { si = static_cast<int>(i); break; }
    next_src_ = si < 0 ? 0 : static_cast<size_t>(si) + 1;
    auto v = field.value();
    simdjson::ondemand::json_type jt;
    if (v.type().get(jt)) {
      filter("Parse json data failed: bad value", text);
      return false;
    }
    if (si < 0) {
      // Unknown keys are ignored, but the value must still be valid JSON.
      if (jt == simdjson::ondemand::json_type::object || jt == simdjson::ondemand::json_type::array) {
        std::string_view raw;
        if (raw_container(v, jt, &raw)) {
          filter("Parse json data failed: bad value", text);
          return false;
        }
      } else {
        std::string_view raw = v.raw_json_token();
        (void)raw;
      }
      continue;
    }
    InValue& iv = vals_[static_cast<size_t>(si)];
    present_[static_cast<size_t>(si)] = 1;
    simdjson::error_code err = simdjson::SUCCESS;
    switch (jt) {
      case simdjson::ondemand::json_type::null:
        iv.tag = InValue::Null;
        v.is_null();
        break;
      case simdjson::ondemand::json_type::string: {
        iv.tag = InValue::Str;
        // Without a backslash the unescaped text is the raw text between
        // the quotes: use it in place instead of unescaping into a copy.
        std::string_view tok = v.raw_json_token();
        while (!tok.empty() && tok.back() != '"') tok.remove_suffix(1);
        if (tok.size() >= 2 && !std::memchr(tok.data() + 1, '\\', tok.size() - 2)) {
          iv.text = tok.substr(1, tok.size() - 2);
          break;
        }
        err = v.get_string().get(iv.text);
        break;
      }
      case simdjson::ondemand::json_type::number:
        iv.tag = InValue::Num;
        iv.text = trim(std::string_view(v.raw_json_token()));
        break;
      case simdjson::ondemand::json_type::boolean:
        iv.tag = InValue::Bool;
        err = v.get_bool().get(iv.b);
        break;
      case simdjson::ondemand::json_type::object:
      case simdjson::ondemand::json_type::array:
        iv.tag = InValue::Raw;
        err = raw_container(v, jt, &iv.text);
        break;
    }
    if (err) {
      filter(std::string("Parse json data failed: ") + simdjson::error_message(err), text);
      return false;
    }
  }
  build_row(text);
  return true;
}

void LoadImpl::parse_csv(std::string_view line) {
  std::fill(present_.begin(), present_.end(), 0);
  fields_.clear();
  csv_store_.clear();
  size_t p = 0;
  const std::string& sep = col_sep_;
  while (true) {
    if (enclose_ && p < line.size() && line[p] == enclose_) {
      std::string f;
      size_t i = p + 1;
      bool closed = false;
      for (; i < line.size(); ++i) {
        char c = line[i];
        if (escape_ && c == escape_ && i + 1 < line.size()) { f.push_back(line[++i]); continue; }
        if (c == enclose_) { closed = true; ++i; break; }
        f.push_back(c);
      }
      if (!closed) { filter("unclosed enclose character", line); return; }
      csv_store_.push_back(std::move(f));
      fields_.push_back({csv_store_.size() - 1, true});
      if (i >= line.size()) break;
      if (line.compare(i, sep.size(), sep) != 0) { filter("unexpected characters after enclosed field", line); return; }
      p = i + sep.size();
      continue;
    }
    size_t idx = line.find(sep, p);
    std::string_view f = line.substr(p, idx == std::string_view::npos ? std::string_view::npos : idx - p);
    csv_store_.emplace_back(f);
    fields_.push_back({csv_store_.size() - 1, false});
    if (idx == std::string_view::npos) break;
    p = idx + sep.size();
  }
  if (fields_.size() != src_names_.size()) {
    filter("actual column number in csv file is " + std::string(fields_.size() < src_names_.size() ? "less" : "more") +
               " than schema column number.actual number: " + std::to_string(fields_.size()) +
               ", column separator: [" + col_sep_ + "], line delimiter: [" +
               (line_delim_ == "\n" ? std::string("\\n") : line_delim_) +
               "], schema column number: " + std::to_string(src_names_.size()),
           line);
    return;
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    std::string_view f = csv_store_[fields_[i].first];
    InValue& iv = vals_[i];
    present_[i] = 1;
    if (!fields_[i].second && f == "\\N") {
      iv.tag = InValue::Null;
      continue;
    }
    if (trim_dq_ && f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    iv.tag = InValue::Str;
    iv.text = f;
  }
  build_row(line);
}

}  // namespace cdc2doris::emu
