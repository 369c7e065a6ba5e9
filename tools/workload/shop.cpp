#include "tools/workload/shop.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>

#include "tools/workload/shop_tables.hpp"

namespace cdc2doris::workload {

using namespace shop;  // the scenario is written in its tables' terms

namespace {

const char* kFirst[] = {"Anna", "Ben", "Chloé", "David", "Emma", "François", "Grace", "Hiro", "Ines", "José",
                        "Kai", "Lena", "Mohammed", "Nora", "Oliver", "Priya", "Quinn", "Rosa", "Sven", "Zoë",
                        "Wei", "Yuki", "Anna \"Annie\"", "Björn"};
const char* kLast[] = {"Smith", "O'Brien", "Müller", "García", "Tanaka", "Kowalski", "Nguyen", "Rossi",
                       "李", "Dubois", "Andersson", "Okafor", "Silva", "Ivanova", "Patel", "Cohen"};
const char* kDomains[] = {"example.com", "mail.example.org", "shop.test", "example.net"};
const char* kProducts[] = {"Espresso Cup", "Chef's Knife 8\"", "Café Table", "Tea Kettle 1.5 L", "Linen Napkins (4)",
                           "Cast-Iron Skillet 12\"", "Bamboo Cutting Board", "Burr Grinder", "Pour-Over Set",
                           "Ceramic Bowl", "Wine Glass — Set of 2", "Oak Serving Tray", "Ramen Bowl 拉面",
                           "Waffle Iron", "Salt & Pepper Mill", "Dish Towel\\Blue"};

std::string lower_ascii(std::string_view s) {
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) && c < 0x80) out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out.empty() ? "user" : out;
}

const char* kEnvelopeSource =
    R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},)"
    R"({"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},)"
    R"({"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,last,false,incremental"},"default":"false","field":"snapshot"},)"
    R"({"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},)"
    R"({"type":"string","optional":true,"field":"table"},{"type":"int64","optional":false,"field":"server_id"},)"
    R"({"type":"string","optional":true,"field":"gtid"},{"type":"string","optional":false,"field":"file"},)"
    R"({"type":"int64","optional":false,"field":"pos"},{"type":"int32","optional":false,"field":"row"},)"
    R"({"type":"int64","optional":true,"field":"thread"},{"type":"string","optional":true,"field":"query"}],)"
    R"("optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"},)"
    R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"},)"
    R"({"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}])";

}  // namespace

struct ShopGenerator::Impl {
  ShopOptions opt;
  std::mt19937_64 rng;
  Format formats[4];
  std::vector<std::string> key_cols[4];
  std::string topics[4];
  std::string value_schema[4];  // Envelope schema (Schema format)
  std::string key_schema_head[4];

  // Live source state.
  std::map<Key, Row> live[4];
  int64_t next_customer = 1, next_product = 1, next_order = 1;
  std::set<int64_t> orders_by_status[5];
  int64_t clock_us = 1709283600LL * 1000000;  // 2024-03-01 09:00:00 UTC
  int64_t binlog_pos = 154;
  int snapshot_left = 0;
  int snapshot_total = 0;

  // Output queue and the model actions that go with it.
  struct Queued {
    Record rec;
    int table = 0;
    Key key;
    std::optional<std::string> row;  // c/u/r: the Doris row; d: nullopt
  };
  std::vector<Queued> queue;
  size_t queue_pos = 0;
  std::map<std::string, ShopTableModel> model;
  ShopStats stats;
  uint64_t emitted = 0;

