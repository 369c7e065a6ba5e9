// cdc2doris-workload: the shared workload generator for scripts.
//   cdc2doris-workload [--records N] [--tables N] [--seed S] [--format plain|schema|flattened]
//                      [--partitions N] [--snapshot-rows N] [--server NAME] [--db NAME]
//                      [--ddl [--duplicate-key]] [--expected FILE]
// Writes one JSON line per record: {"topic","partition","offset","key","value"}
// with key/value embedded as JSON (value null = tombstone). Offsets count per
// topic-partition from 0. --ddl prints the Doris CREATE TABLE statements
// instead. --expected FILE also writes the final-state model as JSON lines
// {"table":…,"id":…,"row":{…}} followed by {"table":…,"changes":…,"rows":…}.
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "tests/workload/workload.hpp"

using namespace cdc2doris::workload;

int main(int argc, char** argv) {
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
      if (a == "--records") records = std::stoull(next());
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
  std::map<std::pair<std::string, int32_t>, int64_t> offsets;
  std::string line;
  for (size_t n = 0; n < records; ++n) {
    Record r = g.next();
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
