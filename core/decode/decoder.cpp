// The decoder's API: names of kinds and error codes, errors, source
// positions, construction, and identify()/convert() turning a Failure into a
// DecodeError.
#include <cassert>
#include <stdexcept>

#include "core/decode/detail/decoder_impl.hpp"

namespace cdc2doris::decode {

const char* to_string(DeleteMode m) {
  switch (m) {
    case DeleteMode::Hard: return "hard";
    case DeleteMode::Soft: return "soft";
    case DeleteMode::Ignore: return "ignore";
  }
  return "?";
}

std::optional<DeleteMode> parse_delete_mode(std::string_view s) {
  if (s == "hard") return DeleteMode::Hard;
  if (s == "soft") return DeleteMode::Soft;
  if (s == "ignore") return DeleteMode::Ignore;
  return std::nullopt;
}

const char* to_string(Kind k) {
  switch (k) {
    case Kind::Change: return "change";
    case Kind::Tombstone: return "tombstone";
    case Kind::Heartbeat: return "heartbeat";
    case Kind::TransactionMetadata: return "transaction";
    case Kind::SchemaChange: return "schema_change";
    case Kind::Truncate: return "truncate";
    case Kind::Message: return "message";
  }
  return "?";
}

const char* to_string(BadRecordPolicy p) {
  switch (p) {
    case BadRecordPolicy::Fail: return "fail";
    case BadRecordPolicy::Skip: return "skip";
    case BadRecordPolicy::DeadLetter: return "dead_letter";
  }
  return "?";
}

std::optional<BadRecordPolicy> parse_bad_record_policy(std::string_view s) {
  for (auto p : {BadRecordPolicy::Fail, BadRecordPolicy::Skip, BadRecordPolicy::DeadLetter})
    if (s == to_string(p)) return p;
  if (s == "dead-letter") return BadRecordPolicy::DeadLetter;  // the CLI's spelling
  return std::nullopt;
}

const char* to_string(DecodeErrorCode c) {
  switch (c) {
    case DecodeErrorCode::InvalidJson: return "invalid_json";
    case DecodeErrorCode::InvalidUtf8: return "invalid_utf8";
    case DecodeErrorCode::TooDeep: return "too_deep";
    case DecodeErrorCode::TooLarge: return "too_large";
    case DecodeErrorCode::MissingField: return "missing_field";
    case DecodeErrorCode::BadOp: return "bad_op";
    case DecodeErrorCode::TypeMismatch: return "type_mismatch";
    case DecodeErrorCode::NotAnEnvelope: return "not_an_envelope";
    case DecodeErrorCode::MissingKey: return "missing_key";
    case DecodeErrorCode::Unsupported: return "unsupported";
    case DecodeErrorCode::SchemaInvalid: return "schema_invalid";
    case DecodeErrorCode::DoesNotFit: return "does_not_fit";
    case DecodeErrorCode::RejectedByDoris: return "rejected_by_doris";
    case DecodeErrorCode::InvalidAvro: return "invalid_avro";
    case DecodeErrorCode::UnknownSchemaId: return "unknown_schema_id";
    case DecodeErrorCode::UnknownFormat: return "unknown_format";
  }
  return "?";
}

std::string DecodeError::message() const {
  std::string m = topic + "/" + std::to_string(partition) + "@" + std::to_string(offset) + ": ";
  m += to_string(code);
  if (!path.empty()) m += " at " + path;
  if (!expected.empty()) m += ": expected " + expected;
  if (!detail.empty()) m += (expected.empty() ? ": " : ", got ") + detail;
  return m;
}

Error DecodeError::to_error() const {
  ErrorContext ctx;
  ctx.topic = topic;
  ctx.partition = partition;
  ctx.offset = offset;
  return Error(Disposition::Fail, message(), std::move(ctx));
}

void SourcePosition::clear() {
  connector.clear();
  ts_ms.reset();
  snapshot.clear();
  file.clear();
  pos.reset();
  row.reset();
  gtid.clear();
  lsn.reset();
  tx_id.reset();
  commit_lsn.clear();
  change_lsn.clear();
  event_serial_no.reset();
  scn.clear();
  commit_scn.clear();
}

std::optional<int64_t> SourcePosition::sequence() const {
  if ((connector == "mysql" || connector == "mariadb") && !file.empty() && pos) {
    // 20 bits binlog index | 32 bits position | 11 bits row-in-event: ordered
    // like (file, pos, row) as long as each part fits (docs/decoding.md).
    auto dot = file.rfind('.');
    int64_t index = 0;
    if (dot == std::string::npos || !parse_int64(std::string_view(file).substr(dot + 1), index)) {
      std::string_view digits = std::string_view(file).substr(dot == std::string::npos ? 0 : dot + 1);
      while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
      if (!parse_int64(digits, index)) return std::nullopt;
    }
    if (index < 0 || index >= (1 << 20) || *pos < 0 || *pos > 0xFFFFFFFFLL) return std::nullopt;
    int64_t r = row.value_or(0);
    if (r < 0) r = 0;
    if (r > 2047) r = 2047;
    return (index << 43) | (*pos << 11) | r;
  }
  if (connector == "postgresql" && lsn) return lsn;
  if (connector == "oracle") {
    int64_t v;
    if (!commit_scn.empty() && parse_int64(commit_scn, v)) return v;
    if (!scn.empty() && parse_int64(scn, v)) return v;
  }
  return std::nullopt;
}

bool Row::is_delete() const {
  constexpr std::string_view suffix = "\"__DORIS_DELETE_SIGN__\":1}";
  return std::string_view(json).ends_with(suffix);
}

Decoder::Impl::Impl(DecoderOptions o) : opt(std::move(o)) {
  if (opt.time_zone.empty() || opt.time_zone == "UTC" || opt.time_zone == "Etc/UTC") {
    zone = nullptr;
  } else {
    auto loaded = load_time_zone(opt.time_zone);
    if (!loaded) throw std::invalid_argument("unknown time zone \"" + opt.time_zone + "\" (an IANA name such as Europe/Berlin)");
    tz = *loaded;
    zone = &tz;
  }
  if (parser.allocate(1 << 16, opt.max_depth + 8) != simdjson::SUCCESS ||
      aux_parser.allocate(1 << 12, opt.max_depth + 2) != simdjson::SUCCESS ||
      json_text_checker.allocate(1 << 12, opt.max_depth + 1) != simdjson::SUCCESS)
    throw std::runtime_error("simdjson parser allocation failed");
  for (const auto& p : opt.toast_placeholders) {
    // `hex:` means the placeholder is given as raw bytes (Debezium's syntax).
    std::string raw = p;
    if (raw.rfind("hex:", 0) == 0) {
      std::string bytes;
      for (size_t i = 4; i + 1 < raw.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(raw.substr(i, 2), nullptr, 16)));
      raw = bytes;
    }
    toast_strings.push_back(raw);
    std::string b64;
    base64_encode(raw, b64);
    toast_base64.push_back(b64);
    std::string hex;
    hex_encode(raw, hex);
    toast_hex.push_back(hex);
    // text[] / int[] / hstore forms (debezium-format.md §4.3)
    std::string js;
    append_json_string(raw, js);
    toast_compact.push_back("[" + js + "]");
    toast_compact.push_back("{" + js + ":" + js + "}");
    std::string ints = "[";
    for (size_t i = 0; i < raw.size(); ++i) {
      if (i) ints.push_back(',');
      ints += std::to_string(static_cast<unsigned char>(raw[i]));
    }
    ints.push_back(']');
    toast_compact.push_back(ints);
  }
  for (const auto* set : {&toast_strings, &toast_base64, &toast_hex})
    for (const auto& t : *set) toast_string_lengths.add(t.size());
  for (const auto& t : toast_compact) toast_compact_lengths.add(t.size());
}

