// Values and row images: each JSON value converted by its Connect schema
// node (or copied through, validated, without one).
#include "core/decode/detail/decoder_impl.hpp"

namespace cdc2doris::decode {

// Schemaless: JSON copied through, validated, compacted.
void Decoder::Impl::emit_generic(sj::value v, std::string& out, size_t depth, bool& toast) {
  if (depth > opt.max_depth) fail(DecodeErrorCode::TooDeep, "nesting of at most " + std::to_string(opt.max_depth) + " levels");
  // The type from the token's first byte, as simdjson's type() does: most
  // values are scalars copied through as their raw token, fetched once.
  const std::string_view tok = trim_token(v.raw_json_token());
  switch (tok.empty() ? '\0' : tok.front()) {
    case '"': {
      std::string_view raw = string_token(v, tok);
      if (is_toast_string(raw.substr(1, raw.size() - 2))) toast = true;
      out.append(raw);
      return;
    }
    case 't':
    case 'f':
    case 'n':
      if (tok != "true" && tok != "false" && tok != "null") fail(DecodeErrorCode::InvalidJson, "true, false or null");
      out.append(tok);
      return;
    case '{':
    case '[':
      break;  // containers below
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      out.append(number_token(tok));
      return;
    default:
      fail(DecodeErrorCode::InvalidJson, "a JSON value");
  }
  if (tok.front() == '{') {
    // This object walk is repeated in emit_struct_fields and for maps: a
    // shared helper taking the value writer as a lambda measured ~8% slower
    // on schemaless records (bench-decode plain-untyped, A/B alternated),
    // although no object value is on that path: it changes how this
    // recursive function is compiled.
    const size_t mark = out.size();
    out.push_back('{');
    sj::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an object");
    bool first = true;
    PathLevel level(path);
    for (auto res : obj) {
      sj::field& f = take_field(res, level);
      sj::value& child = f.value();
      const Key key = key_of(f, child);
      level.enter(key.text);
      if (!first) out.push_back(',');
      first = false;
      append_key(key, out);
      out.push_back(':');
      bool child_toast = false;
      emit_generic(child, out, depth + 1, child_toast);
    }
    level.leave();
    out.push_back('}');
    if (is_toast_compact(std::string_view(out).substr(mark))) toast = true;
    schemaless_variable_scale_decimal(out, mark);
    return;
  }
  // '[': an array
  const size_t mark = out.size();
  out.push_back('[');
  sj::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an array");
  bool first = true;
  PathLevel level(path);
  level.enter("[]");
  for (auto item : arr) {
    sj::value child;
    if (item.get(child) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an array element");
    if (!first) out.push_back(',');
    first = false;
    bool child_toast = false;
    emit_generic(child, out, depth + 1, child_toast);
  }
  level.leave();
  out.push_back(']');
  if (is_toast_compact(std::string_view(out).substr(mark))) toast = true;
}

// Without a schema, a VariableScaleDecimal (Oracle NUMBER, PostgreSQL
// NUMERIC without scale) still has its unmistakable {"scale":N,"value":"b64"}
// shape; turning it into the exact decimal beats loading a struct into a
// numeric column.
void Decoder::Impl::schemaless_variable_scale_decimal(std::string& out, size_t mark) {
  std::string_view obj = std::string_view(out).substr(mark);
  constexpr std::string_view p1 = "{\"scale\":", p2 = ",\"value\":\"";
  if (!obj.starts_with(p1) || !obj.ends_with("\"}")) return;
  const auto comma = obj.find(p2);
  if (comma == std::string_view::npos) return;
  int64_t scale;
  if (!parse_int64(obj.substr(p1.size(), comma - p1.size()), scale) || scale < -1000 || scale > 1000) return;
  std::string_view b64 = obj.substr(comma + p2.size(), obj.size() - 2 - comma - p2.size());
  if (!base64_decode(b64, scratch)) return;
  out.resize(mark);
  out.push_back('"');
  decimal_from_twos_complement(scratch, static_cast<int32_t>(scale), out);
  out.push_back('"');
}

int64_t Decoder::Impl::int_value(sj::value& v, const SchemaNode& node) {
  // parse_int64 accepts only JSON integers, so on success the token needs
  // no separate syntax check; on failure number_token() says which it was.
  std::string_view raw = trim_token(v.raw_json_token());
  int64_t x;
  if (!parse_int64(raw, x)) {
    raw = number_token(v);
    fail(DecodeErrorCode::TypeMismatch, "an integer for Connect type int", std::string(raw.substr(0, 32)));
  }
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  switch (node.type) {
    case ConnectType::Int8: lo = INT8_MIN; hi = INT8_MAX; break;
    case ConnectType::Int16: lo = INT16_MIN; hi = INT16_MAX; break;
    case ConnectType::Int32: lo = INT32_MIN; hi = INT32_MAX; break;
    default: break;
  }
  if (x < lo || x > hi) fail(DecodeErrorCode::TypeMismatch, "an integer in the range of the Connect type", std::string(raw));
  return x;
}

void Decoder::Impl::emit_bytes(std::string_view b64_raw_token, std::string& out, bool& toast) {
  std::string_view inner = b64_raw_token.substr(1, b64_raw_token.size() - 2);
  if (is_toast_string(inner)) toast = true;
  if (!base64_decode(inner, scratch)) fail(DecodeErrorCode::TypeMismatch, "base64 bytes", std::string(inner.substr(0, 32)));
  if (opt.binary_mode == BinaryMode::Base64) {
    out.append(b64_raw_token);
  } else {
    out.push_back('"');
    hex_encode(scratch, out);
    out.push_back('"');
  }
}

void Decoder::Impl::emit_decimal_bytes(std::string_view inner, int32_t scale, std::string& out) {
  if (!base64_decode(inner, scratch)) fail(DecodeErrorCode::TypeMismatch, "Decimal as base64 two's-complement bytes", std::string(inner.substr(0, 32)));
  out.push_back('"');
  decimal_from_twos_complement(scratch, scale, out);
  out.push_back('"');
}

void Decoder::Impl::emit_struct_fields(sj::value& v, const SchemaNode& node, std::string& out, size_t depth) {
  sj::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an object");
  out.push_back('{');
  bool first = true;
  size_t hint = 0;
  PathLevel level(path);
  for (auto res : obj) {
    sj::field& f = take_field(res, level);
    sj::value& child = f.value();
    const Key key = key_of(f, child);
    level.enter(key.text);
    if (!first) out.push_back(',');
    first = false;
    append_key(key, out);
    out.push_back(':');
    bool t = false;
    emit_typed(child, node.find(key.text, hint), out, depth + 1, t);
  }
  level.leave();
  out.push_back('}');
}

void Decoder::Impl::emit_variable_scale_decimal(sj::value& v, std::string& out) {
  sj::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::TypeMismatch, "VariableScaleDecimal {scale, value}");
  std::optional<int64_t> scale;
  std::string_view value_b64;
  bool have_value = false;
  PathLevel level(path);
  for (auto res : obj) {
    sj::field& f = take_field(res, level);
    sj::value& child = f.value();
    const std::string_view key = key_of(f, child).text;
    level.enter(key);
    if (key == "scale") {
      int64_t s;
      if (!parse_int64(number_token(child), s) || s < -1000 || s > 1000) fail(DecodeErrorCode::TypeMismatch, "an int32 scale");
      scale = s;
    } else if (key == "value") {
      expect_type(type_of(child), sj::json_type::string, "base64 bytes");
      std::string_view raw = string_token(child);
      value_b64 = raw.substr(1, raw.size() - 2);
      have_value = true;
    }
  }
  if (!scale || !have_value) fail(DecodeErrorCode::MissingField, "VariableScaleDecimal with both scale and value");
  emit_decimal_bytes(value_b64, static_cast<int32_t>(*scale), out);
}

void Decoder::Impl::emit_geometry(sj::value& v, bool point, std::string& out) {
  sj::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::TypeMismatch, "a geometry struct");
  std::string_view x, y, wkb;
  PathLevel level(path);
  for (auto res : obj) {
    sj::field& f = take_field(res, level);
    sj::value& child = f.value();
    const std::string_view key = key_of(f, child).text;
    level.enter(key);
    auto t = type_of(child);
    if (t == sj::json_type::null) continue;
    if (key == "wkb") {
      expect_type(t, sj::json_type::string, "WKB as base64 bytes");
      std::string_view raw = string_token(child);
      wkb = raw.substr(1, raw.size() - 2);
    } else if (point && key == "x") {
      x = number_token(child);
    } else if (point && key == "y") {
      y = number_token(child);
    }
  }
  level.leave();
  if (!wkb.empty()) {
    if (!base64_decode(wkb, scratch2)) fail(DecodeErrorCode::TypeMismatch, "WKB as base64 bytes");
    out.push_back('"');
    if (opt.geometry_mode == GeometryMode::Hex || !wkb_to_wkt(scratch2, out)) hex_encode(scratch2, out);
    out.push_back('"');
    return;
  }
  if (point && !x.empty() && !y.empty()) {
    out.append("\"POINT(");
    out.append(x);
    out.push_back(' ');
    out.append(y);
    out.append(")\"");
    return;
  }
  out.append("null");
}

