#pragma once
// A real Kafka Connect worker in standalone mode with the Debezium source
// connectors, for end-to-end tests. Jars (connect-runtime of the broker's
// Kafka version, connect-json, Debezium 3.6 PostgreSQL and MySQL connectors)
// come from Maven Central via tests/connect/pom.xml (scripts/setup) and are
// put on the classpath, so no plugin path scan is needed; a plugin that must
// not share their classpath (the Avro converter) comes as a plugin directory.
// Each worker gets a
// free loopback REST port and a fresh temp dir (offsets, schema history,
// logs); the JVM dies with the test (PDEATHSIG, cleanup registry).
//
// A JVM start costs many seconds: start one worker per test binary and add
// connectors over REST (several connectors run in one worker at once). The
// constructor only spawns the JVM, so the test can prepare its database
// meanwhile; wait_ready() (also called by create_connector) waits for the
// REST API. Construct it on the thread that keeps it: the parent-death signal
// belongs to the spawning thread, so a JVM spawned from a short-lived
// std::async thread is killed when that thread ends.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/run_command.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

namespace cdc2doris::test {

class KafkaConnect {
 public:
  // plugin_dirs: directories of Connect plugins (one subdirectory of jars
  // each) kept apart from the classpath: the worker's plugin.path, e.g.
  // avro_converter_plugin(). Spawns the JVM, returns at once.
  explicit KafkaConnect(const std::string& bootstrap, const std::vector<std::string>& plugin_dirs = {});
  ~KafkaConnect();
  KafkaConnect(const KafkaConnect&) = delete;
  KafkaConnect& operator=(const KafkaConnect&) = delete;

  // The plugin directory holding Apicurio's Avro converter and its jars
  // (tests/connect/avro-converter/pom.xml); throws when scripts/setup has not
  // fetched it.
  static std::string avro_converter_plugin();

  std::string rest() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::filesystem::path& dir() const { return dir_.path(); }

  // Waits until the REST API answers; throws with the log tail on timeout or exit.
  void wait_ready(std::chrono::seconds timeout = std::chrono::seconds(180));
  // POST /connectors. Topics the connector writes are created by the worker
  // (one partition, replication factor 1) unless the config says otherwise.
  void create_connector(const std::string& name, std::map<std::string, std::string> config);
  // Waits until the connector and all its tasks are RUNNING; throws with the
  // status (task traces included) and the log tail if one FAILED or on timeout.
  void wait_running(const std::string& name, std::chrono::seconds timeout = std::chrono::seconds(120));
  std::string status(const std::string& name) const;
  void delete_connector(const std::string& name);
  std::string log_tail(size_t bytes = 6000) const;

 private:
  HttpAnswer http(const std::string& method, const std::string& path, const std::string& body = "") const;

  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<Process> jvm_;
  bool ready_ = false;
};

}  // namespace cdc2doris::test
