#pragma once
// A real schema registry for the Avro end-to-end tests: Apicurio Registry
// 2.4.2 with in-memory (H2) storage, built by scripts/setup from its Maven
// Central artifacts (tests/registry/pom.xml, docs/avro.md). It speaks
// Confluent's schema registry API under /apis/ccompat/v7 (and v6) and its own
// under /apis/registry/v2. Each registry gets a free loopback port and a fresh
// temp dir (its JVM's tmpdir and log); the JVM dies with the test (PDEATHSIG,
// cleanup registry) and nothing is stored outside the temp dir.
//
// The constructor only spawns the JVM (a start costs seconds), so the test
// can start Kafka Connect and its database meanwhile; wait_ready() waits for
// the readiness check. Construct it on the thread that keeps it (see
// kafka_connect.hpp).
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "tests/support/run_command.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

namespace cdc2doris::test {

// A certificate (chain) and its key in PEM, for the registry to serve HTTPS with.
struct RegistryTls {
  std::filesystem::path cert, key;
};

class SchemaRegistry {
 public:
  // Spawns the JVM and returns at once. With `tls` the registry also serves
  // HTTPS (Quarkus' own TLS, Vert.x over the JDK's) on https_port().
  explicit SchemaRegistry(std::optional<RegistryTls> tls = std::nullopt);
  ~SchemaRegistry();
  SchemaRegistry(const SchemaRegistry&) = delete;
  SchemaRegistry& operator=(const SchemaRegistry&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Confluent's API (subjects, /schemas/ids/{id}).
  std::string ccompat_url() const { return url() + "/apis/ccompat/v7"; }
  // Apicurio's own API: what its Kafka Connect converter talks to.
  std::string apicurio_url() const { return url() + "/apis/registry/v2"; }
  int https_port() const { return https_port_; }  // 0 without tls

  // Waits until /health/ready answers 200; throws with the log tail on
  // timeout or when the JVM exits.
  void wait_ready(std::chrono::seconds timeout = std::chrono::seconds(120));
  // GET url() + path.
  HttpAnswer get(const std::string& path) const;
  std::string log_tail(size_t bytes = 6000) const;

 private:
  TempDir dir_;
  int port_ = 0;
  int https_port_ = 0;
  std::unique_ptr<Process> jvm_;
  bool ready_ = false;
};

}  // namespace cdc2doris::test
