#pragma once
// Binary encoding of keys and values (docs/state.md). Integers in keys are
// big-endian so that RocksDB's bytewise order is numeric order; strings are
// length-prefixed so no character needs escaping.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cdc2doris::state::codec {

// Thrown by Reader on truncated or malformed input; the store turns it into
// StateError(Corrupt) naming the key.
struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void put_u8(std::string& out, uint8_t v) { out.push_back(static_cast<char>(v)); }
inline void put_be32(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}
inline void put_be64(std::string& out, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}
inline void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
inline void put_str(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  uint8_t u8() {
    need(1);
    return static_cast<uint8_t>(in_[pos_++]);
  }
  uint32_t be32() {
    need(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(in_[pos_++]);
    return v;
  }
  uint64_t be64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in_[pos_++]);
    return v;
  }
  int64_t i64() { return static_cast<int64_t>(be64()); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = u8();
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    throw DecodeError("varint too long");
  }
  std::string_view str() {
    uint64_t n = varint();
    if (n > in_.size() - pos_) throw DecodeError("string length past end");
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string_view rest() {
    std::string_view s = in_.substr(pos_);
    pos_ = in_.size();
    return s;
  }
  bool done() const { return pos_ == in_.size(); }
  void expect_done() const {
    if (!done()) throw DecodeError("trailing bytes");
  }

 private:
  void need(size_t n) const {
    if (in_.size() - pos_ < n) throw DecodeError("truncated");
  }
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace cdc2doris::state::codec
