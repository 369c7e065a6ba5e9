#include "tests/support/schema_registry.hpp"

#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

namespace cdc2doris::test {

namespace {
std::string runner_jar() {
  const char* env = std::getenv("CDC2DORIS_REGISTRY_APP_DIR");
  std::string dir = env && *env ? env : CDC2DORIS_REGISTRY_APP_DIR;
  std::string jar = dir + "/apicurio-registry-runner.jar";
  if (!std::filesystem::exists(jar))
    throw std::runtime_error("Apicurio Registry not found at " + jar + " (run scripts/setup)");
  return jar;
}
}  // namespace

SchemaRegistry::SchemaRegistry(std::optional<RegistryTls> tls) : dir_("cdc2doris-registry") {
  const std::string jar = runner_jar();
  port_ = free_port();
  const auto out = (dir_ / "registry.out").string();
  // Small heap, serial GC and C1 only, like the broker and Connect. The
  // connection pool's prod defaults (20 to 100 connections) are for a
  // server; an in-memory database for a few schemas needs two. Vert.x keeps
  // its file cache under java.io.tmpdir: the temp dir, removed with it.
  std::vector<std::string> argv{"java",
                                "-Xms64m",
                                "-Xmx384m",
                                "-XX:+UseSerialGC",
                                "-XX:TieredStopAtLevel=1",
                                "-Djava.awt.headless=true",
                                "-Djava.io.tmpdir=" + dir_.path().string(),
                                "-Dquarkus.http.host=127.0.0.1",
                                "-Dquarkus.http.port=" + std::to_string(port_),
                                "-Dquarkus.datasource.jdbc.min-size=1",
                                "-Dquarkus.datasource.jdbc.initial-size=1",
                                "-Dquarkus.datasource.jdbc.max-size=4"};
  if (tls) {
    // Quarkus 2.16's PEM key pair; the plain port stays for the readiness check.
    // free_port() releases the port it found, so a second call may find it again.
    do https_port_ = free_port();
    while (https_port_ == port_);
    argv.push_back("-Dquarkus.http.ssl-port=" + std::to_string(https_port_));
    argv.push_back("-Dquarkus.http.ssl.certificate.files=" + tls->cert.string());
    argv.push_back("-Dquarkus.http.ssl.certificate.key-files=" + tls->key.string());
  }
  argv.push_back("-jar");
  argv.push_back(jar);
  jvm_ = std::make_unique<Process>(ProcessOptions{std::move(argv), {}, out, out, dir_.path().string()});
}

SchemaRegistry::~SchemaRegistry() {
  if (jvm_) jvm_->stop(std::chrono::seconds(20));
}

void SchemaRegistry::wait_ready(std::chrono::seconds timeout) {
  if (ready_) return;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (get("/health/ready").status == 200) break;
    if (!jvm_->running())
      throw std::runtime_error("the schema registry exited (" + jvm_->how_ended() + "): " + log_tail());
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("the schema registry was not ready in time: " + log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ready_ = true;
}

HttpAnswer SchemaRegistry::get(const std::string& path) const { return curl_http("GET", url() + path, "", dir_.path()); }

std::string SchemaRegistry::log_tail(size_t bytes) const {
  return "--- registry.out ---\n" + file_tail(dir_ / "registry.out", bytes);
}

}  // namespace cdc2doris::test
