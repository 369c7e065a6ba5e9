#include "tools/workload/workload.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace cdc2doris;
using namespace cdc2doris::workload;

namespace {

// Applies decoder output the way a UNIQUE KEY table does (last row wins,
// delete sign removes), keyed by the "id" text of the row.
struct DorisTable {
  std::map<int64_t, std::string> rows;
  void apply(const decode::Row& r) {
    REQUIRE(r.partial_columns.empty());
    const std::string& j = r.json;
    REQUIRE(j.rfind("{\"id\":", 0) == 0);
    const int64_t id = std::stoll(j.substr(6, j.find(',') - 6));
    if (r.is_delete()) {
      rows.erase(id);
    } else {
      rows[id] = strip_delete_sign(j);
    }
  }
};

void round_trip(Format f, uint64_t seed, size_t n) {
  Options o;
  o.format = f;
  o.seed = seed;
  o.snapshot_rows_per_table = 3;
  o.keep_change_log = true;
  Generator g(o);
  decode::Decoder dec(g.decoder_options());
  decode::Change c;
  std::map<std::string, DorisTable> state;
  std::map<std::string, std::vector<std::string>> log;
  std::set<char> ops;
  size_t value_bytes = 0, values = 0;
  for (size_t i = 0; i < n; ++i) {
    Record r = g.next();
    decode::KafkaRecord k;
    k.topic = r.topic;
    k.partition = r.partition;
    k.offset = static_cast<int64_t>(i);
    k.key = r.key;
    if (r.value) {
      k.value = *r.value;
      value_bytes += r.value->size();
      ++values;
    }
    auto err = g.decode(dec, k, c);
    INFO(r.topic << " " << (r.value ? *r.value : std::string("<tombstone>")));
    if (err) FAIL(err->message());
    if (c.kind != decode::Kind::Change) {
      CHECK(c.kind == decode::Kind::Tombstone);
      continue;
    }
    ops.insert(c.op);
    CHECK(c.db + "." + c.table == r.table);
    CHECK(c.key_columns == std::vector<std::string>{"id"});
    for (const auto& row : c.rows) {
      state[r.table].apply(row);
      log[r.table].push_back(row.json);
    }
  }
  CHECK(ops == std::set<char>{'c', 'd', 'r', 'u'});
  for (const auto& [name, m] : g.expected()) {
    INFO(name);
    CHECK(state[name].rows == m.rows);
    CHECK(log[name] == m.change_log);
    CHECK(m.doris_rows == log[name].size());
  }
  if (f == Format::Plain) {
    const double avg = static_cast<double>(value_bytes) / static_cast<double>(values);
    CHECK(avg > 450);
    CHECK(avg < 800);
  }
}

}  // namespace

TEST_CASE("Generated records decode to the expected model (plain)", "[workload][roundtrip]") { round_trip(Format::Plain, 1, 3000); }
TEST_CASE("Generated records decode to the expected model (schema)", "[workload][roundtrip]") { round_trip(Format::Schema, 2, 2000); }
TEST_CASE("Generated records decode to the expected model (flattened)", "[workload][roundtrip]") { round_trip(Format::Flattened, 3, 2000); }

TEST_CASE("The generator is deterministic per seed", "[workload]") {
  Options o;
  o.seed = 7;
  Generator a(o), b(o);
  auto ra = a.generate(500);
  auto rb = b.generate(500);
  for (size_t i = 0; i < ra.size(); ++i) {
    CHECK(ra[i].topic == rb[i].topic);
    CHECK(ra[i].key == rb[i].key);
    CHECK(ra[i].value == rb[i].value);
    CHECK(ra[i].partition == partition_for(ra[i].key, o.partitions));
  }
  CHECK(a.expected().at("shop.orders_0").rows == b.expected().at("shop.orders_0").rows);
  o.seed = 8;
  Generator c(o);
  CHECK(c.generate(50)[10].value != ra[10].value);
}

TEST_CASE("DDL per table, UNIQUE by default, DUPLICATE on request", "[workload]") {
  Generator g(Options{});
  REQUIRE(g.tables().size() == 8);
  const std::string u = g.create_table_sql("shop.orders_3");
  CHECK(u.find("CREATE TABLE IF NOT EXISTS `shop`.`orders_3`") == 0);
  CHECK(u.find("UNIQUE KEY(`id`)") != std::string::npos);
  CHECK(u.find("`amount` DECIMAL(18,4)") != std::string::npos);
  CHECK(g.create_table_sql("orders_3", true).find("DUPLICATE KEY(`id`)") != std::string::npos);
}

TEST_CASE("Primary-key changes are a delete and a create with Debezium's headers", "[workload]") {
  Options o;
  o.insert_weight = 1;
  o.update_weight = 0;
  o.delete_weight = 0;
  o.pk_change_weight = 1;
  o.tables = 1;
  Generator g(o);
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    Record r = g.next();
    for (const auto& h : r.headers) {
      if (h.first == "__debezium.newkey") {
        CHECK(r.op == 'd');
        Record tomb = g.next();
        CHECK_FALSE(tomb.value);
        Record create = g.next();
        CHECK(create.op == 'c');
        CHECK(create.key == h.second);
        seen = true;
      }
    }
  }
  CHECK(seen);
}