void Decoder::Impl::check_json_text(std::string_view text, size_t depth) {
  // Wrapping in [] makes scalar JSON texts parse like containers.
  auxbuf.reserve(text.size() + 2 + simdjson::SIMDJSON_PADDING);
  auxbuf.assign("[");
  auxbuf.append(text);
  auxbuf.push_back(']');
  // simdjson's DOM parser validates the whole text in its own two stages;
  // its acceptance is the verdict, which skips the walk below (it builds a
  // copy only to throw it away: 3-4x the instructions). Its depth limit is
  // set to the walk's: a DOM parser of max_depth D accepts values inside at
  // most D-1 containers and empty containers inside D-1, which with the
  // wrapper is exactly "no value deeper than max_depth" (tested both ways).
  // Anything it refuses is walked, for the exact error and path, and
  // because DOM refuses what the grammar allows (integers beyond 64 bits,
  // 1e400), which the walk accepts.
  if (depth <= opt.max_depth) {
    const size_t limit = opt.max_depth - depth + 2;
    simdjson::dom::array arr;
    if ((json_text_checker.max_depth() == limit ||
         json_text_checker.allocate(json_text_checker.capacity(), limit) == simdjson::SUCCESS) &&
        json_text_checker.parse(auxbuf.data(), auxbuf.size(), false).get_array().get(arr) == simdjson::SUCCESS &&
        arr.size() == 1)
      return;
  }
  const size_t base = path.size();
  try {
    jsonbuf.clear();  // the walk validates every value; its copy is not used
    emit_json_document(jsonbuf, depth);
  } catch (const simdjson::simdjson_error& e) {
    path.resize(base);  // the error is the column's: its text is not JSON
    fail(DecodeErrorCode::TypeMismatch, "JSON text in an io.debezium.data.Json string", e.what());
  } catch (Failure& f) {
    // Bad JSON inside the string is a value that contradicts its type.
    f.code = f.code == DecodeErrorCode::TooDeep ? f.code : DecodeErrorCode::TypeMismatch;
    f.detail = "io.debezium.data.Json string: " + f.expected + (f.detail.empty() ? "" : " (" + f.detail + ")");
    f.expected = "JSON text";
    throw;
  }
}