  uint64_t rnd(uint64_t n) { return n == 0 ? 0 : rng() % n; }
  int64_t rnd_range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rnd(static_cast<uint64_t>(hi - lo + 1))); }

  Key key_of(int t, const Row& r) const {
    Key k;
    const auto& cols = defs()[static_cast<size_t>(t)].cols;
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols[i].key) k.push_back(r[i].i);
    return k;
  }

  std::string key_payload(int t, const Key& k) const {
    std::string s = "{";
    for (size_t i = 0; i < k.size(); ++i) {
      if (i) s += ",";
      s += "\"" + key_cols[t][i] + "\":" + std::to_string(k[i]);
    }
    return s + "}";
  }

  std::string row_wire(int t, const Row& r) const {
    const auto& cols = defs()[static_cast<size_t>(t)].cols;
    std::string s = "{";
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i) s += ",";
      s += "\"" + std::string(cols[i].name) + "\":";
      wire_value(cols[i], r[i], s);
    }
    return s + "}";
  }

  // What cdc2doris::decode emits for the row (default options), without the delete sign.
  std::string row_doris(int t, const Row& r) const {
    if (formats[t] == Format::Plain) return row_wire(t, r);
    const auto& cols = defs()[static_cast<size_t>(t)].cols;
    std::string s = "{";
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i) s += ",";
      s += "\"" + std::string(cols[i].name) + "\":";
      typed_value(cols[i], r[i], s);
    }
    return s + "}";
  }

  void tick() { clock_us += rnd_range(1, 90) * 1000000 + (rnd(10) == 0 ? 0 : rnd_range(0, 999999)); }
  int64_t ts_ms() const { return clock_us / 1000; }

  size_t emit(int t, char op, const Row* before, const Row* after, bool last_snapshot = false) {
    const Row& keyed = after ? *after : *before;
    const Key k = key_of(t, keyed);
    const std::string kp = key_payload(t, k);
    std::string key = kp;
    if (formats[t] == Format::Schema) key = key_schema_head[t] + kp + "}";
    const std::string& topic = topics[t];
    const char* table = defs()[static_cast<size_t>(t)].name;
    const int64_t ts = ts_ms();
    std::string payload = "{\"before\":" + (before ? row_wire(t, *before) : std::string("null")) +
                          ",\"after\":" + (after ? row_wire(t, *after) : std::string("null")) +
                          R"(,"source":{"version":"2.7.3.Final","connector":"mysql","name":")" + opt.server +
                          "\",\"ts_ms\":" + std::to_string(op == 'r' ? ts : ts - 2) + ",\"snapshot\":\"" +
                          (op == 'r' ? (last_snapshot ? "last" : "true") : "false") + "\",\"db\":\"" + opt.db +
                          R"(","sequence":null,"table":")" + table + R"(","server_id":223344,"gtid":null,"file":"mysql-bin.000003","pos":)" +
                          std::to_string(binlog_pos) + R"(,"row":0,"thread":)" + (op == 'r' ? "null" : "7") +
                          R"(,"query":null},"transaction":null,"op":")" + op + "\",\"ts_ms\":" + std::to_string(ts) + "}";
    Queued p;
    p.rec.topic = topic;
    p.rec.partition = partition_for(key, opt.partitions);
    p.rec.table = opt.db + "." + table;
    p.rec.key = key;
    p.rec.op = op;
    if (formats[t] == Format::Schema) {
      p.rec.value = "{\"schema\":" + value_schema[t] + ",\"payload\":" + payload + "}";
    } else {
      p.rec.value = std::move(payload);
    }
    binlog_pos += static_cast<int64_t>(p.rec.value->size() / 4 + 31);
    p.table = t;
    p.key = k;
    if (op != 'd') p.row = row_doris(t, *after);
    queue.push_back(std::move(p));
    const size_t idx = queue.size() - 1;
    if (op == 'd' && opt.tombstones) {
      Queued tomb;
      tomb.rec.topic = topic;
      tomb.rec.partition = partition_for(key, opt.partitions);
      tomb.rec.table = opt.db + "." + table;
      tomb.rec.key = key;
      tomb.table = t;
      tomb.key = k;
      queue.push_back(std::move(tomb));
    }
    return idx;
  }

  // Source-side helpers: change the live state and emit.
  void insert(int t, Row r, char op = 'c', bool last_snapshot = false) {
    const Key k = key_of(t, r);
    emit(t, op, nullptr, &r, last_snapshot);
    live[t][k] = std::move(r);
  }
  void update(int t, const Key& k, Row r) {
    auto it = live[t].find(k);
    emit(t, 'u', &it->second, &r);
    it->second = std::move(r);
  }
  void erase(int t, const Key& k) {
    auto it = live[t].find(k);
    emit(t, 'd', &it->second, nullptr);
    live[t].erase(it);
  }
  // UPDATE of the primary key: Debezium sends delete (+ tombstone) + create.
  void change_key(int t, const Key& old_key, Row moved) {
    auto it = live[t].find(old_key);
    const Key new_key = key_of(t, moved);
    const size_t d = emit(t, 'd', &it->second, nullptr);
    queue[d].rec.headers.emplace_back("__debezium.newkey", key_payload(t, new_key));
    live[t].erase(it);
    const size_t c = emit(t, 'c', nullptr, &moved);
    queue[c].rec.headers.emplace_back("__debezium.oldkey", key_payload(t, old_key));
    live[t][new_key] = std::move(moved);
    ++stats.pk_changes;
  }

  // A random element of a map / set (nullptr / nullopt when empty).
  template <class M>
  typename M::iterator pick(M& m, int64_t id_bound) {
    if (m.empty()) return m.end();
    auto it = m.lower_bound(typename M::key_type{static_cast<int64_t>(rnd(static_cast<uint64_t>(id_bound)))});
    return it == m.end() ? m.begin() : it;
  }
  std::optional<int64_t> pick_order(std::initializer_list<Status> statuses) {
    // Prefer the first status with candidates in a random rotation.
    std::vector<Status> s(statuses);
    const size_t start = rnd(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      auto& set = orders_by_status[s[(start + i) % s.size()]];
      if (set.empty()) continue;
      auto it = set.lower_bound(static_cast<int64_t>(rnd(static_cast<uint64_t>(next_order))));
      return it == set.end() ? *set.begin() : *it;
    }
    return std::nullopt;
  }
  std::vector<Key> lines_of(int64_t order) const {
    std::vector<Key> out;
    for (auto it = live[Items].lower_bound(Key{order, std::numeric_limits<int64_t>::min()});
         it != live[Items].end() && it->first[0] == order; ++it)
      out.push_back(it->first);
    return out;
  }
  int64_t order_total(int64_t order) const {
    int64_t sum = 0;
    for (const auto& k : lines_of(order)) {
      const Row& r = live[Items].at(k);
      sum += r[I_QTY].i * r[I_PRICE].i;
    }
    return sum;
  }
  void set_status(int64_t order, Status s) {
    Row r = live[Orders].at(Key{order});
    const auto old = static_cast<Status>(std::find(std::begin(kOrderStatuses), std::end(kOrderStatuses), r[O_STATUS].s) -
                                         std::begin(kOrderStatuses));
    orders_by_status[old].erase(order);
    orders_by_status[s].insert(order);
    r[O_STATUS].s = kOrderStatuses[s];
    if (s == Shipped) r[O_SHIPPED] = I(clock_us / 86400000000LL);
    update(Orders, Key{order}, std::move(r));
  }
  void adjust_stock(int64_t product, int64_t delta) {
    auto it = live[Products].find(Key{product});
    if (it == live[Products].end()) return;
    Row r = it->second;
    r[P_STOCK].i = std::max<int64_t>(0, r[P_STOCK].i + delta);
    r[P_UPDATED].i = clock_us;
    update(Products, Key{product}, std::move(r));
  }

  Row new_customer() {
    const int64_t id = next_customer++;
    const std::string first = kFirst[rnd(std::size(kFirst))];
    const std::string last = kLast[rnd(std::size(kLast))];
    Row r(6);
    r[C_ID] = I(id);
    r[C_NAME] = S(first + " " + last);
    r[C_EMAIL] = rnd(12) == 0 ? N() : S(lower_ascii(first) + "." + lower_ascii(last) + std::to_string(id) + "@" + kDomains[rnd(std::size(kDomains))]);
    r[C_CREATED] = I(clock_us / 1000000);
    r[C_POINTS] = I(0);
    // 1950..2005; about a third unknown. Negative epoch days on purpose.
    r[C_BIRTH] = rnd(3) == 0 ? N() : I(rnd_range(-7305, 12784));
    return r;
  }
  Row new_product() {
    const int64_t id = next_product++;
    Row r(6);
    r[P_ID] = I(id);
    char sku[24];
    std::snprintf(sku, sizeof sku, "SKU-%05lld", static_cast<long long>(id));
    r[P_SKU] = S(sku);
    r[P_NAME] = S(std::string(kProducts[rnd(std::size(kProducts))]) + (rnd(3) == 0 ? " (" + std::to_string(id) + ")" : ""));
    // Some whole prices, some sub-euro ones, mostly 1.99..199.99.
    int64_t cents = rnd_range(199, 19999);
    if (rnd(5) == 0) cents -= cents % 100;
    if (rnd(20) == 0) cents = rnd_range(5, 99);
    r[P_PRICE] = I(cents);
    r[P_STOCK] = I(rnd_range(0, 400));
    r[P_UPDATED] = I(clock_us);
    return r;
  }

  void place_order() {
    auto cust = pick(live[Customers], next_customer);
    const int64_t customer = cust->first[0];
    const int64_t id = next_order++;
    // Distinct products, 1..4 lines.
    std::vector<Key> products;
    const size_t n = std::min<size_t>(1 + rnd(4), live[Products].size());
    for (size_t tries = 0; products.size() < n && tries < 20; ++tries) {
      Key k = pick(live[Products], next_product)->first;
      if (std::find(products.begin(), products.end(), k) == products.end()) products.push_back(k);
    }
    std::vector<Row> lines;
    int64_t total = 0;
    for (size_t i = 0; i < products.size(); ++i) {
      const Row& p = live[Products].at(products[i]);
      Row l(5);
      l[I_ORDER] = I(id);
      l[I_LINE] = I(static_cast<int64_t>(i) + 1);
      l[I_PRODUCT] = I(products[i][0]);
      l[I_QTY] = I(rnd(8) == 0 ? rnd_range(5, 12) : rnd_range(1, 3));
      l[I_PRICE] = p[P_PRICE];
      total += l[I_QTY].i * l[I_PRICE].i;
      lines.push_back(std::move(l));
    }
    Row o(6);
    o[O_ID] = I(id);
    o[O_CUSTOMER] = I(customer);
    o[O_STATUS] = S(kOrderStatuses[Pending]);
    o[O_TOTAL] = I(total);
    o[O_PLACED] = I(clock_us);
    o[O_SHIPPED] = N();
    insert(Orders, std::move(o));
    orders_by_status[Pending].insert(id);
    for (auto& l : lines) insert(Items, std::move(l));
    for (const auto& k : products) {
      const Row& line = live[Items].at(Key{id, static_cast<int64_t>(&k - products.data()) + 1});
      adjust_stock(k[0], -line[I_QTY].i);
    }
  }

  void recompute_total(int64_t order) {
    Row r = live[Orders].at(Key{order});
    r[O_TOTAL].i = order_total(order);
    update(Orders, Key{order}, std::move(r));
  }

  void step() {
    ++stats.steps;
    tick();
    if (snapshot_left > 0) {
      // Snapshot: customers first, then products, as Debezium reads table by table.
      const int done = snapshot_total - snapshot_left--;
      const bool last = snapshot_left == 0;
      if (done < opt.snapshot_customers) insert(Customers, new_customer(), 'r', last);
      else insert(Products, new_product(), 'r', last);
      return;
    }
    static const int weights[] = {8, 7, 2, 2, 3, 8, 1, 22, 12, 9, 6, 4, 5, 4, 3, 4};
    int total = 0;
    for (int w : weights) total += w;
    int x = static_cast<int>(rnd(static_cast<uint64_t>(total)));
    int ev = 0;
    while (x >= weights[ev]) x -= weights[ev++];
    if (live[Customers].empty()) ev = 0;
    else if (live[Products].empty()) ev = 4;
    switch (ev) {
      case 0:  // sign-up
        insert(Customers, new_customer());
        return;
      case 1: {  // profile change or points redeemed
        auto it = pick(live[Customers], next_customer);
        Row r = it->second;
        const uint64_t what = rnd(3);
        if (what == 0) r[C_EMAIL] = S(lower_ascii(r[C_NAME].s) + std::to_string(rnd(1000)) + "@" + kDomains[rnd(std::size(kDomains))]);
        else if (what == 1) r[C_POINTS].i = std::max<int64_t>(0, r[C_POINTS].i - rnd_range(0, 200));
        else r[C_BIRTH] = rnd(4) == 0 ? N() : I(rnd_range(-7305, 12784));
        update(Customers, it->first, std::move(r));
        return;
      }
      case 2: {  // account deleted (GDPR); past orders keep the id
        if (live[Customers].size() < 3) break;
        erase(Customers, pick(live[Customers], next_customer)->first);
        return;
      }
      case 3: {  // account migration: new id; the customer's orders follow
        auto it = pick(live[Customers], next_customer);
        const int64_t old_id = it->first[0];
        Row moved = it->second;
        moved[C_ID].i = next_customer++;
        change_key(Customers, Key{old_id}, std::move(moved));
        std::vector<int64_t> orders;
        for (const auto& [k, o] : live[Orders])
          if (o[O_CUSTOMER].i == old_id) orders.push_back(k[0]);
        for (int64_t oid : orders) {
          Row o = live[Orders].at(Key{oid});
          o[O_CUSTOMER].i = next_customer - 1;
          update(Orders, Key{oid}, std::move(o));
        }
        return;
      }
      case 4:  // new product
        insert(Products, new_product());
        return;
      case 5: {  // price change or restock
        auto it = pick(live[Products], next_product);
        Row r = it->second;
        if (rnd(2) == 0) {
          r[P_PRICE].i = std::max<int64_t>(5, r[P_PRICE].i + (rnd(2) ? 1 : -1) * r[P_PRICE].i * rnd_range(5, 20) / 100);
        } else {
          r[P_STOCK].i += rnd_range(10, 200);
        }
        r[P_UPDATED].i = clock_us;
        update(Products, it->first, std::move(r));
        return;
      }
      case 6:  // discontinued
        if (live[Products].size() < 5) break;
        erase(Products, pick(live[Products], next_product)->first);
        return;
      case 7: break;  // place an order (the fallback below)
      case 8:
        if (auto o = pick_order({Pending})) return set_status(*o, Paid);
        break;
      case 9:
        if (auto o = pick_order({Paid})) return set_status(*o, Shipped);
        break;
      case 10:
        if (auto o = pick_order({Shipped})) {
          set_status(*o, Delivered);
          // Loyalty points: one per whole currency unit.
          const Row& ord = live[Orders].at(Key{*o});
          auto c = live[Customers].find(Key{ord[O_CUSTOMER].i});
          if (c != live[Customers].end()) {
            Row r = c->second;
            r[C_POINTS].i += ord[O_TOTAL].i / 100;
            update(Customers, c->first, std::move(r));
          }
          return;
        }
        break;
      case 11:
        if (auto o = pick_order({Pending, Paid})) {
          set_status(*o, Cancelled);
          for (const auto& k : lines_of(*o)) {
            const Row& l = live[Items].at(k);
            adjust_stock(l[I_PRODUCT].i, l[I_QTY].i);
          }
          return;
        }
        break;
      case 12:  // quantity change on a pending order
        if (auto o = pick_order({Pending})) {
          auto lines = lines_of(*o);
          const Key k = lines[rnd(lines.size())];
          Row l = live[Items].at(k);
          const int64_t delta = l[I_QTY].i > 1 && rnd(2) ? -1 : rnd_range(1, 3);
          l[I_QTY].i += delta;
          const int64_t product = l[I_PRODUCT].i;
          update(Items, k, std::move(l));
          adjust_stock(product, -delta);
          recompute_total(*o);
          return;
        }
        break;
      case 13:  // line removed from a pending order
        if (auto o = pick_order({Pending})) {
          auto lines = lines_of(*o);
          if (lines.size() < 2) break;
          const Key k = lines[rnd(lines.size())];
          const Row l = live[Items].at(k);
          erase(Items, k);
          adjust_stock(l[I_PRODUCT].i, l[I_QTY].i);
          recompute_total(*o);
          return;
        }
        break;
      case 14:  // line renumbered (UPDATE order_items SET line_no = …): a PK change
        if (auto o = pick_order({Pending, Paid})) {
          auto lines = lines_of(*o);
          const Key k = lines[rnd(lines.size())];
          Row moved = live[Items].at(k);
          moved[I_LINE].i = lines.back()[1] + 1;
          change_key(Items, k, std::move(moved));
          return;
        }
        break;
      case 15:  // old order purged: lines first, then the order
        if (auto o = pick_order({Delivered, Cancelled})) {
          for (const auto& k : lines_of(*o)) erase(Items, k);
          const Row& ord = live[Orders].at(Key{*o});
          orders_by_status[ord[O_STATUS].s == kOrderStatuses[Delivered] ? Delivered : Cancelled].erase(*o);
          erase(Orders, Key{*o});
          return;
        }
        break;
    }
    place_order();
  }

  void apply(const Queued& p) {
    ShopTableModel& m = model[opt.db + "." + defs()[static_cast<size_t>(p.table)].name];
    if (!p.rec.value) {
      ++m.tombstones;
      ++stats.tombstones;
      return;
    }
    ++m.changes;
    switch (p.rec.op) {
      case 'r': ++stats.snapshot_reads; break;
      case 'c': ++stats.inserts; break;
      case 'u': ++stats.updates; break;
      case 'd': ++stats.deletes; break;
      default: break;
    }
    if (p.row) m.rows[p.key] = *p.row;
    else m.rows.erase(p.key);
  }
};

