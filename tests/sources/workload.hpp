#pragma once
// The seeded random workload of the real-source tests, on two tables:
//   w_orders(id PK, qty NOT NULL DEFAULT 0, note, big, price, ts, doc)
//   w_lines(order_id, line, sku NOT NULL, amount; PK (order_id, line))
// Transactions of 1-3 operations: inserts (an order with 0-2 lines), updates
// of a random column subset (leaving `big` untouched makes PostgreSQL send
// the TOAST placeholder), deletes, key changes of orders (and their lines) and
// of lines; one in ten is rolled back. Each transaction sets a session zone.
// Keys are tracked so that updates and deletes hit rows; a rolled-back
// transaction leaves the tracking unchanged.
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cdc2doris::test::sources {

// What differs between the SQL dialects.
struct WorkloadDialect {
  std::vector<std::string> zones;        // session time zones
  std::string (*begin)(const std::string& zone);  // BEGIN with the session zone set
  std::vector<std::string> notes;        // text literals (hostile ones included)
  std::string (*big)(uint32_t salt);     // an expression for ~12 KB of poorly compressible text
  std::vector<std::string> timestamps;   // literals / expressions for `ts`
  std::vector<std::string> docs;         // JSON literals for `doc`
  std::string key_change_extra;          // appended to the SET list of an order key change
};

WorkloadDialect postgres_dialect();
WorkloadDialect mariadb_dialect();

class Workload {
 public:
  Workload(uint32_t seed, WorkloadDialect dialect) : rng_(seed), d_(std::move(dialect)) {}
  // `count` transactions as one SQL script.
  std::string transactions(int count);
  // Whether the committed transactions left rows in both w_orders and w_lines.
  bool has_orders_and_lines() const { return !orders_.empty() && !lines_.empty(); }

 private:
  using Orders = std::set<int64_t>;
  using Lines = std::set<std::pair<int64_t, int>>;
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  template <class Set>
  auto any(const Set& s) {
    auto it = s.begin();
    std::advance(it, static_cast<long>(pick(s.size())));
    return *it;
  }
  std::string from(const std::vector<std::string>& pool) { return pool[pick(pool.size())]; }
  std::string big() { return pick(3) == 0 ? "NULL" : d_.big(static_cast<uint32_t>(rng_())); }
  std::string price();
  std::string op(Orders& orders, Lines& lines);

  std::mt19937 rng_;
  WorkloadDialect d_;
  int64_t next_id_ = 1;
  Orders orders_;
  Lines lines_;
};

}  // namespace cdc2doris::test::sources
