#include "tests/support/kafka_connect.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/run_command.hpp"

namespace cdc2doris::test {

namespace {
std::string lib_dir() {
  const char* env = std::getenv("CDC2DORIS_CONNECT_LIB_DIR");
  std::string dir = env && *env ? env : CDC2DORIS_CONNECT_LIB_DIR;
  if (!std::filesystem::exists(dir + "/connect-runtime-4.1.1.jar"))
    throw std::runtime_error("Kafka Connect / Debezium jars not found in " + dir + " (run scripts/setup)");
  return dir;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}
}  // namespace

std::string KafkaConnect::avro_converter_plugin() {
  const char* env = std::getenv("CDC2DORIS_AVRO_CONVERTER_DIR");
  std::string dir = env && *env ? env : CDC2DORIS_AVRO_CONVERTER_DIR;
  if (!std::filesystem::exists(dir + "/apicurio-avro-converter/apicurio-registry-utils-converter-2.6.13.Final.jar"))
    throw std::runtime_error("Apicurio Avro converter jars not found in " + dir + " (run scripts/setup)");
  return dir;
}

KafkaConnect::KafkaConnect(const std::string& bootstrap, const std::vector<std::string>& plugin_dirs)
    : dir_("cdc2doris-connect") {
  const std::string cp = lib_dir() + "/*";
  port_ = free_port();
  {
    std::ofstream w(dir_ / "worker.properties");
    w << "bootstrap.servers=" << bootstrap << "\n"
      << "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
      << "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
      << "offset.storage.file.filename=" << (dir_ / "offsets").string() << "\n"
      << "offset.flush.interval.ms=1000\n"
      << "listeners=http://127.0.0.1:" << port_ << "\n"
      // Debezium is on the classpath; only plugins that must stay apart from
      // it (their own Avro, Jackson) are on plugin.path, which is scanned.
      << "plugin.discovery=only_scan\n";
    if (!plugin_dirs.empty()) {
      w << "plugin.path=";
      for (size_t i = 0; i < plugin_dirs.size(); ++i) w << (i ? "," : "") << plugin_dirs[i];
      w << "\n";
    }
    std::ofstream l(dir_ / "log4j2.properties");
    l << "rootLogger.level=INFO\nrootLogger.appenderRef.f.ref=F\n"
      << "appender.f.type=File\nappender.f.name=F\nappender.f.fileName=" << (dir_ / "connect.log").string() << "\n"
      << "appender.f.layout.type=PatternLayout\nappender.f.layout.pattern=[%d] %p %m (%c)%n\n"
      << "logger.reflections.name=org.reflections\nlogger.reflections.level=ERROR\n";
  }
  const auto out = (dir_ / "connect.out").string();
  // Small heap, serial GC and C1 only, like the broker: the worker moves a few
  // hundred records and must not compete with the code under test.
  jvm_ = std::make_unique<Process>(ProcessOptions{
      {"java", "-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
       "-Dlog4j2.configurationFile=" + (dir_ / "log4j2.properties").string(), "-cp", cp,
       "org.apache.kafka.connect.cli.ConnectStandalone", (dir_ / "worker.properties").string()},
      {}, out, out, ""});
}

void KafkaConnect::wait_ready(std::chrono::seconds timeout) {
  if (ready_) return;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (http("GET", "/connector-plugins").status == 200) break;
    if (!jvm_->running() || std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("Kafka Connect did not start: " + log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ready_ = true;
}

KafkaConnect::~KafkaConnect() {
  if (jvm_) jvm_->stop(std::chrono::seconds(20));
}

HttpAnswer KafkaConnect::http(const std::string& method, const std::string& path, const std::string& body) const {
  return curl_http(method, "http://" + rest() + path, body, dir_.path());
}

void KafkaConnect::create_connector(const std::string& name, std::map<std::string, std::string> config) {
  wait_ready();
  config.emplace("topic.creation.default.replication.factor", "1");
  config.emplace("topic.creation.default.partitions", "1");
  std::string body = "{\"name\":" + json_string(name) + ",\"config\":{";
  bool first = true;
  for (const auto& [k, v] : config) {
    body += (first ? "" : ",") + json_string(k) + ":" + json_string(v);
    first = false;
  }
  body += "}}";
  auto r = http("POST", "/connectors", body);
  if (r.status != 201)
    throw std::runtime_error("Kafka Connect: creating connector " + name + " failed (HTTP " +
                             std::to_string(r.status) + "): " + r.body + "\n" + log_tail());
}

std::string KafkaConnect::status(const std::string& name) const {
  return http("GET", "/connectors/" + name + "/status").body;
}

void KafkaConnect::wait_running(const std::string& name, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string st;
  for (;;) {
    st = status(name);
    if (st.find("\"FAILED\"") != std::string::npos)
      throw std::runtime_error("Kafka Connect: connector " + name + " failed: " + st + "\n" + log_tail());
    // RUNNING connector plus at least one task, none in another state.
    const bool tasks = st.find("\"tasks\":[{") != std::string::npos;
    size_t running = 0, states = 0;
    for (size_t p = st.find("\"state\":"); p != std::string::npos; p = st.find("\"state\":", p + 1)) {
      ++states;
      if (st.compare(p, 17, "\"state\":\"RUNNING\"") == 0) ++running;
    }
    if (tasks && states > 0 && running == states) return;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("Kafka Connect: connector " + name + " not running after timeout: " + st + "\n" +
                               log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

void KafkaConnect::delete_connector(const std::string& name) { http("DELETE", "/connectors/" + name); }

std::string KafkaConnect::log_tail(size_t bytes) const {
  return "--- connect.out ---\n" + file_tail(dir_ / "connect.out", bytes / 3) + "--- connect.log ---\n" +
         file_tail(dir_ / "connect.log", bytes);
}

}  // namespace cdc2doris::test
