// Encoding of the DDL record (docs/state.md, key "s/"): a version byte, then
// the fields; a newer version is refused as corrupt by this build.
#include "state/codec.hpp"
#include "state/detail.hpp"

namespace cdc2doris::state {

const char* to_string(DdlState s) {
  switch (s) {
    case DdlState::Pending: return "PENDING";
    case DdlState::Done: return "DONE";
    case DdlState::Refused: return "REFUSED";
  }
  return "UNKNOWN";
}

namespace detail {

namespace {
// 2 appends the newest truncate (truncate_seq, truncate_at); 1 is still read.
constexpr uint8_t kDdlValueVersion = 2;
}

std::string encode_ddl(const DdlRecord& rec) {
  // Version 1 while no truncate was applied: an older build still reads it.
  const bool truncated = rec.truncate_seq || !rec.truncate_at.empty();
  std::string v;
  codec::put_u8(v, truncated ? kDdlValueVersion : 1);
  codec::put_be64(v, rec.version);
  codec::put_u8(v, static_cast<uint8_t>(rec.state));
  codec::put_be64(v, rec.epoch);
  codec::put_be64(v, static_cast<uint64_t>(rec.created_unix_ms));
  codec::put_str(v, rec.error);
  codec::put_varint(v, rec.steps.size());
  for (const auto& s : rec.steps) {
    codec::put_u8(v, s.kind);
    codec::put_str(v, s.column);
    codec::put_str(v, s.arg);
    codec::put_str(v, s.statement);
  }
  if (!truncated) return v;
  codec::put_u8(v, rec.truncate_seq ? 1 : 0);
  codec::put_be64(v, static_cast<uint64_t>(rec.truncate_seq.value_or(0)));
  codec::put_str(v, rec.truncate_at);
  return v;
}

DdlRecord decode_ddl(std::string_view value) {
  codec::Reader r(value);
  const uint8_t version = r.u8();
  if (version != 1 && version != kDdlValueVersion)
    throw codec::DecodeError("DDL record of unknown version " + std::to_string(version));
  DdlRecord rec;
  rec.version = r.be64();
  const uint8_t st = r.u8();
  if (st < 1 || st > 3) throw codec::DecodeError("DDL record state " + std::to_string(st));
  rec.state = static_cast<DdlState>(st);
  rec.epoch = r.be64();
  rec.created_unix_ms = static_cast<int64_t>(r.be64());
  rec.error = std::string(r.str());
  const uint64_t n = r.varint();
  if (n > 10000) throw codec::DecodeError("DDL record with " + std::to_string(n) + " steps");
  for (uint64_t i = 0; i < n; ++i) {
    DdlStep s;
    s.kind = r.u8();
    s.column = std::string(r.str());
    s.arg = std::string(r.str());
    s.statement = std::string(r.str());
    rec.steps.push_back(std::move(s));
  }
  if (version >= 2) {
    const bool has_seq = r.u8() != 0;
    const auto seq = static_cast<int64_t>(r.be64());
    if (has_seq) rec.truncate_seq = seq;
    rec.truncate_at = std::string(r.str());
  }
  r.expect_done();
  return rec;
}

}  // namespace detail
}  // namespace cdc2doris::state