void Decoder::Impl::emit_json_document(std::string& out, size_t depth) {
  sj::document doc;
  if (aux_parser.iterate(simdjson::padded_string_view(auxbuf.data(), auxbuf.size(), auxbuf.capacity())).get(doc) != simdjson::SUCCESS)
    fail(DecodeErrorCode::TypeMismatch, "JSON text in an io.debezium.data.Json string");
  sj::array arr;
  if (doc.get_array().get(arr) != simdjson::SUCCESS) fail(DecodeErrorCode::TypeMismatch, "JSON text in an io.debezium.data.Json string");
  size_t n = 0;
  for (auto item : arr) {
    sj::value child;
    if (item.get(child) != simdjson::SUCCESS) fail(DecodeErrorCode::TypeMismatch, "JSON text in an io.debezium.data.Json string");
    if (n++ > 0) fail(DecodeErrorCode::TypeMismatch, "a single JSON value in an io.debezium.data.Json string");
    bool t = false;
    emit_generic(child, out, depth, t);
  }
  if (n != 1) fail(DecodeErrorCode::TypeMismatch, "a single JSON value in an io.debezium.data.Json string");
  // On-Demand stops at the wrapper's first ']': "1],[2" walks as the one
  // value 1 unless what follows is looked at.
  if (const char* at = leftover(doc))
    fail(DecodeErrorCode::TypeMismatch, "a single JSON value in an io.debezium.data.Json string",
         "more content at byte " + std::to_string(at - auxbuf.data() - 1) + " of the text");
}

