// cdc2doris-workload: the shared workload generator for scripts.
//   cdc2doris-workload [--records N] [--tables N] [--seed S] [--format plain|schema|flattened]
//                      [--partitions N] [--snapshot-rows N] [--server NAME] [--db NAME]
//                      [--ddl [--duplicate-key]] [--expected FILE]
//   cdc2doris-workload --scenario shop [--records N | --steps N] [--seed S] [--partitions N]
//                      [--server NAME] [--db NAME] [--snapshot-customers N] [--snapshot-products N]
//                      [--envelopes customers=plain,orders=schema,...] [--no-tombstones]
//                      [--ddl [--duplicate-key]] [--expected FILE]
// Writes one JSON line per record: {"topic","partition","offset","key","value"}
// with key/value embedded as JSON (value null = tombstone). Offsets count per
// topic-partition from 0. --ddl prints the Doris CREATE TABLE statements
// instead. --expected FILE also writes the final-state model as JSON lines
// {"table":…,"id":…,"row":{…}} followed by {"table":…,"changes":…,"rows":…}.
// The shop scenario (tools/workload/README.md; default server "shop") keeps
// that format; its rows are keyed by the primary key, so the lines are
// {"table":…,"key":{"order_id":…,"line_no":…},"row":{…}} (a single-column key
// also gets "id":…), then {"table":…,"changes":…,"rows":…,"tombstones":…}.
// --steps N emits N whole business events instead of N records.
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "tools/workload/shop.hpp"
#include "tools/workload/workload.hpp"

using namespace cdc2doris::workload;

