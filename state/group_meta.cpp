#include "state/group_meta.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <tuple>

namespace cdc2doris::state {

namespace {

bool special(char c) {
  return c == '%' || c == ' ' || c == ',' || c == ';' || c == ':' || c == '*' || static_cast<unsigned char>(c) < 0x20 ||
         c == 0x7f;
}

std::string esc(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (special(c)) {
      out += '%';
      out += hex[(static_cast<unsigned char>(c) >> 4) & 0xf];
      out += hex[static_cast<unsigned char>(c) & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> unesc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    unsigned v = 0;
    auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (r.ec != std::errc() || r.ptr != s.data() + i + 3) return std::nullopt;
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

template <typename T>
bool num(std::string_view s, T& v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

namespace {

std::string pending_head(uint64_t epoch, int64_t end_offset, std::string_view prefix) {
  return "c2d1 P " + std::to_string(epoch) + " " + std::to_string(end_offset) + " " + esc(prefix) + " ";
}

std::string table_list(const std::vector<EpochTable>& tables) {
  std::map<std::string, std::vector<const EpochTable*>> by_db;
  for (const auto& t : tables) by_db[t.db].push_back(&t);
  std::string list;
  for (auto& [db, ts] : by_db) {
    std::sort(ts.begin(), ts.end(), [](const EpochTable* a, const EpochTable* b) { return a->table < b->table; });
    if (!list.empty()) list += ';';
    list += esc(db) + ':';
    bool first = true;
    for (const auto* t : ts) {
      if (!first) list += ',';
      first = false;
      list += esc(t->table);
      if (t->parts > 1) list += '*' + std::to_string(t->parts);
      for (size_t i = 0; i < t->order.size(); ++i) list += (i == 0 ? '/' : '.') + std::to_string(t->order[i]);
    }
  }
  return list;
}

}  // namespace

std::string encode_pending(uint64_t epoch, int64_t end_offset, std::string_view prefix,
                           const std::vector<EpochTable>& tables, int64_t precommit_floor_ms) {
  // "-": an epoch that loaded nothing (its records were all skipped).
  return pending_head(epoch, end_offset, prefix) + (tables.empty() ? std::string("-") : table_list(tables)) + " " +
         std::to_string(precommit_floor_ms);
}

size_t pending_bytes_bound(uint64_t epoch, int64_t end_offset, std::string_view prefix,
                           const std::vector<EpochTable>& tables, uint32_t max_parts) {
  std::vector<EpochTable> grown = tables;
  for (auto& t : grown) {
    t.parts = std::max(t.parts, max_parts);
    // A table that may need a commit order (non-empty `order`: sequence mode)
    // is bounded with one as long as its grown part count writes out.
    if (!t.order.empty()) {
      t.order.resize(t.parts);
      for (uint32_t i = 0; i < t.parts; ++i) t.order[i] = i;
    }
  }
  // The floor as wide as a Unix ms time can get in this format.
  return encode_pending(epoch, end_offset, prefix, grown, std::numeric_limits<int64_t>::max()).size();
}

std::string encode_reference(uint64_t epoch, int64_t end_offset, std::string_view prefix,
                             std::string_view anchor_topic, int32_t anchor_partition, const EpochTable& witness,
                             int64_t precommit_floor_ms) {
  return "c2d1 R " + std::to_string(epoch) + " " + std::to_string(end_offset) + " " + esc(prefix) + " " +
         esc(anchor_topic) + " " + std::to_string(anchor_partition) + " " +
         (witness.table.empty() ? std::string("-") : esc(witness.db) + ":" + esc(witness.table)) + " " +
         std::to_string(precommit_floor_ms);
}

std::string encode_committed(uint64_t epoch, std::string_view prefix) {
  return "c2d1 C " + std::to_string(epoch) + " " + esc(prefix);
}

GroupMeta decode_group_meta(std::string_view s) {
  GroupMeta legacy;
  auto f = split(s, ' ');
  if (f.size() < 4 || f[0] != "c2d1") return legacy;
  GroupMeta m;
  if (!num(f[2], m.epoch)) return legacy;
  if (f[1] == "C" && f.size() == 4) {
    auto p = unesc(f[3]);
    if (!p) return legacy;
    m.kind = GroupMeta::Kind::Committed;
    m.label_prefix = *p;
    return m;
  }
  // An older daemon wrote P and R without the floor (6 and 8 fields).
  if (f[1] == "R" && (f.size() == 8 || (f.size() == 9 && num(f[8], m.precommit_floor_ms))) &&
      num(f[3], m.end_offset) && num(f[6], m.anchor_partition)) {
    auto p = unesc(f[4]);
    auto topic = unesc(f[5]);
    if (!p || !topic || topic->empty()) return legacy;
    m.kind = GroupMeta::Kind::Reference;
    m.label_prefix = *p;
    m.anchor_topic = *topic;
    if (f[7] == "-") return m;  // the epoch loaded nothing
    auto colon = f[7].find(':');
    if (colon == std::string_view::npos) return legacy;
    auto db = unesc(f[7].substr(0, colon));
    auto table = unesc(f[7].substr(colon + 1));
    if (!db || !table || table->empty()) return legacy;
    m.witness = {*db, *table, 1, {}};
    return m;
  }
  if (f[1] != "P" || (f.size() != 6 && !(f.size() == 7 && num(f[6], m.precommit_floor_ms))) ||
      !num(f[3], m.end_offset))
    return legacy;
  auto p = unesc(f[4]);
  if (!p) return legacy;
  m.kind = GroupMeta::Kind::Pending;
  m.label_prefix = *p;
  if (f[5] == "?") {  // an older daemon's list that did not fit
    m.tables_listed = false;
    return m;
  }
  if (f[5] == "-") return m;
  for (auto dbpart : split(f[5], ';')) {
    auto colon = dbpart.find(':');
    if (colon == std::string_view::npos) return legacy;
    auto db = unesc(dbpart.substr(0, colon));
    if (!db) return legacy;
    for (auto tpart : split(dbpart.substr(colon + 1), ',')) {
      EpochTable t;
      t.db = *db;
      auto star = tpart.find('*');
      auto name = unesc(tpart.substr(0, star));
      if (!name || name->empty()) return legacy;
      t.table = *name;
      if (star != std::string_view::npos) {
        auto count = tpart.substr(star + 1);
        const auto slash = count.find('/');
        if (!num(count.substr(0, slash), t.parts) || t.parts == 0) return legacy;
        if (slash != std::string_view::npos) {
          // A permutation of 0 .. parts-1, or the metadata is not ours.
          std::vector<bool> seen(t.parts, false);
          for (auto n : split(count.substr(slash + 1), '.')) {
            uint32_t part = 0;
            if (!num(n, part) || part >= t.parts || seen[part]) return legacy;
            seen[part] = true;
            t.order.push_back(part);
          }
          if (t.order.size() != t.parts) return legacy;
        }
      }
      m.tables.push_back(std::move(t));
    }
  }
  std::sort(m.tables.begin(), m.tables.end(),
            [](const EpochTable& a, const EpochTable& b) { return std::tie(a.db, a.table) < std::tie(b.db, b.table); });
  return m;
}

}  // namespace cdc2doris::state