void Decoder::Impl::emit_doris_typed(sj::value& v, sj::json_type t, const SchemaNode& node, std::string& out, bool& toast) {
  // Each type takes every wire form Debezium can send it in without a schema;
  // anything else is a bad record naming the Doris type, never a NULL.
  auto mismatch = [&](const char* forms, std::string got) {
    fail(DecodeErrorCode::TypeMismatch, std::string(forms) + " for Doris " + node.name, std::move(got));
  };
  if (t == sj::json_type::string) {
    const std::string_view raw = string_token(v);
    if (is_toast_string(raw.substr(1, raw.size() - 2))) {
      toast = true;
      out.append(raw);
      return;
    }
  }
  switch (node.logical) {
    case Logical::DorisDecimal: {
      if (t == sj::json_type::number) {  // decimal.format=NUMERIC, or a plain JSON number
        const std::string_view raw = number_token(v);
        out.push_back('"');
        out.append(raw);
        out.push_back('"');
        return;
      }
      if (t == sj::json_type::object) {  // VariableScaleDecimal
        emit_variable_scale_decimal(v, out);
        return;
      }
      if (t != sj::json_type::string) mismatch("base64 decimal bytes, a number or decimal text", type_name(t));
      const std::string_view raw = string_token(v);
      const std::string_view inner = raw.substr(1, raw.size() - 2);
      if (is_decimal_text(inner)) {  // decimal.handling.mode=string
        out.append(raw);
        return;
      }
      if (!base64_decode(inner, scratch))
        mismatch("base64 decimal bytes, a number or decimal text", std::string(inner.substr(0, 40)));
      out.push_back('"');
      decimal_from_twos_complement(scratch, node.scale, out);
      out.push_back('"');
      return;
    }
    case Logical::DorisDate: {
      if (t == sj::json_type::number) {  // io.debezium.time.Date: days since 1970-01-01
        const int64_t days = int_value(v, node);
        out.push_back('"');
        format_date(days, out);
        out.push_back('"');
        return;
      }
      if (t != sj::json_type::string) mismatch("epoch days or an ISO date", type_name(t));
      const std::string_view s = string_value(v);
      out.push_back('"');
      if (!format_iso_date(s, out)) mismatch("epoch days or an ISO date", std::string(s.substr(0, 40)));
      out.push_back('"');
      return;
    }
    case Logical::DorisJson: {
      if (t == sj::json_type::string) {  // JSON text, as for io.debezium.data.Json
        const std::string_view raw = string_token(v);
        check_json_text(string_value(v), 0);
        out.append(raw);
        return;
      }
      // Any other value (a PostgreSQL array, a point's {x, y, wkb, srid}
      // struct, a number) is the JSON value itself: it goes out as its
      // compact JSON text in a string, which Doris parses into exactly that
      // value, numbers with their digits. A TOAST placeholder array stays
      // as it is for the row's partial-update handling.
      std::string text;
      bool t_toast = false;
      emit_generic(v, text, 0, t_toast);
      if (t_toast) {
        toast = true;
        out.append(text);
        return;
      }
      append_json_string(text, out);
      return;
    }
    case Logical::DorisLargeint: {
      if (t == sj::json_type::number) {
        const std::string_view raw = number_token(v);
        if (!is_integer_text(raw)) mismatch("an integer, integer text or base64 Decimal bytes of scale 0", std::string(raw.substr(0, 40)));
        out.push_back('"');
        out.append(raw);
        out.push_back('"');
        return;
      }
      if (t != sj::json_type::string) mismatch("an integer, integer text or base64 Decimal bytes of scale 0", type_name(t));
      const std::string_view raw = string_token(v);
      const std::string_view inner = raw.substr(1, raw.size() - 2);
      // Integer text first, as for DECIMAL: base64 of a non-negative
      // two's-complement number never starts with a digit.
      if (is_integer_text(inner)) {
        out.append(raw);
        return;
      }
      if (inner.empty() || !base64_decode(inner, scratch))
        mismatch("an integer, integer text or base64 Decimal bytes of scale 0", std::string(inner.substr(0, 40)));
      // bigint.unsigned.handling.mode=precise: Decimal bytes of scale 0.
      out.push_back('"');
      decimal_from_twos_complement(scratch, 0, out);
      out.push_back('"');
      return;
    }
    default: {  // DorisDatetime
      if (t == sj::json_type::number) {
        const int64_t x = int_value(v, node);
        int64_t ups = 1000;
        const char* in_range = "an epoch integer in milliseconds within years 0001-9999 (DATETIME(0-3); "
                               "routing.tables.<t>.epoch_units sets another unit)";
        switch (node.epoch_unit) {
          case EpochUnit::Seconds:
            ups = 1;
            in_range = "an epoch integer in seconds within years 0001-9999 (epoch_units: s)";
            break;
          case EpochUnit::Millis: break;
          case EpochUnit::Micros:
            ups = 1000000;
            in_range = "an epoch integer in microseconds within years 0001-9999 (DATETIME(4-6); "
                       "routing.tables.<t>.epoch_units sets another unit)";
            break;
          case EpochUnit::Nanos:
            ups = 1000000000;
            in_range = "an epoch integer in nanoseconds within years 0001-9999 (epoch_units: ns)";
            break;
        }
        // The unit is never guessed from the value: one that lands outside
        // what DATETIME holds was written in another unit (or is garbage).
        constexpr int64_t kFirstSecond = -62135596800;  // 0001-01-01 00:00:00 UTC
        constexpr int64_t kLastSecond = 253402300799;   // 9999-12-31 23:59:59 UTC
        const int64_t secs = x / ups - ((x % ups) < 0 ? 1 : 0);
        if (secs < kFirstSecond || secs > kLastSecond) mismatch(in_range, std::to_string(x));
        out.push_back('"');
        format_timestamp(x, ups, out);
        out.push_back('"');
        return;
      }
      if (t != sj::json_type::string) mismatch("an epoch integer or an ISO timestamp", type_name(t));
      const std::string_view s = string_value(v);
      const size_t mark = out.size();
      out.push_back('"');
      // An instant with a zone goes to decoding.time_zone; a wall clock stays.
      if (!format_zoned_timestamp(s, zone, out)) {
        out.resize(mark + 1);
        if (!format_local_timestamp(s, out)) mismatch("an epoch integer or an ISO timestamp", std::string(s.substr(0, 40)));
      }
      out.push_back('"');
      return;
    }
  }
}

