#include "core/doris/label.hpp"

#include <charconv>
#include <cstdio>

namespace cdc2doris::doris {

namespace {
bool label_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == ':';
}

// The digits inside the first "[...]" that follows `anchor`.
std::optional<int64_t> bracketed_int_after(std::string_view msg, std::string_view anchor) {
  auto pos = msg.find(anchor);
  if (pos == std::string_view::npos) return std::nullopt;
  pos += anchor.size();
  while (pos < msg.size() && msg[pos] == ' ') ++pos;
  if (pos >= msg.size() || msg[pos] != '[') return std::nullopt;
  ++pos;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(msg.data() + pos, msg.data() + msg.size(), v);
  if (ec != std::errc{} || p == msg.data() + msg.size() || *p != ']') return std::nullopt;
  return v;
}
}  // namespace

bool is_valid_label(std::string_view label) {
  if (label.empty() || label.size() > kMaxLabelLength) return false;
  for (char c : label)
    if (!label_char(c)) return false;
  return true;
}

std::string sanitize_label_part(std::string_view part) {
  std::string out(part);
  for (char& c : out)
    if (!label_char(c)) c = '_';
  return out;
}

std::string stable_hash_hex(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {
// Built with append(): GCC 12 at -O3 raises a false -Wrestrict on
// `"literal" + std::string` (GCC bug 105329).
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) out.append(p);
  return out;
}
}  // namespace

std::string make_label(std::string_view prefix, std::string_view db, std::string_view table, uint64_t epoch) {
  return make_label(prefix, db, table, epoch, 0);
}

std::string make_label(std::string_view prefix, std::string_view db, std::string_view table, uint64_t epoch,
                       uint32_t part) {
  const std::string p = sanitize_label_part(prefix);
  const std::string sdb = sanitize_label_part(db);
  const std::string stable = sanitize_label_part(table);
  const std::string ep = part == 0 ? std::to_string(epoch) : join({std::to_string(epoch), "-", std::to_string(part)});
  std::string mid = join({sdb, "_", stable});
  std::string label = join({p, "_", mid, "_", ep});
  // Sanitising can map different names onto one label ("a.b" and "a_b"), so a
  // hash is added whenever the input was not already label-safe, too.
  const bool lossy = sdb != db || stable != table;
  if (!lossy && label.size() <= kMaxLabelLength) return label;
  const std::string hash = stable_hash_hex(join({db, "\x1f", table}));
  const size_t tail = 1 + ep.size();
  const size_t fixed = p.size() + 1 + 1 + hash.size() + tail;
  if (fixed >= kMaxLabelLength) {
    // Even the prefix is too long: keep its head, hash everything else.
    const std::string whole = stable_hash_hex(join({prefix, "\x1f", db, "\x1f", table}));
    const size_t keep = kMaxLabelLength - 1 - whole.size() - tail;
    return join({std::string_view(p).substr(0, keep), "_", whole, "_", ep});
  }
  const size_t room = kMaxLabelLength - fixed;
  if (mid.size() > room) mid.resize(room);
  return join({p, "_", mid, "_", hash, "_", ep});
}

std::optional<int64_t> parse_label_txn_id(std::string_view message) {
  return bracketed_int_after(message, "relate to txn");
}

std::optional<int64_t> parse_transaction_id(std::string_view message) {
  return bracketed_int_after(message, "transaction");
}

}  // namespace cdc2doris::doris
