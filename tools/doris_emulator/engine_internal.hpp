#pragma once
// Helpers shared by the emulator engine's source files (not a public header):
// header access, Basic auth, labels, the WAL record encoding and the BE
// stream-load reply.
#include "tools/doris_emulator/engine.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cdc2doris::emu::detail {

inline std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// The C-locale isspace set, inline: trim runs for every line and value and
// std::isspace is an out-of-line locale lookup.
constexpr bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

inline std::string header(const std::map<std::string, std::string>& h, const std::string& name) {
  auto it = h.find(name);
  return it == h.end() ? std::string() : it->second;
}

// Doris' BE tests every optional stream-load header with
// `!http_req->header(X).empty()` (be/src/http/action/stream_load.cpp), so an
// empty header is the same as an absent one (e.g. `where: ''`, `jsonpaths: ''`).
inline bool has_header(const std::map<std::string, std::string>& h, const std::string& name) {
  auto it = h.find(name);
  return it != h.end() && !it->second.empty();
}

inline bool base64_decode(std::string_view in, std::string* out) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint32_t buf = 0;
  int bits = 0;
  out->clear();
  for (char c : in) {
    if (c == '=') break;
    auto p = chars.find(c);
    if (p == std::string::npos) return false;
    buf = (buf << 6) | static_cast<uint32_t>(p);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return true;
}

// Splits "Basic base64(user:pw)"; user "u@cluster" loses the cluster part.
inline bool parse_basic(std::string_view authz, std::string* user, std::string* pw) {
  if (authz.substr(0, 6) != "Basic ") return false;
  std::string dec;
  if (!base64_decode(trim(authz.substr(6)), &dec)) return false;
  auto colon = dec.find(':');
  if (colon == std::string::npos) return false;
  *user = dec.substr(0, colon);
  *pw = dec.substr(colon + 1);
  auto at = user->find('@');
  if (at != std::string::npos) user->resize(at);
  return true;
}

inline bool label_ok(const std::string& l) {
  if (l.empty() || l.size() > 128) return false;
  for (char c : l)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':')) return false;
  return true;
}

inline std::string uuid() {
  static std::mt19937_64 rng{std::random_device{}()};
  char b[40];
  uint64_t a = rng(), c = rng();
  std::snprintf(b, sizeof b, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(c >> 48), static_cast<unsigned long long>(c & 0xffffffffffffULL));
  return b;
}

inline const std::string kFe = "TStatus: errCode = 2, detailMessage = ";
// fe FrontendServiceImpl.checkPasswordAndPrivs (load begin, 2PC): a user
// without LOAD_PRIV on the table.
inline const std::string kLoadDenied =
    "Access denied; you need (at least one of) the (LOAD) privilege(s) for this operation";

// ---- write-ahead log encoding --------------------------------------------
inline void put_u32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void put_i64(std::string* s, int64_t v) {
  auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}
inline void put_s(std::string* s, std::string_view v) {
  put_u32(s, static_cast<uint32_t>(v.size()));
  s->append(v);
}

struct Reader {
  std::string_view d;
  size_t p = 0;
  uint32_t u32() {
    if (p + 4 > d.size()) throw std::runtime_error("truncated wal record");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(d[p + i])) << (8 * i);
    p += 4;
    return v;
  }
  int64_t i64() {
    if (p + 8 > d.size()) throw std::runtime_error("truncated wal record");
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(d[p + i])) << (8 * i);
    p += 8;
    return static_cast<int64_t>(v);
  }
  std::string s() {
    uint32_t n = u32();
    if (p + n > d.size()) throw std::runtime_error("truncated wal record");
    std::string r(d.substr(p, n));
    p += n;
    return r;
  }
};

// ---- load replies ---------------------------------------------------------
struct LoadReply {
  int64_t txn_id = -1;
  std::string label, comment;
  bool two_pc = false;
  std::string status = "Fail", existing, message;
  int64_t total = 0, loaded = 0, filtered = 0, unselected = 0, bytes = 0;
  int64_t load_ms = 0, begin_ms = 0, put_ms = 0, read_ms = 0, write_ms = 0, receive_ms = 0, commit_ms = 0;
  std::string error_url;

  std::string render() const {
    PrettyObject o;
    o.num("TxnId", txn_id).str("Label", label).str("Comment", comment).str("TwoPhaseCommit", two_pc ? "true" : "false")
        .str("Status", status);
    if (status == "Label Already Exists") o.str("ExistingJobStatus", existing);
    o.str("Message", message)
        .num("NumberTotalRows", total)
        .num("NumberLoadedRows", loaded)
        .num("NumberFilteredRows", filtered)
        .num("NumberUnselectedRows", unselected)
        .num("LoadBytes", bytes)
        .num("LoadTimeMs", load_ms)
        .num("BeginTxnTimeMs", begin_ms)
        .num("StreamLoadPutTimeMs", put_ms)
        .num("ReadDataTimeMs", read_ms)
        .num("WriteDataTimeMs", write_ms)
        .num("ReceiveDataTimeMs", receive_ms)
        .num("CommitAndPublishTimeMs", commit_ms);
    if (!error_url.empty()) o.str("ErrorURL", error_url);
    return o.done(true);
  }
};

inline Reply fail_reply(const std::string& label, const std::string& comment, bool two_pc, const std::string& msg) {
  LoadReply r;
  r.label = label;
  r.comment = comment;
  r.two_pc = two_pc;
  r.message = msg;
  return Reply{r.render(), true};
}

inline std::string decode_sep(const std::string& s) {
  // "\x01" style hex separators as Doris accepts them.
  if (s.size() > 2 && s[0] == '\\' && (s[1] == 'x' || s[1] == 'X') && s.size() % 2 == 0) {
    std::string r;
    for (size_t i = 2; i + 1 < s.size() + 1; i += 2) {
      auto hx = s.substr(i, 2);
      char* end = nullptr;
      long v = std::strtol(hx.c_str(), &end, 16);
      if (*end) return s;
      r.push_back(static_cast<char>(v));
    }
    return r;
  }
  if (s == "\\t") return "\t";
  if (s == "\\n") return "\n";
  return s;
}

}  // namespace cdc2doris::emu::detail