std::unique_ptr<Decoder::Impl, Decoder::ImplDeleter> Decoder::make_impl(DecoderOptions options) {
  return std::unique_ptr<Impl, ImplDeleter>(new Impl(std::move(options)));
}
void Decoder::ImplDeleter::operator()(Impl* p) const { delete p; }
Decoder::~Decoder() = default;

const DecodeStats& Decoder::stats() const { return impl_->stats; }
const DecoderOptions& Decoder::options() const { return impl_->opt; }

bool Decoder::wants_column_types() const {
  const Impl& d = *impl_;
  return !d.id.schema && (d.id.pending == Impl::Pending::Change || d.id.pending == Impl::Pending::Flat);
}

std::optional<DecodeError> Decoder::identify(const KafkaRecord& record, Change& out) {
  Impl& d = *impl_;
  ++d.stats.records;
  if (record.value) d.stats.bytes += record.value->size();
  return d.guarded(record, out, nullptr);
}

std::optional<DecodeError> Decoder::convert(const TableContext& context, Change& out) {
  Impl& d = *impl_;
  // Only right after identify() of a record (its parts and `record` pointer).
  assert(d.record != nullptr);
  if (d.record == nullptr) return std::nullopt;
  return d.guarded(*d.record, out, &context);
}

std::optional<DecodeError> Decoder::decode(const KafkaRecord& record, Change& out, const TableContext& context) {
  if (auto e = identify(record, out)) return e;
  return convert(context, out);
}