const std::vector<std::string>& ShopGenerator::table_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& d : defs()) n.emplace_back(d.name);
    return n;
  }();
  return names;
}

ShopGenerator::ShopGenerator(ShopOptions o) : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.opt = std::move(o);
  im.rng.seed(im.opt.seed);
  if (im.opt.partitions < 1) throw std::invalid_argument("shop workload: partitions must be >= 1");
  if (im.opt.snapshot_customers < 0 || im.opt.snapshot_products < 0) throw std::invalid_argument("shop workload: negative snapshot size");
  const Format f[4] = {im.opt.customers, im.opt.products, im.opt.orders, im.opt.order_items};
  for (int t = 0; t < 4; ++t) {
    if (f[t] == Format::Flattened) throw std::invalid_argument("shop workload: envelope must be plain or schema");
    im.formats[t] = f[t];
    const TableDef& d = defs()[static_cast<size_t>(t)];
    im.topics[t] = im.opt.server + "." + im.opt.db + "." + d.name;
    std::string fields, key_fields;
    for (const auto& c : d.cols) {
      if (!fields.empty()) fields += ",";
      fields += connect_field(c);
      if (c.key) {
        if (!key_fields.empty()) key_fields += ",";
        key_fields += connect_field(c);
        im.key_cols[t].emplace_back(c.name);
      }
    }
    const std::string value_struct = "{\"type\":\"struct\",\"fields\":[" + fields + "],\"optional\":true,\"name\":\"" + im.topics[t] + ".Value\"";
    im.value_schema[t] = "{\"type\":\"struct\",\"fields\":[" + value_struct + ",\"field\":\"before\"}," + value_struct +
                         ",\"field\":\"after\"}," + std::string(kEnvelopeSource) + ",\"optional\":false,\"name\":\"" +
                         im.topics[t] + ".Envelope\",\"version\":1}";
    im.key_schema_head[t] = "{\"schema\":{\"type\":\"struct\",\"fields\":[" + key_fields + "],\"optional\":false,\"name\":\"" +
                            im.topics[t] + ".Key\"},\"payload\":";
    ShopTableModel m;
    m.name = im.opt.db + "." + d.name;
    m.key_columns = im.key_cols[t];
    im.model.emplace(m.name, std::move(m));
  }
  im.snapshot_total = im.snapshot_left = im.opt.snapshot_customers + im.opt.snapshot_products;
}