// Issue 19 item 2: a stream cut at N records must expect exactly what those N
// records produce, also when N falls inside a primary-key change (delete of
// the old key, tombstone, create of the new key) or after a delete whose
// tombstone is cut off.
TEST_CASE("The model follows the records emitted, also when the cut falls inside a key change", "[workload]") {
  Options o;
  o.tables = 1;
  o.insert_weight = 1;
  o.update_weight = 0.5;
  o.delete_weight = 0;
  o.pk_change_weight = 1;
  // Find where the first primary-key change starts.
  Generator probe(o);
  size_t d_at = 0;
  int64_t old_id = -1, new_id = -1;
  for (size_t i = 0; i < 200 && new_id < 0; ++i) {
    Record r = probe.next();
    for (const auto& [name, value] : r.headers) {
      if (name == "__debezium.newkey") {
        d_at = i;
        old_id = std::stoll(r.key.substr(6));
        new_id = std::stoll(value.substr(6));
      }
    }
  }
  REQUIRE(new_id >= 0);
  const std::string table = "shop.orders_0";
  auto rows_after = [&](size_t n) {
    Generator g(o);
    g.generate(n);
    CHECK(g.records_emitted() == n);
    return g.expected().count(table) ? g.expected().at(table).rows : std::map<int64_t, std::string>{};
  };
  SECTION("cut before the delete: the old key is still there, the new one is not") {
    auto rows = rows_after(d_at);
    CHECK(rows.count(old_id) == 1);
    CHECK(rows.count(new_id) == 0);
  }
  SECTION("cut after the delete: neither key") {
    auto rows = rows_after(d_at + 1);
    CHECK(rows.count(old_id) == 0);
    CHECK(rows.count(new_id) == 0);
  }
  SECTION("cut after the tombstone: still neither key") {
    auto rows = rows_after(d_at + 2);
    CHECK(rows.count(old_id) == 0);
    CHECK(rows.count(new_id) == 0);
  }
  SECTION("cut after the create: the new key") {
    auto rows = rows_after(d_at + 3);
    CHECK(rows.count(old_id) == 0);
    CHECK(rows.count(new_id) == 1);
  }
  SECTION("change counts follow the records too") {
    Generator g(o);
    g.generate(d_at + 1);
    const uint64_t changes = g.expected().at(table).changes;
    g.next();  // tombstone: not a change
    CHECK(g.expected().at(table).changes == changes);
    g.next();  // the create
    CHECK(g.expected().at(table).changes == changes + 1);
  }
}

TEST_CASE("Decoding any prefix of the stream gives the model of that prefix", "[workload][roundtrip]") {
  Options o;
  o.tables = 2;
  o.pk_change_weight = 0.5;
  // Its column types type every prefix (the decoder keeps a pointer to them).
  const Generator types(o);
  decode::Decoder dec(types.decoder_options());
  for (size_t n : {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144}) {
    Generator g(o);
    std::map<std::string, DorisTable> state;
    decode::Change c;
    for (size_t i = 0; i < n; ++i) {
      Record r = g.next();
      decode::KafkaRecord k;
      k.topic = r.topic;
      k.partition = r.partition;
      k.offset = static_cast<int64_t>(i);
      k.key = r.key;
      if (r.value) k.value = *r.value;
      auto err = types.decode(dec, k, c);
      if (err) FAIL(err->message());
      if (c.kind != decode::Kind::Change) continue;
      for (const auto& row : c.rows) state[r.table].apply(row);
    }
    for (const auto& [name, m] : g.expected()) {
      INFO("N = " << n << ", " << name);
      CHECK(state[name].rows == m.rows);
    }
  }
}

TEST_CASE("toast_partial_percent sets the share of a TOAST table's updates that are partial", "[workload]") {
  auto partial_share = [](std::optional<int> percent) {
    Options o;
    o.tables = 2;
    o.toast_tables = 2;
    o.toast_partial_percent = percent;
    Generator g(o);
    size_t updates = 0, partial = 0;
    for (int i = 0; i < 6000; ++i) {
      Record r = g.next();
      if (r.op != 'u') continue;
      ++updates;
      if (r.value->find("__debezium_unavailable_value") != std::string::npos) ++partial;
    }
    REQUIRE(updates > 1000);
    return static_cast<double>(partial) / static_cast<double>(updates);
  };
  CHECK(partial_share(0) == 0.0);
  CHECK(partial_share(100) == 1.0);
  CHECK(partial_share(50) == Approx(0.5).margin(0.05));
  CHECK(partial_share(std::nullopt) == Approx(1.0 / 3).margin(0.05));
}
