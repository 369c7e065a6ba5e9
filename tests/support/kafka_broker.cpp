#include "tests/support/kafka_broker.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace cdc2doris::test {

namespace {
std::string classpath() {
  const char* env = std::getenv("CDC2DORIS_KAFKA_LIB_DIR");
  std::string dir = env && *env ? env : CDC2DORIS_KAFKA_LIB_DIR;
  if (!std::filesystem::exists(dir + "/kafka-server-4.1.1.jar") && !std::filesystem::exists(dir))
    throw std::runtime_error("Kafka jars not found in " + dir + " (run scripts/setup)");
  return dir + "/*";
}

std::string random_cluster_id() {
  // A KRaft cluster id is a base64url-encoded 16-byte UUID without padding.
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 21; ++i) id += alphabet[rd() % 64];
  id += alphabet[(rd() % 4) * 16];  // last char carries only 2 significant bits
  return id;
}

std::vector<std::string> java_args(const std::string& main_class, const std::string& props_path) {
  // Small heap, serial GC and C1 only: the broker serves a few MB in tests and
  // must not compete with the code under test for the 2 cores.
  return {"java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
          "-Djava.awt.headless=true", "-cp", classpath(), main_class, props_path};
}
}  // namespace

KafkaBroker::KafkaBroker(const std::string& extra_properties) : dir_("cdc2doris-kafka") {
  port_ = free_port();
  controller_port_ = free_port();
  while (controller_port_ == port_) controller_port_ = free_port();
  bootstrap_ = "127.0.0.1:" + std::to_string(port_);
  std::ofstream props(dir_ / "server.properties");
  props << "process.roles=broker,controller\n"
        << "node.id=1\n"
        << "controller.quorum.voters=1@127.0.0.1:" << controller_port_ << "\n"
        << "listeners=PLAINTEXT://127.0.0.1:" << port_ << ",CONTROLLER://127.0.0.1:" << controller_port_ << "\n"
        << "advertised.listeners=PLAINTEXT://127.0.0.1:" << port_ << "\n"
        << "controller.listener.names=CONTROLLER\n"
        << "inter.broker.listener.name=PLAINTEXT\n"
        << "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
        << "log.dirs=" << (dir_ / "logs").string() << "\n"
        << "offsets.topic.replication.factor=1\n"
        << "offsets.topic.num.partitions=4\n"
        << "transaction.state.log.replication.factor=1\n"
        << "transaction.state.log.min.isr=1\n"
        << "group.initial.rebalance.delay.ms=0\n"
        // A killed consumer leaves the group after its session timeout; tests
        // kill daemons on purpose and should not wait 45 s each time.
        << "group.min.session.timeout.ms=500\n"
        << "auto.create.topics.enable=false\n"
        << "num.partitions=1\n"
        << "log.flush.interval.messages=9223372036854775807\n"
        // The log cleaner looks for dirty compacted logs every 15 s by
        // default; compaction tests need it within a second.
        << "log.cleaner.backoff.ms=500\n"
        << extra_properties;
  props.close();

  auto fmt = java_args("kafka.tools.StorageTool", "");
  fmt.pop_back();  // the empty properties argument
  fmt.emplace_back("format");
  // One token: an id may start with '-', which argparse would take for an
  // option ("--cluster-id: expected one argument", 1 broker start in 64).
  fmt.push_back("--cluster-id=" + random_cluster_id());
  fmt.emplace_back("-c");
  fmt.push_back((dir_ / "server.properties").string());
  Process format({fmt, {}, (dir_ / "format.log").string(), (dir_ / "format.log").string(), ""});
  auto st = format.wait(std::chrono::seconds(60));
  if (!st || *st != 0) throw std::runtime_error("kafka storage format failed: " + log_tail());
  start();
}

KafkaBroker::~KafkaBroker() { stop(false); }

KafkaBroker& KafkaBroker::shared() {
  static KafkaBroker broker;
  return broker;
}

void KafkaBroker::start() {
  if (jvm_ && jvm_->running()) return;
  auto t0 = std::chrono::steady_clock::now();
  jvm_ = std::make_unique<Process>(ProcessOptions{
      java_args("kafka.Kafka", (dir_ / "server.properties").string()), {},
      (dir_ / "broker.log").string(), (dir_ / "broker.log").string(), ""});
  if (!wait_for_cluster(bootstrap_, std::chrono::seconds(90)))
    throw std::runtime_error("Kafka broker did not become ready: " + log_tail());
  last_start_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
}

void KafkaBroker::stop(bool crash) {
  if (!jvm_) return;
  if (crash)
    jvm_->kill9();
  else
    jvm_->stop(std::chrono::seconds(30));
  jvm_.reset();
}

void KafkaBroker::restart(bool crash) {
  stop(crash);
  start();
}

std::string KafkaBroker::log_tail(size_t bytes) const {
  std::string out;
  for (const char* f : {"format.log", "broker.log"}) {
    std::ifstream in(dir_ / f);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    if (s.size() > bytes) s = s.substr(s.size() - bytes);
    out += std::string("--- ") + f + " ---\n" + s;
  }
  return out;
}

}  // namespace cdc2doris::test