ShopGenerator::~ShopGenerator() = default;

Record ShopGenerator::next() {
  Impl& im = *impl_;
  while (im.queue_pos >= im.queue.size()) {
    im.queue.clear();
    im.queue_pos = 0;
    im.step();
  }
  Impl::Queued& p = im.queue[im.queue_pos++];
  im.apply(p);
  ++im.emitted;
  return std::move(p.rec);
}

std::vector<Record> ShopGenerator::generate(size_t n) {
  std::vector<Record> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(next());
  return out;
}

std::vector<Record> ShopGenerator::generate_steps(size_t steps) {
  std::vector<Record> out;
  while (!at_step_boundary()) out.push_back(next());
  for (size_t s = 0; s < steps; ++s) {
    out.push_back(next());
    while (!at_step_boundary()) out.push_back(next());
  }
  return out;
}

bool ShopGenerator::at_step_boundary() const { return impl_->queue_pos >= impl_->queue.size(); }
const ShopOptions& ShopGenerator::options() const { return impl_->opt; }

std::vector<std::string> ShopGenerator::tables() const {
  std::vector<std::string> out;
  for (const auto& n : table_names()) out.push_back(impl_->opt.db + "." + n);
  return out;
}

Format ShopGenerator::format_of(std::string_view table) const { return impl_->formats[table_index(table, impl_->opt.db)]; }