namespace {

// One framed JSON line per record; offsets count per topic-partition from 0.
struct Printer {
  std::map<std::pair<std::string, int32_t>, int64_t> offsets;
  std::string line;
  void print(const Record& r) {
    int64_t& off = offsets[{r.topic, r.partition}];
    line.clear();
    line += "{\"topic\":\"" + r.topic + "\",\"partition\":" + std::to_string(r.partition) + ",\"offset\":" + std::to_string(off++) +
            ",\"key\":" + r.key + ",\"value\":" + (r.value ? *r.value : std::string("null"));
    if (!r.headers.empty()) {
      line += ",\"headers\":{";
      for (size_t h = 0; h < r.headers.size(); ++h) {
        if (h) line += ",";
        line += "\"" + r.headers[h].first + "\":\"";
        for (char c : r.headers[h].second) {
          if (c == '"' || c == '\\') line.push_back('\\');
          line.push_back(c);
        }
        line += "\"";
      }
      line += "}";
    }
    line += "}\n";
    std::cout << line;
  }
};

struct ShopArgs {
  ShopOptions o;
  std::optional<size_t> records, steps;
  bool ddl = false, duplicate = false;
  std::string expected_path;
};

// --envelopes customers=plain,orders=schema (unnamed tables keep their default).
bool parse_envelopes(const std::string& spec, ShopOptions& o) {
  size_t p = 0;
  while (p <= spec.size()) {
    const size_t comma = std::min(spec.find(',', p), spec.size());
    const std::string item = spec.substr(p, comma - p);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return false;
    const std::string table = item.substr(0, eq), fmt = item.substr(eq + 1);
    Format f;
    if (fmt == "plain") f = Format::Plain;
    else if (fmt == "schema") f = Format::Schema;
    else return false;
    if (table == "customers") o.customers = f;
    else if (table == "products") o.products = f;
    else if (table == "orders") o.orders = f;
    else if (table == "order_items") o.order_items = f;
    else return false;
    p = comma + 1;
  }
  return true;
}

int run_shop(const ShopArgs& a) {
  ShopGenerator g(a.o);
  if (a.ddl) {
    for (const auto& t : g.tables()) std::cout << g.create_table_sql(t, a.duplicate) << "\n";
    return 0;
  }
  Printer out;
  if (a.steps) {
    for (size_t s = 0; s < *a.steps; ++s)
      for (const auto& r : g.generate_steps(1)) out.print(r);
  } else {
    const size_t n = a.records.value_or(1000);
    for (size_t i = 0; i < n; ++i) out.print(g.next());
  }
  if (!a.expected_path.empty()) {
    std::ofstream f(a.expected_path);
    for (const auto& [name, m] : g.expected()) {
      for (const auto& [key, row] : m.rows) {
        f << "{\"table\":\"" << name << "\",";
        if (key.size() == 1) f << "\"id\":" << key[0] << ",";
        f << "\"key\":" << g.key_json(name, key) << ",\"row\":" << row << "}\n";
      }
      f << "{\"table\":\"" << name << "\",\"changes\":" << m.changes << ",\"rows\":" << m.rows.size()
        << ",\"tombstones\":" << m.tombstones << "}\n";
    }
    if (!f) {
      std::cerr << "cannot write " << a.expected_path << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

int shop_main(int argc, char** argv) {
  ShopArgs a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "missing value for " << arg << "\n";
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (arg == "--scenario") next();
      else if (arg == "--records") a.records = std::stoull(next());
      else if (arg == "--steps") a.steps = std::stoull(next());
      else if (arg == "--seed") a.o.seed = std::stoull(next());
      else if (arg == "--partitions") a.o.partitions = std::stoi(next());
      else if (arg == "--server") a.o.server = next();
      else if (arg == "--db") a.o.db = next();
      else if (arg == "--snapshot-customers") a.o.snapshot_customers = std::stoi(next());
      else if (arg == "--snapshot-products") a.o.snapshot_products = std::stoi(next());
      else if (arg == "--no-tombstones") a.o.tombstones = false;
      else if (arg == "--ddl") a.ddl = true;
      else if (arg == "--duplicate-key") a.duplicate = true;
      else if (arg == "--expected") a.expected_path = next();
      else if (arg == "--envelopes") {
        if (!parse_envelopes(next(), a.o)) {
          std::cerr << "--envelopes takes TABLE=plain|schema[,...] for customers, products, orders, order_items\n";
          return 2;
        }
      } else {
        std::cerr << "unknown argument for --scenario shop: " << arg << "\n";
        return 2;
      }
    } catch (const std::exception& e) {
      std::cerr << "bad value for " << arg << ": " << e.what() << "\n";
      return 2;
    }
  }
  if (a.records && a.steps) {
    std::cerr << "--records and --steps are exclusive\n";
    return 2;
  }
  try {
    return run_shop(a);
  } catch (const std::invalid_argument& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

int main(int argc, char** argv) {
  std::string scenario = "orders";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--scenario") scenario = argv[i + 1];
  if (scenario == "shop") return shop_main(argc, argv);
  if (scenario != "orders") {
    std::cerr << "--scenario must be orders or shop\n";
    return 2;
  }
  Options o;
  size_t records = 1000;
  bool ddl = false, duplicate = false;
  std::string expected_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "missing value for " << a << "\n";
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--scenario") next();
      else if (a == "--records") records = std::stoull(next());
      else if (a == "--tables") o.tables = std::stoi(next());
      else if (a == "--seed") o.seed = std::stoull(next());
      else if (a == "--partitions") o.partitions = std::stoi(next());
      else if (a == "--snapshot-rows") o.snapshot_rows_per_table = std::stoi(next());
      else if (a == "--server") o.server = next();
      else if (a == "--db") o.db = next();
      else if (a == "--no-tombstones") o.tombstones = false;
      else if (a == "--ddl") ddl = true;
      else if (a == "--duplicate-key") duplicate = true;
      else if (a == "--expected") expected_path = next();
      else if (a == "--format") {
        auto f = parse_format(next());
        if (!f) {
          std::cerr << "--format must be plain, schema or flattened\n";
          return 2;
        }
        o.format = *f;
      } else {
        std::cerr << "unknown argument " << a << "\n";
        return 2;
      }
    } catch (const std::exception& e) {
      std::cerr << "bad value for " << a << ": " << e.what() << "\n";
      return 2;
    }
  }
  Generator g(o);
  if (ddl) {
    for (const auto& t : g.tables()) std::cout << g.create_table_sql(t, duplicate) << "\n";
    return 0;
  }
  Printer out;
  for (size_t n = 0; n < records; ++n) out.print(g.next());
  if (!expected_path.empty()) {
    std::ofstream f(expected_path);
    for (const auto& [name, m] : g.expected()) {
      for (const auto& [id, row] : m.rows) f << "{\"table\":\"" << name << "\",\"id\":" << id << ",\"row\":" << row << "}\n";
      f << "{\"table\":\"" << name << "\",\"changes\":" << m.changes << ",\"rows\":" << m.rows.size() << "}\n";
    }
    if (!f) {
      std::cerr << "cannot write " << expected_path << "\n";
      return 1;
    }
  }
  return 0;
}