// identify_record() (ctx nullptr) or convert_record(*ctx), its failure
// turned into a DecodeError of `record`.
std::optional<DecodeError> Decoder::Impl::guarded(const KafkaRecord& rec, Change& out, const TableContext* ctx) {
  auto step = [&] {
    if (ctx == nullptr) {
      identify_record(rec, out);
    } else if (id.pending != Pending::None) {
      convert_record(*ctx, out);
      note_decoded(rec, out);
    }
  };
  auto make = [&](DecodeErrorCode code, std::string p, std::string expected, std::string detail) {
    ++stats.errors;
    id.pending = Pending::None;
    DecodeError e;
    e.code = code;
    e.topic = std::string(rec.topic);
    e.partition = rec.partition;
    e.offset = rec.offset;
    e.path = std::move(p);
    e.expected = std::move(expected);
    e.detail = std::move(detail);
    return e;
  };
  // A record unwrapped by its known schema text that fails is read again
  // through unwrap() (see Impl::known_wrapper), and converted again if it
  // failed while converting.
  auto again = [&] {
    if (!known_wrapper_used) return false;
    known_wrapper_ok = false;
    struct Restore {
      bool& ok;
      ~Restore() { ok = true; }
    } restore{known_wrapper_ok};
    identify_record(rec, out);
    if (ctx != nullptr) {
      convert_record(*ctx, out);
      note_decoded(rec, out);
    }
    return true;
  };
  try {
    try {
      step();
    } catch (const Failure&) {
      if (!again()) throw;
    } catch (const simdjson::simdjson_error&) {
      if (!again()) throw;
    }
    return std::nullopt;
  } catch (const Failure& f) {
    return make(f.code, f.path, f.expected, f.detail);
  } catch (const simdjson::simdjson_error& e) {
    DecodeErrorCode code = DecodeErrorCode::InvalidJson;
    std::string expected = "valid JSON";
    if (e.error() == simdjson::UTF8_ERROR) {
      code = DecodeErrorCode::InvalidUtf8;
      expected = "valid UTF-8";
    } else if (e.error() == simdjson::DEPTH_ERROR) {
      code = DecodeErrorCode::TooDeep;
      expected = "nesting of at most " + std::to_string(opt.max_depth) + " levels";
    } else if (e.error() == simdjson::INCORRECT_TYPE) {
      code = DecodeErrorCode::TypeMismatch;
      expected = "a value of another JSON type";
    }
    std::string detail = e.what();
    // Where in the value the parser stopped, when it was reading the payload.
    if (payload_live && rec.value) {
      const char* at = nullptr;
      if (payload_doc.current_location().get(at) == simdjson::SUCCESS && at >= buf.data() &&
          at < buf.data() + buf.size())
        detail += " (at byte " + std::to_string(at - buf.data() + buf_offset) + " of the value)";
    }
    return make(code, current_path(), expected, std::move(detail));
  }
}

}  // namespace cdc2doris::decode
