#include "tools/doris_emulator/mysql_protocol.hpp"

#include <openssl/evp.h>

#include <cstring>

namespace cdc2doris::emu::mysql {
namespace {

void put_u16(std::string* o, uint16_t v) {
  o->push_back(static_cast<char>(v & 0xff));
  o->push_back(static_cast<char>(v >> 8));
}
void put_u32(std::string* o, uint32_t v) {
  for (int i = 0; i < 4; ++i) o->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string sha1(std::string_view a, std::string_view b = {}) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr);
  EVP_DigestUpdate(ctx, a.data(), a.size());
  if (!b.empty()) EVP_DigestUpdate(ctx, b.data(), b.size());
  EVP_DigestFinal_ex(ctx, md, &n);
  EVP_MD_CTX_free(ctx);
  return std::string(reinterpret_cast<char*>(md), n);
}

// Reads payload fields in order; every read fails softly past the end.
struct In {
  std::string_view d;
  size_t p = 0;
  bool ok = true;
  uint64_t uint(size_t n) {
    if (p + n > d.size()) { ok = false; return 0; }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(d[p + i])) << (8 * i);
    p += n;
    return v;
  }
  uint64_t lenenc() {
    uint64_t f = uint(1);
    if (f < 0xfb) return f;
    if (f == 0xfc) return uint(2);
    if (f == 0xfd) return uint(3);
    if (f == 0xfe) return uint(8);
    ok = false;
    return 0;
  }
  std::string bytes(size_t n) {
    if (p + n > d.size()) { ok = false; return {}; }
    std::string r(d.substr(p, n));
    p += n;
    return r;
  }
  std::string cstr() {
    size_t e = d.find('\0', p);
    if (e == std::string_view::npos) { ok = false; return {}; }
    std::string r(d.substr(p, e - p));
    p = e + 1;
    return r;
  }
  bool at_end() const { return p >= d.size(); }
};

}  // namespace

