#pragma once
// Avro binary encoding written out by hand for the tests (the spec's rules,
// not Avro C's writer), so the bridge is checked against an independent
// encoder, and Confluent's framing around it.
#include <cstdint>
#include <cstring>
#include <string>

namespace cdc2doris::test::avro_bin {

// int and long: zig-zag, then base-128 varint, low group first.
inline std::string varint(int64_t v) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  std::string out;
  do {
    unsigned char b = z & 0x7f;
    z >>= 7;
    out += static_cast<char>(z ? (b | 0x80) : b);
  } while (z);
  return out;
}
inline std::string boolean(bool b) { return std::string(1, b ? '\1' : '\0'); }
inline std::string bytes(const std::string& s) { return varint(static_cast<int64_t>(s.size())) + s; }
inline std::string string(const std::string& s) { return bytes(s); }
inline std::string float64(double d) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &d, 8);  // little-endian, as on x86-64
  return out;
}
inline std::string float32(float f) {
  std::string out(4, '\0');
  std::memcpy(out.data(), &f, 4);
  return out;
}
// A union's branch index, then the value.
inline std::string branch(int64_t i, const std::string& value = "") { return varint(i) + value; }

// Magic byte 0, the id as 4 bytes big-endian, the body.
inline std::string framed(uint32_t id, const std::string& body) {
  std::string out(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((id >> shift) & 0xff);
  return out + body;
}

}  // namespace cdc2doris::test::avro_bin