const std::vector<std::string>& ShopGenerator::key_columns(std::string_view table) const {
  return impl_->key_cols[table_index(table, impl_->opt.db)];
}

const std::map<std::string, ShopTableModel>& ShopGenerator::expected() const { return impl_->model; }
const ShopStats& ShopGenerator::stats() const { return impl_->stats; }
uint64_t ShopGenerator::records_emitted() const { return impl_->emitted; }

std::string ShopGenerator::key_json(std::string_view table, const std::vector<int64_t>& key) const {
  return impl_->key_payload(table_index(table, impl_->opt.db), key);
}

std::string ShopGenerator::create_table_sql(const std::string& table, bool duplicate_key) const {
  const int t = table_index(table, impl_->opt.db);
  const TableDef& d = defs()[static_cast<size_t>(t)];
  const bool typed = impl_->formats[t] == Format::Schema;
  std::string sql = "CREATE TABLE IF NOT EXISTS `" + impl_->opt.db + "`.`" + d.name + "` (\n";
  std::string keys;
  for (size_t i = 0; i < d.cols.size(); ++i) {
    const Col& c = d.cols[i];
    std::string type = typed ? doris_typed(c) : doris_raw(c);
    // NOT NULL / NULL goes before the COMMENT.
    const auto comment = type.find(" COMMENT ");
    const std::string null_spec = c.key || !c.optional ? " NOT NULL" : " NULL";
    if (comment == std::string::npos) type += null_spec;
    else type.insert(comment, null_spec);
    sql += "  `" + std::string(c.name) + "` " + type + (i + 1 < d.cols.size() ? ",\n" : "\n");
    if (c.key) keys += (keys.empty() ? "`" : ", `") + std::string(c.name) + "`";
  }
  sql += std::string(") ") + (duplicate_key ? "DUPLICATE" : "UNIQUE") + " KEY(" + keys + ")\nDISTRIBUTED BY HASH(" + keys +
         ") BUCKETS 1\nPROPERTIES (\"replication_num\" = \"1\");";
  return sql;
}

decode::DecoderOptions ShopGenerator::decoder_options() const { return decode::DecoderOptions{}; }

}  // namespace cdc2doris::workload