void Decoder::Impl::emit_typed(sj::value v, const SchemaNode* node, std::string& out, size_t depth, bool& toast) {
  if (node == nullptr || node->logical == Logical::DorisAsIs) {
    emit_generic(v, out, depth, toast);
    return;
  }
  if (depth > opt.max_depth) fail(DecodeErrorCode::TooDeep, "nesting of at most " + std::to_string(opt.max_depth) + " levels");
  const sj::json_type t = type_of(v);
  if (t == sj::json_type::null) {
    std::string_view raw = trim_token(v.raw_json_token());
    if (raw != "null") fail(DecodeErrorCode::InvalidJson, "null");
    out.append("null");
    return;
  }
  if (node->logical >= Logical::DorisDecimal) {
    emit_doris_typed(v, t, *node, out, toast);
    return;
  }
  switch (node->type) {
    case ConnectType::Boolean: {
      expect_type(t, sj::json_type::boolean, "a boolean");
      std::string_view raw = trim_token(v.raw_json_token());
      if (raw != "true" && raw != "false") fail(DecodeErrorCode::InvalidJson, "true or false");
      out.append(raw);
      return;
    }
    case ConnectType::Int8:
    case ConnectType::Int16:
    case ConnectType::Int32:
    case ConnectType::Int64: {
      expect_type(t, sj::json_type::number, node->logical == Logical::None ? "an integer" : "an integer (epoch-based temporal value)");
      const int64_t x = int_value(v, *node);
      switch (node->logical) {
        case Logical::Date:
          out.push_back('"');
          format_date(x, out);
          out.push_back('"');
          return;
        case Logical::TimeMillis:
        case Logical::TimeMicros:
        case Logical::TimeNanos:
          out.push_back('"');
          format_time(x, node->logical == Logical::TimeMillis ? 1000 : node->logical == Logical::TimeMicros ? 1000000 : 1000000000, out);
          out.push_back('"');
          return;
        case Logical::TimestampMillis:
        case Logical::TimestampMicros:
        case Logical::TimestampNanos:
          out.push_back('"');
          format_timestamp(x, node->logical == Logical::TimestampMillis ? 1000 : node->logical == Logical::TimestampMicros ? 1000000 : 1000000000, out);
          out.push_back('"');
          return;
        default:
          out.append(trim_token(v.raw_json_token()));
          return;
      }
    }
    case ConnectType::Float:
    case ConnectType::Double:
      if (t == sj::json_type::string) {
        // Jackson writes NaN/Infinity as strings; kept as strings for Doris to judge.
        std::string_view raw = string_token(v);
        if (raw != "\"NaN\"" && raw != "\"Infinity\"" && raw != "\"-Infinity\"")
          fail(DecodeErrorCode::TypeMismatch, "a floating-point number", std::string(raw.substr(0, 32)));
        out.append(raw);
        return;
      }
      expect_type(t, sj::json_type::number, "a floating-point number");
      out.append(number_token(v));
      return;
    case ConnectType::String: {
      expect_type(t, sj::json_type::string, node->logical == Logical::None ? "a string" : "a string (temporal or JSON text)");
      switch (node->logical) {
        case Logical::ZonedTimestamp:
        case Logical::IsoTimestamp: {
          std::string_view s = string_value(v);
          if (is_toast_string(s)) {
            toast = true;
            append_json_string(s, out);
            return;
          }
          out.push_back('"');
          if (!format_zoned_timestamp(s, zone, out)) fail(DecodeErrorCode::TypeMismatch, "an ISO-8601 timestamp with offset", std::string(s.substr(0, 40)));
          out.push_back('"');
          return;
        }
        case Logical::ZonedTime:
        case Logical::IsoTime: {
          std::string_view s = string_value(v);
          out.push_back('"');
          if (!format_zoned_time(s, zone, out)) fail(DecodeErrorCode::TypeMismatch, "an ISO-8601 time with offset", std::string(s.substr(0, 40)));
          out.push_back('"');
          return;
        }
        case Logical::IsoDate: {
          std::string_view s = string_value(v);
          out.push_back('"');
          if (!format_iso_date(s, out)) fail(DecodeErrorCode::TypeMismatch, "an ISO-8601 date", std::string(s.substr(0, 40)));
          out.push_back('"');
          return;
        }
        case Logical::Json: {
          const std::string_view raw = string_token(v);
          std::string_view s = string_value(v);
          if (is_toast_string(s)) {
            toast = true;
            out.append(raw);
            return;
          }
          // Doris parses a string value loaded into a JSON column as JSON
          // text, so the JSON text goes out as the string it arrived in:
          // "\"a\"" stays the JSON string "a" and "{\"k\":1}" the object,
          // where writing the value itself would turn a JSON string into
          // text Doris parses again (NULL, or an object for "{...}").
          // string_value points into the main parser's buffer, which the
          // aux parse does not touch.
          check_json_text(s, depth);
          out.append(raw);
          return;
        }
        default: {
          std::string_view raw = string_token(v);
          if (is_toast_string(raw.substr(1, raw.size() - 2))) toast = true;
          out.append(raw);
          return;
        }
      }
    }
    case ConnectType::Bytes: {
      if (node->logical == Logical::Decimal) {
        if (t == sj::json_type::number) {  // decimal.format=NUMERIC: the text is exact
          std::string_view raw = number_token(v);
          out.push_back('"');
          out.append(raw);
          out.push_back('"');
          return;
        }
        expect_type(t, sj::json_type::string, "Decimal as base64 bytes");
        std::string_view raw = string_token(v);
        emit_decimal_bytes(raw.substr(1, raw.size() - 2), node->scale, out);
        return;
      }
      expect_type(t, sj::json_type::string, "base64 bytes");
      emit_bytes(string_token(v), out, toast);
      return;
    }
    case ConnectType::Struct:
      expect_type(t, sj::json_type::object, "a struct (JSON object)");
      if (node->logical == Logical::VariableScaleDecimal) {
        emit_variable_scale_decimal(v, out);
      } else if (node->logical == Logical::Geometry || node->logical == Logical::Point) {
        emit_geometry(v, node->logical == Logical::Point, out);
      } else {
        emit_struct_fields(v, *node, out, depth);
      }
      return;
    case ConnectType::Array: {
      expect_type(t, sj::json_type::array, "an array");
      const size_t mark = out.size();
      sj::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an array");
      out.push_back('[');
      bool first = true;
      PathLevel level(path);
      level.enter("[]");
      for (auto item : arr) {
        sj::value child;
        if (item.get(child) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an array element");
        if (!first) out.push_back(',');
        first = false;
        bool ct = false;
        emit_typed(child, node->items.get(), out, depth + 1, ct);
      }
      level.leave();
      out.push_back(']');
      if (is_toast_compact(std::string_view(out).substr(mark))) toast = true;
      return;
    }
    case ConnectType::Map: {
      if (t == sj::json_type::object) {
        const size_t mark = out.size();
        sj::object obj;
        if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an object");
        out.push_back('{');
        bool first = true;
        PathLevel level(path);
        for (auto res : obj) {
          sj::field& f = take_field(res, level);
          sj::value& child = f.value();
          const Key key = key_of(f, child);
          level.enter(key.text);
          if (!first) out.push_back(',');
          first = false;
          append_key(key, out);
          out.push_back(':');
          bool ct = false;
          emit_typed(child, node->values.get(), out, depth + 1, ct);
        }
        level.leave();
        out.push_back('}');
        if (is_toast_compact(std::string_view(out).substr(mark))) toast = true;
        return;
      }
      expect_type(t, sj::json_type::array, "a map (object or array of pairs)");
      emit_generic(v, out, depth, toast);
      return;
    }
  }
}

// Converts the row object in `span` (a document of its own: the Kafka key)
// into `b`.
void Decoder::Impl::convert_row(Span span, const std::string& owner, const SchemaNode* schema, RowBuild& b, std::string_view root) {
  path.clear();
  path_root = root;
  sj::document doc = iterate(span.begin, static_cast<size_t>(span.end - span.begin), owner);
  sj::object obj = doc.get_object();
  convert_object(obj, schema, b, {}, nullptr);
  expect_end(doc, owner);
  path.clear();
}

// Converts a row image of the payload scan_payload() indexed: `field`
// ("after", "before") of the top-level object, or the top-level object
// itself when empty (flattened records). Rewinding the document reuses
// simdjson's index of the record instead of indexing the image again.
void Decoder::Impl::convert_image(std::string_view field, const SchemaNode* schema, RowBuild& b, std::string_view root,
                                  std::string_view skip_prefix, const std::vector<std::string>* only) {
  path.clear();
  path_root = root;
  payload_doc.rewind();
  sj::object top = payload_doc.get_object();
  if (field.empty()) {
    convert_object(top, schema, b, skip_prefix, only);
    path.clear();
    return;
  }
  PathLevel level(path);
  for (auto res : top) {
    sj::field& f = take_field(res, level);
    sj::value& v = f.value();
    if (key_of(f, v).text != field) continue;
    sj::object obj = v.get_object();
    convert_object(obj, schema, b, skip_prefix, only);
    path.clear();
    return;
  }
  // scan_payload() saw the field, so this is unreachable for a document it accepted.
  fail(DecodeErrorCode::MissingField, "\"" + std::string(field) + "\" in the change event");
}

// `skip_prefix` drops SMT metadata fields of flattened records; `only`
// limits the conversion to these columns (the key columns of a
// before-image, enough to detect a primary-key change).
void Decoder::Impl::convert_object(sj::object& obj, const SchemaNode* schema, RowBuild& b, std::string_view skip_prefix,
                                   const std::vector<std::string>* only) {
  b.clear();
  b.present = true;
  size_t hint = 0;
  PathLevel level(path);
  for (auto res : obj) {
    sj::field& f = take_field(res, level);
    sj::value& v = f.value();
    const Key key = key_of(f, v);
    if (!skip_prefix.empty() && key.text.substr(0, skip_prefix.size()) == skip_prefix) continue;
    if (only != nullptr && std::find(only->begin(), only->end(), key.text) == only->end()) continue;
    level.enter(key.text);
    if (b.body.size() > 1) b.body.push_back(',');
    Col c{};
    const size_t name_start = b.body.size() + 1;
    append_key(key, b.body);
    c.name_off = static_cast<uint32_t>(name_start);
    c.name_len = static_cast<uint32_t>(b.body.size() - 1 - name_start);
    b.body.push_back(':');
    c.val_off = static_cast<uint32_t>(b.body.size());
    bool toast = false;
    const SchemaNode* field_schema = schema != nullptr ? schema->find(key.text, hint) : nullptr;
    if (schema != nullptr && field_schema == nullptr) b.unknown = true;
    emit_typed(v, field_schema, b.body, 1, toast);
    c.val_len = static_cast<uint32_t>(b.body.size() - c.val_off);
    c.toast = toast;
    c.unknown = schema != nullptr && field_schema == nullptr;
    b.toast = b.toast || toast;
    b.cols.push_back(c);
  }
  level.leave();
}

}  // namespace cdc2doris::decode