void put_lenenc(std::string* o, uint64_t v) {
  if (v < 0xfb) {
    o->push_back(static_cast<char>(v));
  } else if (v <= 0xffff) {
    o->push_back(static_cast<char>(0xfc));
    put_u16(o, static_cast<uint16_t>(v));
  } else if (v <= 0xffffff) {
    o->push_back(static_cast<char>(0xfd));
    for (int i = 0; i < 3; ++i) o->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  } else {
    o->push_back(static_cast<char>(0xfe));
    for (int i = 0; i < 8; ++i) o->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

void put_lenenc_str(std::string* o, std::string_view s) {
  put_lenenc(o, s.size());
  o->append(s);
}

void frame(std::string* wire, std::string_view payload, uint8_t* seq) {
  constexpr size_t kMax = 0xffffff;
  for (;;) {
    size_t n = std::min(payload.size(), kMax);
    for (int i = 0; i < 3; ++i) wire->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    wire->push_back(static_cast<char>((*seq)++));
    wire->append(payload.substr(0, n));
    payload.remove_prefix(n);
    // A payload of exactly 2^24-1 bytes is followed by an empty packet.
    if (n < kMax) break;
  }
}

std::string handshake_v10(uint32_t conn_id, std::string_view scramble20, std::string_view server_version) {
  std::string o;
  o.push_back(10);
  o.append(server_version);
  o.push_back('\0');
  put_u32(&o, conn_id);
  o.append(scramble20.substr(0, 8));
  o.push_back('\0');
  put_u16(&o, static_cast<uint16_t>(kServerCaps & 0xffff));
  o.push_back(33);  // utf8_general_ci
  put_u16(&o, kStatusAutocommit);
  put_u16(&o, static_cast<uint16_t>(kServerCaps >> 16));
  o.push_back(21);  // auth data length incl. the trailing NUL
  o.append(10, '\0');
  o.append(scramble20.substr(8, 12));
  o.push_back('\0');
  o.append("mysql_native_password");
  o.push_back('\0');
  return o;
}

bool parse_handshake_response(std::string_view payload, HandshakeResponse* out) {
  In in{payload};
  out->caps = static_cast<uint32_t>(in.uint(4));
  if (!(out->caps & kProtocol41)) return false;  // 3.20 clients are not supported (nor by Doris)
  in.uint(4);   // max packet size
  in.uint(1);   // character set
  in.bytes(23);
  out->user = in.cstr();
  if (out->caps & kPluginAuthLenencData) out->auth = in.bytes(in.lenenc());
  else if (out->caps & kSecureConnection) out->auth = in.bytes(in.uint(1));
  else out->auth = in.cstr();
  if ((out->caps & kConnectWithDb) && !in.at_end()) out->db = in.cstr();
  if ((out->caps & kPluginAuth) && !in.at_end()) out->plugin = in.cstr();
  return in.ok;
}

std::string auth_switch_request(std::string_view scramble20) {
  std::string o;
  o.push_back(static_cast<char>(0xfe));
  o.append("mysql_native_password");
  o.push_back('\0');
  o.append(scramble20);
  o.push_back('\0');
  return o;
}

bool check_native_password(std::string_view scramble20, std::string_view response, std::string_view password) {
  if (password.empty()) return response.empty();
  if (response.size() != 20) return false;
  std::string h1 = sha1(password);
  std::string h2 = sha1(h1);
  std::string mix = sha1(scramble20, h2);
  for (size_t i = 0; i < 20; ++i)
    if (static_cast<char>(h1[i] ^ mix[i]) != response[i]) return false;
  return true;
}

std::string ok_packet(uint64_t affected_rows, uint16_t status) {
  std::string o;
  o.push_back('\0');
  put_lenenc(&o, affected_rows);
  put_lenenc(&o, 0);  // last insert id
  put_u16(&o, status);
  put_u16(&o, 0);     // warnings
  return o;
}

std::string err_packet(uint16_t code, std::string_view sqlstate, std::string_view message) {
  std::string o;
  o.push_back(static_cast<char>(0xff));
  put_u16(&o, code);
  o.push_back('#');
  o.append(sqlstate.substr(0, 5));
  o.append(message);
  return o;
}

std::string eof_packet(uint16_t status) {
  std::string o;
  o.push_back(static_cast<char>(0xfe));
  put_u16(&o, 0);  // warnings
  put_u16(&o, status);
  return o;
}

std::string column_definition(const ResultColumn& c) {
  std::string o;
  put_lenenc_str(&o, "def");
  put_lenenc_str(&o, c.schema);
  put_lenenc_str(&o, c.table);
  put_lenenc_str(&o, c.table);
  put_lenenc_str(&o, c.name);
  put_lenenc_str(&o, c.name);
  o.push_back(0x0c);
  const bool text = c.type == Type::VarString || c.type == Type::Json || c.type == Type::Date ||
                    c.type == Type::DateTime;
  put_u16(&o, text ? 33 : 63);  // utf8_general_ci or binary
  uint32_t len = 0;
  switch (c.type) {
    case Type::Tiny: len = 4; break;
    case Type::Short: len = 6; break;
    case Type::Long: len = 11; break;
    case Type::LongLong: len = 20; break;
    case Type::Float: len = 12; break;
    case Type::Double: len = 22; break;
    case Type::NewDecimal: len = 40; break;
    case Type::Date: len = 10; break;
    case Type::DateTime: len = 26; break;
    default: len = 65533 * 3;
  }
  if (c.length) len = c.length;
  put_u32(&o, len);
  o.push_back(static_cast<char>(c.type));
  put_u16(&o, 0);  // flags
  o.push_back(c.type == Type::Float || c.type == Type::Double || c.type == Type::VarString ? 0x1f : 0);
  put_u16(&o, 0);
  return o;
}

std::string text_row(const std::vector<std::optional<std::string>>& values) {
  std::string o;
  for (auto& v : values) {
    if (!v) o.push_back(static_cast<char>(0xfb));
    else put_lenenc_str(&o, *v);
  }
  return o;
}

}  // namespace cdc2doris::emu::mysql
