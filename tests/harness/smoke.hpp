#pragma once
// The harness smoke check shared by the real-broker and mock-cluster tests:
// 10,000 keyed records into a 4-partition topic, read back, each exactly once.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "tools/fixtures/kafka_util.hpp"

namespace cdc2doris::test {

inline void smoke_exactly_once(const std::string& bootstrap, const std::string& topic,
                               void (*create)(const std::string&, const std::string&, int)) {
  constexpr int kRecords = 10000;
  create(bootstrap, topic, 4);
  std::vector<TestRecord> records;
  records.reserve(kRecords);
  for (int i = 0; i < kRecords; ++i)
    records.push_back({"k" + std::to_string(i), "v" + std::to_string(i), {{"seq", std::to_string(i)}}, -1});
  produce(bootstrap, topic, records);

  auto got = consume_all(bootstrap, topic, kRecords, std::chrono::seconds(60));
  REQUIRE(got.size() == kRecords);
  std::set<std::string> seen;
  std::set<int32_t> partitions;
  for (const auto& r : got) {
    REQUIRE(r.key);
    REQUIRE(r.value);
    CHECK(*r.value == "v" + r.key->substr(1));
    REQUIRE(r.headers.size() == 1);
    CHECK(r.headers[0].second == r.key->substr(1));
    CHECK(seen.insert(*r.key).second);  // no duplicates
    partitions.insert(r.partition);
  }
  CHECK(seen.size() == kRecords);  // nothing lost
  CHECK(partitions.size() == 4);   // keys spread over every partition
}

}  // namespace cdc2doris::test
