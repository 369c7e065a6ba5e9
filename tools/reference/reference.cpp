#include "tools/reference/reference.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace cdc2doris::test {

std::vector<TableVerdict> verify_against_reference(Emulator& emu, const std::string& db,
                                                   const std::vector<workload::Record>& records,
                                                   const std::set<std::string>& duplicate_tables,
                                                   const decode::DecoderOptions& options) {
  decode::Decoder decoder{options};
  decode::Change change;
  std::map<std::string, std::string> bodies;
  // The column set of the rows in a table's body: a partial (TOAST) row or a
  // key-only delete is loaded as a fixed partial update of its columns, one
  // load per run of equal column sets, in source order.
  std::map<std::string, std::vector<std::string>> body_columns;
  std::map<std::string, int64_t> decoded_rows;
  auto flush = [&](const std::string& table) {
    auto& body = bodies[table];
    if (body.empty()) return;
    std::map<std::string, std::string> h{{"format", "json"}, {"read_json_by_line", "true"}};
    const auto& cols = body_columns[table];
    if (!cols.empty()) {
      std::string list;
      for (const auto& c : cols) list += (list.empty() ? "" : ",") + c;
      h["partial_columns"] = "true";
      h["columns"] = list;
    } else if (!duplicate_tables.count(table)) {
      h["hidden_columns"] = "__DORIS_DELETE_SIGN__";
    }
    auto res = emu.stream_load("ref_" + db, table, body, h);
    if (res.body.find("\"Status\": \"Success\"") == std::string::npos)
      throw std::runtime_error("reference load into ref_" + db + "." + table + " failed: " + res.body);
    body.clear();
  };
  // Each record's offset, as the broker assigns them (records are produced
  // in order per partition): the decoder tells Debezium's tombstone right
  // after a delete by its offset.
  std::map<std::pair<std::string, int32_t>, int64_t> next_offset;
  for (const auto& r : records) {
    const int64_t offset = next_offset[{r.topic, r.partition}]++;
    decode::KafkaRecord rec{r.topic, r.partition, offset, std::string_view(r.key), std::nullopt, {}};
    if (r.value) rec.value = std::string_view(*r.value);
    if (auto err = decoder.decode(rec, change)) throw std::runtime_error("reference decode: " + err->message());
    if (change.kind != decode::Kind::Change) continue;
    for (const auto& row : change.rows) {
      // A key-only delete (a tombstone whose delete record retention took)
      // has no row to remove in a DUPLICATE KEY table, which Doris refuses
      // as a partial update: the daemon skips it (pipeline key_only_delete).
      if (duplicate_tables.count(change.table) && row.is_delete() && !row.partial_columns.empty()) continue;
      if (body_columns[change.table] != row.partial_columns) {
        flush(change.table);
        body_columns[change.table] = row.partial_columns;
      }
      auto& body = bodies[change.table];
      body += row.json;
      body += '\n';
      decoded_rows[change.table] += 1;
      if (body.size() > (8u << 20)) flush(change.table);
    }
  }
  for (auto& [t, b] : bodies) flush(t);

  std::vector<TableVerdict> out;
  for (const auto& [table, n] : decoded_rows) {
    TableVerdict v;
    v.table = db + "." + table;
    v.duplicate_key = duplicate_tables.count(table) > 0;
    if (v.duplicate_key) {
      auto got = emu.rows(db, table);
      auto want = emu.rows("ref_" + db, table);
      v.rows = static_cast<int64_t>(got.size());
      v.expected_rows = static_cast<int64_t>(want.size());
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      v.match = got == want && v.expected_rows == n;
      if (!v.match) v.detail = "rows differ (" + std::to_string(v.rows) + " vs " + std::to_string(v.expected_rows) + ")";
    } else {
      auto got = emu.checksum(db, table);
      auto want = emu.checksum("ref_" + db, table);
      v.rows = got.second;
      v.expected_rows = want.second;
      v.match = got == want;
      if (!v.match) v.detail = "checksum " + got.first + " vs expected " + want.first;
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace cdc2doris::test
