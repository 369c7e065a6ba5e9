// libFuzzer target for the Debezium decoder. The first byte picks decoder
// options; when its bit 0x80 is set, the input's first line is the Kafka key
// and the rest the value. Any crash, sanitizer report or leak is a finding,
// and so is a record decoded differently when its repeated schema text is
// recognised than when it is parsed. Decoded rows also go through a RowCheck
// (delivery.check_rows) with a limit of every kind, and the raw value does too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/decode/decoder.hpp"
#include "core/decode/row_check.hpp"
#include "core/decode/wire_values.hpp"

using namespace cdc2doris::decode;

namespace {
// reference: a decoder that parses every schema text (never recognises a
// repeated one); its verdict must equal the default decoder's.
Decoder& decoder_for(uint8_t flags, bool reference) {
  static Decoder* decoders[32] = {};
  const unsigned idx = (flags & 15u) | (reference ? 16u : 0u);
  if (decoders[idx] == nullptr) {
    DecoderOptions o;
    switch (idx & 3u) {
      case 0: o.envelope = Envelope::Auto; break;
      case 1: o.envelope = Envelope::Schema; break;
      case 2: o.envelope = Envelope::Plain; break;
      default: o.envelope = Envelope::Flattened; break;
    }
    o.time_zone = (idx & 4u) ? "Europe/Berlin" : "UTC";
    o.binary_mode = (idx & 8u) ? BinaryMode::Hex : BinaryMode::Base64;
    o.max_depth = 16;
    o.extra_columns.sequence = (idx & 8u) ? "_seq" : "";
    o.recognise_repeated_schemas = !reference;
    decoders[idx] = new Decoder(o);
  }
  return *decoders[idx];
}
RowCheck& row_check() {
  using K = ColumnLimit::Kind;
  static RowCheck rc({{"id", "BIGINT", K::Integer, 0, 0, 64, true},
                      {"name", "VARCHAR(5)", K::Bytes, 5, 0, 0, false},
                      {"amount", "DECIMAL(5,2)", K::Decimal, 0, 3, 0, false},
                      {"t", "TINYINT", K::Integer, 0, 0, 8, false},
                      {"l", "LARGEINT", K::Integer, 0, 0, 128, false},
                      {"d", "DATE", K::Date, 0, 0, 0, false}});
  return rc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  KafkaRecord r;
  r.topic = (flags & 0x40) ? "__debezium-heartbeat.x" : "srv.db.tbl";
  r.partition = 1;
  r.offset = 2;
  std::string_view value = rest;
  if (flags & 0x80) {
    auto nl = rest.find('\n');
    if (nl != std::string_view::npos) {
      r.key = rest.substr(0, nl);
      value = rest.substr(nl + 1);
    }
  }
  if (!(flags & 0x20)) r.value = value;
  Change c;
  auto err = decoder_for(flags, false).decode(r, c);
  if (!err) {
    for (const auto& row : c.rows) {
      if (row.json.empty() || row.json.front() != '{' || row.json.back() != '}') __builtin_trap();
      (void)row_check().check(row.json, row.partial_columns.empty());
    }
  }
  // The same record through a decoder that parses every schema: the same
  // error message, or the same rows.
  Change ref;
  auto ref_err = decoder_for(flags, true).decode(r, ref);
  if (err.has_value() != ref_err.has_value()) __builtin_trap();
  if (err && err->message() != ref_err->message()) __builtin_trap();
  if (!err) {
    if (c.kind != ref.kind || c.op != ref.op || c.rows.size() != ref.rows.size()) __builtin_trap();
    for (size_t i = 0; i < c.rows.size(); ++i)
      if (c.rows[i].json != ref.rows[i].json) __builtin_trap();
  }
  (void)row_check().check(value, (flags & 1) != 0);
  // The pure converters on raw bytes.
  std::string out;
  decimal_from_twos_complement(value.substr(0, 64), static_cast<int8_t>(flags), out);
  out.clear();
  (void)wkb_to_wkt(value, out);
  out.clear();
  (void)format_zoned_timestamp(value.substr(0, 64), nullptr, out);
  out.clear();
  (void)base64_decode(value.substr(0, 256), out);
  return 0;
}
