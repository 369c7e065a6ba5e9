#pragma once
// A real Apache Kafka 4.x broker (combined broker+controller, KRaft) for
// integration and end-to-end tests. Jars come from Maven Central via
// tests/kafka/pom.xml (scripts/setup). Each broker gets free loopback ports and
// a fresh temp dir; the JVM dies with the test (PDEATHSIG) and its files are
// removed by the destructor or the interrupt handler.
#include <memory>
#include <string>

#include "tests/support/kafka_util.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace cdc2doris::test {

class KafkaBroker {
 public:
  // extra_properties: more server.properties lines ("key=value\n").
  explicit KafkaBroker(const std::string& extra_properties = "");
  ~KafkaBroker();

  // One broker per test binary, started on first use: a JVM start costs
  // seconds, so test cases share it and isolate themselves by topic/group name.
  static KafkaBroker& shared();

  const std::string& bootstrap() const { return bootstrap_; }
  void create_topic(const std::string& topic, int partitions,
                    const std::map<std::string, std::string>& configs = {}) const {
    test::create_topic(bootstrap_, topic, partitions, configs);
  }
  void add_partitions(const std::string& topic, int total) const { test::add_partitions(bootstrap_, topic, total); }
  void produce(const std::string& topic, const std::vector<TestRecord>& records) const {
    test::produce(bootstrap_, topic, records);
  }
  std::map<int32_t, int64_t> committed_offsets(const std::string& group, const std::string& topic) const {
    return test::committed_offsets(bootstrap_, group, topic);
  }
  // Stops the broker (SIGTERM, or SIGKILL when crash=true) and starts it again
  // on the same ports and log dirs.
  void restart(bool crash = false);
  void stop(bool crash = false);
  void start();
  // Milliseconds the last start took until the broker answered metadata.
  long last_start_ms() const { return last_start_ms_; }
  std::string log_tail(size_t bytes = 4000) const;

 private:
  TempDir dir_;
  int port_ = 0;
  int controller_port_ = 0;
  std::string bootstrap_;
  std::unique_ptr<Process> jvm_;
  long last_start_ms_ = 0;
};

}  // namespace cdc2doris::test
