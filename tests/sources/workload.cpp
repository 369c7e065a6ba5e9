#include "tests/sources/workload.hpp"

namespace cdc2doris::test::sources {

WorkloadDialect postgres_dialect() {
  return {{"UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "Europe/Berlin"},
          [](const std::string& zone) { return "BEGIN;\nSET LOCAL TIME ZONE '" + zone + "';\n"; },
          {"'a'", R"(E'q''uote\\back\nnl')", "'😀x'", "NULL", "''", R"('{"x":1}')"},
          [](uint32_t salt) {
            return "(SELECT string_agg(md5(i::text || '" + std::to_string(salt) +
                   "'), '') FROM generate_series(1, 380) i)";
          },
          {"'2040-07-01 10:00:00+02'", "'1965-03-28 02:30:00'", "now()", "NULL", "'2024-10-27 02:30:00'",
           "'2099-06-30 23:59:59.999999Z'"},
          {R"('{"k":[1,2]}')", R"('"str"')", "'7'", "'null'", "NULL", R"('{"n":{"m":"ü"}}')"},
          // On a key change Debezium sends the new key's row as a create whose
          // unchanged TOASTed columns are only the placeholder (REPLICA IDENTITY
          // DEFAULT): no consumer can know them, so the workload rewrites `big`.
          ", big = big || ''"};
}

WorkloadDialect mariadb_dialect() {
  return {{"+00:00", "-08:00", "+05:30", "Europe/Berlin", "+13:00"},
          [](const std::string& zone) { return "SET time_zone = '" + zone + "';\nBEGIN;\n"; },
          {"'a'", R"('q''uote\\back\nnl')", "'😀x'", "NULL", "''", R"('{"x":1}')"},
          [](uint32_t salt) { return "REPEAT(MD5('" + std::to_string(salt) + "'), 380)"; },
          {"'2040-07-01 10:00:00'", "'1965-03-28 02:30:00'", "NOW(6)", "NULL", "'0001-01-01 00:00:00.000001'",
           "'9999-12-31 23:59:59.999999'"},
          {R"('{"k":[1,2]}')", R"('"str"')", "'7'", "'null'", "NULL", R"('{"n":{"m":"ü"}}')"},
          ""};
}

std::string Workload::transactions(int count) {
  std::string sql;
  for (int i = 0; i < count; ++i) {
    const bool rollback = pick(10) == 0;
    auto orders = orders_;
    auto lines = lines_;
    std::string tx = d_.begin(from(d_.zones));
    const int ops = 1 + static_cast<int>(pick(3));
    for (int k = 0; k < ops; ++k) tx += op(orders, lines);
    if (rollback) {
      tx += "ROLLBACK;\n";
    } else {
      tx += "COMMIT;\n";
      orders_ = std::move(orders);
      lines_ = std::move(lines);
    }
    sql += tx;
  }
  return sql;
}

std::string Workload::price() {
  if (pick(5) == 0) return "NULL";
  return std::to_string(static_cast<int64_t>(rng_() % 100000000) - 50000000) + "." + std::to_string(10 + pick(90));
}

std::string Workload::op(Orders& orders, Lines& lines) {
  const size_t kind = pick(10);
  if (orders.empty() || kind < 3) {  // insert an order, sometimes with lines
    const int64_t id = next_id_++;
    orders.insert(id);
    std::string s = "INSERT INTO w_orders VALUES (" + std::to_string(id) + ", " + std::to_string(pick(1000)) + ", " +
                    from(d_.notes) + ", " + big() + ", " + price() + ", " + from(d_.timestamps) + ", " +
                    from(d_.docs) + ");\n";
    for (int l = 0, n = static_cast<int>(pick(3)); l < n; ++l) {
      lines.insert({id, l});
      s += "INSERT INTO w_lines VALUES (" + std::to_string(id) + ", " + std::to_string(l) + ", 'sku-" +
           std::to_string(pick(100)) + "', " + (pick(4) ? std::to_string(pick(100000)) + ".125" : "NULL") + ");\n";
    }
    return s;
  }
  const int64_t id = any(orders);
  const std::string where = " WHERE id = " + std::to_string(id) + ";\n";
  if (kind < 6) {  // update a random subset of columns
    std::vector<std::string> sets;
    if (pick(2)) sets.push_back("qty = " + std::to_string(pick(1000)));
    if (pick(2)) sets.push_back("note = " + from(d_.notes));
    if (pick(4) == 0) sets.push_back("big = " + big());
    if (pick(2)) sets.push_back("price = " + price());
    if (pick(2)) sets.push_back("ts = " + from(d_.timestamps));
    if (pick(2)) sets.push_back("doc = " + from(d_.docs));
    if (sets.empty()) sets.push_back("qty = qty + 1");
    std::string s;
    for (const auto& x : sets) s += (s.empty() ? "" : ", ") + x;
    return "UPDATE w_orders SET " + s + where;
  }
  if (kind < 8) {  // delete an order and its lines
    orders.erase(id);
    for (auto it = lines.begin(); it != lines.end();) it = it->first == id ? lines.erase(it) : std::next(it);
    return "DELETE FROM w_lines WHERE order_id = " + std::to_string(id) + ";\nDELETE FROM w_orders" + where;
  }
  if (kind == 8 || lines.empty()) {  // key change of an order and of its lines
    const int64_t to = next_id_++;
    orders.erase(id);
    orders.insert(to);
    Lines moved;
    for (auto it = lines.begin(); it != lines.end();) {
      if (it->first == id) {
        moved.insert({to, it->second});
        it = lines.erase(it);
      } else {
        ++it;
      }
    }
    lines.insert(moved.begin(), moved.end());
    return "UPDATE w_orders SET id = " + std::to_string(to) + d_.key_change_extra + where +
           "UPDATE w_lines SET order_id = " + std::to_string(to) + " WHERE order_id = " + std::to_string(id) + ";\n";
  }
  // A line: a key change of `line`, or new values.
  auto [o, l] = any(lines);
  const std::string lw = " WHERE order_id = " + std::to_string(o) + " AND line = " + std::to_string(l) + ";\n";
  if (pick(2)) {
    const int to = 100 + static_cast<int>(next_id_++ % 100000);
    lines.erase({o, l});
    lines.insert({o, to});
    return "UPDATE w_lines SET line = " + std::to_string(to) + lw;
  }
  return "UPDATE w_lines SET sku = 'sku-" + std::to_string(pick(100)) + "', amount = " +
         (pick(4) ? std::to_string(pick(100000)) + ".5" : "NULL") + lw;
}

}  // namespace cdc2doris::test::sources
