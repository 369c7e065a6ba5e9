// Kafka security against a real broker (issue 35 §2): one Kafka 4.1 KRaft
// broker with a TLS listener, a SASL_SSL listener (SCRAM-SHA-512 and PLAIN)
// and a mutual-TLS listener, certificates from a test CA, and the
// StandardAuthorizer with ACLs. The daemon loads real records into the Doris
// emulator through each (SCRAM through a Kafka 3.9 broker when librdkafka is
// older than 2.6.1, which Kafka 4.x refuses: librdkafka#4895); a wrong SCRAM password, an unknown CA, an expired
// client certificate and a missing group ACL each fail `check --connect`
// (exit 5) and `run` (exit 1, /readyz while stopping, the `stopped:` line)
// with a message naming the broker, the mechanism and the fix. No configured
// password appears in any output. The `kafka.properties` come from the
// examples in docs/operations.md "Security" (file paths replaced by the test
// CA's), so the documented settings are the tested ones; the GSSAPI example,
// which needs a KDC, is validated by `check` alone.
#include <catch2/catch.hpp>

#include <librdkafka/rdkafka.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "daemon/exit_codes.hpp"
#include "tests/support/run_command.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

const std::string kUserPassword = "Al1ce-Scram-pw-7f3e";  // user "cdc2doris": SCRAM-SHA-512 and PLAIN
const std::string kBobPassword = "B0b-Plain-pw-91c4";      // PLAIN; READ on topics only, no group ACL
const std::string kWrongPassword = "Wr0ng-pw-d2a8";
const std::string kClientCn = "cdc2doris-client";

KafkaBroker& secure_broker() {
  static KafkaBroker broker("", [] {
    KafkaSecurity s;
    s.tls = s.sasl_ssl = s.mtls = true;
    s.users = {{"cdc2doris", kUserPassword}, {"bob", kBobPassword}};
    s.authorizer = true;
    return s;
  }());
  return broker;
}

// Kafka 3.9 with a SASL_SSL listener: SCRAM as Kafka 4.x refuses it from
// librdkafka before 2.6.1 (KafkaBroker::kafka39_lib_dir).
KafkaBroker& scram_broker() {
  static KafkaBroker broker("", [] {
    KafkaSecurity s;
    s.sasl_ssl = true;
    s.users = {{"cdc2doris", kUserPassword}};
    s.authorizer = true;
    return s;
  }(), KafkaBroker::kafka39_lib_dir());
  return broker;
}

// 20 Debezium inserts into shop.<table> on `topic`.
void produce_rows(KafkaBroker& broker, const std::string& topic, const std::string& table) {
  std::vector<TestRecord> recs;
  for (int i = 1; i <= 20; ++i)
    recs.push_back({"{\"id\":" + std::to_string(i) + "}",
                    R"({"before":null,"after":{"id":)" + std::to_string(i) +
                        R"(,"v":"x"},"source":{"version":"2.5.0.Final","connector":"mysql","name":"ksec","ts_ms":1,)"
                        R"("snapshot":"false","db":"shop","table":")" + table + R"("},"op":"c","ts_ms":2})",
                    {},
                    0});
  broker.produce(topic, recs);
}

// kafka.properties lines (YAML, 4 spaces in) for one mechanism, and the
// KAFKA_PASSWORD the daemon's environment gives them.
struct Mechanism {
  std::string name, bootstrap, properties, password = "";
};

// The property lines of the docs/operations.md block marked
// "# example: NAME", with each `from` path replaced by its `to`.
std::string doc_example(const std::string& name, const std::map<std::string, std::string>& paths) {
  const std::string doc = read_file(std::string(CDC2DORIS_SOURCE_DIR) + "/docs/operations.md");
  const size_t at = doc.find("# example: " + name + "\n");
  if (at == std::string::npos) throw std::runtime_error("docs/operations.md has no '# example: " + name + "'");
  const size_t end = doc.find("```", at);
  std::string out;
  std::istringstream lines(doc.substr(at, end - at));
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("    ")) continue;
    for (const auto& [from, to] : paths)
      if (auto p = line.find(from); p != std::string::npos) line.replace(p, from.size(), to);
    out += line + "\n";
  }
  return out;
}

std::string config(const Mechanism& m, const std::string& topic, const std::string& group, const std::string& fe,
                   const TempDir& dir, const std::string& admin) {
  return "kafka:\n  bootstrap_servers: \"" + m.bootstrap + "\"\n  group_id: " + group + "\n  topics: [\"" + topic +
         "\"]\n  properties:\n    auto.offset.reset: earliest\n    session.timeout.ms: \"6000\"\n" + m.properties +
         "doris:\n  fe: [\"" + fe + "\"]\n  user: root\n  password: \"\"\n  connect_timeout: 1s\n"
         "  request_timeout: 10s\n  max_attempts: 1\n"
         "delivery:\n  label_prefix: " + group + "\n  epoch_interval: 300ms\n  shutdown_deadline: 20s\n"
         "state:\n  dir: " + (dir / ("state-" + group)).string() + "\n"
         "admin:\n  listen: \"" + admin + "\"\n";
}

Process start_daemon(const std::filesystem::path& cfg, const std::filesystem::path& log, const Mechanism& m) {
  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", cfg.string()};
  po.env = {{"KAFKA_PASSWORD", m.password}};
  po.stdout_file = log.string();
  po.stderr_file = log.string();
  return Process(po);
}

CommandResult check_connect(const std::filesystem::path& cfg, const TempDir& dir, const Mechanism& m) {
  return run_command({"env", "KAFKA_PASSWORD=" + m.password, CDC2DORIS_DAEMON_BIN, "check", "--connect", "--timeout",
                      "15s", "--config", cfg.string()},
                     dir.path(), 120s);
}

void check_no_password(const std::string& everything) {
  for (const auto& pw : {kUserPassword, kBobPassword, kWrongPassword}) CHECK(everything.find(pw) == std::string::npos);
}

// The documented examples' placeholder paths.
const std::string kDocCa = "/etc/cdc2doris/kafka/ca.pem";
const std::string kDocCert = "/etc/cdc2doris/kafka/client.pem";
const std::string kDocKey = "/etc/cdc2doris/kafka/client.key";

std::string tls_props(const std::filesystem::path& ca) { return doc_example("kafka-tls", {{kDocCa, ca.string()}}); }
// "kafka-scram" or "kafka-plain": user cdc2doris, password from ${KAFKA_PASSWORD}.
std::string sasl_props(const KafkaBroker& b, const std::string& example) {
  return doc_example(example, {{kDocCa, b.ca().cert().string()}});
}
std::string mtls_props(const KafkaBroker& b, const TestCert& client) {
  return doc_example("kafka-mtls",
                     {{kDocCa, b.ca().cert().string()}, {kDocCert, client.cert.string()}, {kDocKey, client.key.string()}});
}

// Before librdkafka 2.6.1 a SCRAM client repeats its nonce in the final
// message, which Kafka 4.x refuses even with the right password
// (librdkafka#4895; Debian 12 ships 2.0.2).
bool scram_works_with_kafka4() { return rd_kafka_version() >= 0x020601ff; }

}  // namespace

TEST_CASE("kafka security: the daemon loads through TLS, SASL_SSL (SCRAM-SHA-512, PLAIN) and mutual TLS",
          "[daemon][kafka][security][issue35]") {
  auto& broker = secure_broker();
  TempDir dir("kafka-sec-load");
  EmulatorOptions eo;
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  emu.sql("", "CREATE DATABASE shop");
  const TestCert client = broker.ca().issue("client", kClientCn);
  const std::string client_principal = "User:CN=" + kClientCn;

  // SCRAM-SHA-512 against Kafka 4.1 when this librdkafka can do it, else
  // against Kafka 3.9 (the refusal by 4.1 is checked in the next test case),
  // and PLAIN over the 4.1 broker's SASL_SSL listener.
  struct Load {
    Mechanism m;
    KafkaBroker* broker;
  };
  KafkaBroker& scram = scram_works_with_kafka4() ? broker : scram_broker();
  const std::vector<Load> loads = {
      {{"tls", broker.tls_bootstrap(), tls_props(broker.ca().cert())}, &broker},
      {{"scram", scram.sasl_ssl_bootstrap(), sasl_props(scram, "kafka-scram"), kUserPassword}, &scram},
      {{"plain", broker.sasl_ssl_bootstrap(), sasl_props(broker, "kafka-plain"), kUserPassword}, &broker},
      {{"mtls", broker.mtls_bootstrap(), mtls_props(broker, client)}, &broker},
  };
  std::string everything;
  for (const auto& [m, b] : loads) {
    INFO("mechanism " << m.name);
    const std::string table = "items_" + m.name;
    const std::string topic = "ksec.shop." + table;
    const std::string group = "ksec-" + m.name;
    emu.sql("shop", "CREATE TABLE " + table +
                        " (id BIGINT NOT NULL, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
    b->create_topic(topic, 2);
    // The TLS listener's principal is User:ANONYMOUS, a super user (the
    // PLAINTEXT setup listener shares it); the others get exactly what the
    // daemon needs: READ on its topic and its group.
    const std::string principal = m.name == "mtls" ? client_principal : "User:cdc2doris";
    if (m.name != "tls") {
      b->allow(principal, AclResource::Topic, topic, "READ");
      b->allow(principal, AclResource::Group, group, "READ");
    }
    produce_rows(*b, topic, table);
    const std::string admin = "127.0.0.1:" + std::to_string(free_port());
    const auto cfg = dir / (m.name + ".yaml");
    std::ofstream(cfg) << config(m, topic, group, emu.fe(), dir, admin);

    auto check = check_connect(cfg, dir, m);
    INFO(check.out << check.err);
    CHECK(check.status == daemon::kExitOk);
    CHECK_THAT(check.out, Catch::Contains("kafka: reachable (bootstrap " + m.bootstrap));
    CHECK_THAT(check.out, Catch::Contains("kafka group " + group + ": committed offsets readable"));
    everything += check.out + check.err;

    const auto log = dir / (m.name + ".log");
    Process proc = start_daemon(cfg, log, m);
    const auto deadline = std::chrono::steady_clock::now() + 90s;
    while (emu.rows("shop", table).size() < 20 && std::chrono::steady_clock::now() < deadline && proc.running())
      std::this_thread::sleep_for(200ms);
    INFO(file_tail(log));
    CHECK(emu.rows("shop", table).size() == 20);
    CHECK(proc.stop(30s) == daemon::kExitOk);
    everything += read_file(log);
  }
  check_no_password(everything);
}

TEST_CASE("kafka security: a refused login, certificate or ACL names the broker, the mechanism and the fix",
          "[daemon][kafka][security][issue35]") {
  auto& broker = secure_broker();
  TempDir dir("kafka-sec-errors");
  EmulatorOptions eo;
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  emu.sql("", "CREATE DATABASE shop");
  emu.sql("shop", "CREATE TABLE items (id BIGINT NOT NULL, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  const std::string topic = "ksecerr.shop.items";
  broker.create_topic(topic, 1);
  produce_rows(broker, topic, "items");
  broker.allow("User:bob", AclResource::Topic, topic, "READ");
  broker.allow("User:cdc2doris", AclResource::Topic, topic, "READ");
  broker.allow("User:cdc2doris", AclResource::Group, "ksecerr-scram", "READ");

  TestCa other_ca(dir.path(), "other-ca");
  // Valid once, for a month in 2020.
  const TestCert expired = broker.ca().issue("expired", kClientCn, "", "20200101000000Z", "20200201000000Z");

  struct Case {
    std::string name;
    Mechanism m;
    std::vector<std::string> want;  // in check's output, the `stopped:` line and a /readyz answer
    std::string topic = "";                // another topic than the shared one
    std::vector<std::string> check_want = {};  // when check words it otherwise
  };
  const std::string bob = "    security.protocol: SASL_SSL\n    ssl.ca.location: " + broker.ca().cert().string() +
                          "\n    sasl.mechanism: PLAIN\n    sasl.username: bob\n    sasl.password: \"${KAFKA_PASSWORD}\"\n";
  // bob may use this group but may not even see the topic.
  const std::string hidden = "ksecerr.shop.hidden";
  broker.create_topic(hidden, 1);
  broker.allow("User:bob", AclResource::Group, "ksecerr-topicacl", "READ");
  std::vector<Case> cases = {
      {"wrong SCRAM password",
       {"scram", broker.sasl_ssl_bootstrap(), sasl_props(broker, "kafka-scram"), kWrongPassword},
       {"SASL authentication (SASL_SSL/SCRAM-SHA-512) refused by sasl_ssl://" + broker.sasl_ssl_bootstrap(),
        "check sasl.username and sasl.password"}},
      {"unknown CA",
       {"ca", broker.tls_bootstrap(), tls_props(other_ca.cert())},
       {"SSL (TLS): the certificate of ssl://" + broker.tls_bootstrap(),
        "is not trusted by ssl.ca.location (" + other_ca.cert().string() + ")",
        "set ssl.ca.location to the CA that issued the broker's certificate"}},
      {"expired client certificate",
       {"expired", broker.mtls_bootstrap(), mtls_props(broker, expired)},
       {"TLS: ssl://" + broker.mtls_bootstrap(), "rejected the client certificate",
        "(" + expired.cert.string() + ", CN=" + kClientCn + ") expired on 2020-02-01 00:00:00 UTC: renew it"}},
      {"missing group ACL",
       {"acl", broker.sasl_ssl_bootstrap(), bob, kBobPassword},
       {"authorization (ACL, SASL_SSL/PLAIN", "may not use consumer group ksecerr-acl",
        "grant READ on group ksecerr-acl"}},
      // Kafka lists only the topics a principal may DESCRIBE: check sees no
      // topic; the subscription is refused with TOPIC_AUTHORIZATION_FAILED.
      {"missing topic ACL",
       {"topicacl", broker.sasl_ssl_bootstrap(), bob, kBobPassword},
       {"authorization (ACL, SASL_SSL/PLAIN", "may not read", "grant it READ and DESCRIBE on"},
       hidden,
       {"topic " + hidden + ": FAILED: does not exist, or the principal may not DESCRIBE it (grant READ on topic " +
        hidden}},
  };
  if (!scram_works_with_kafka4())
    // The right password, refused all the same: the message says why.
    cases.push_back({"SCRAM with librdkafka before 2.6.1 against Kafka 4",
                     {"scram-ok", broker.sasl_ssl_bootstrap(), sasl_props(broker, "kafka-scram"), kUserPassword},
                     {"SASL authentication (SASL_SSL/SCRAM-SHA-512) refused",
                      std::string("this librdkafka (") + rd_kafka_version_str() +
                          ") cannot authenticate with SCRAM to Kafka 4.x brokers",
                      "librdkafka#4895, fixed in 2.6.1"}});

  std::string everything;
  for (const auto& c : cases) {
    SECTION(c.name) {
      const std::string group = "ksecerr-" + c.m.name;
      const std::string admin = "127.0.0.1:" + std::to_string(free_port());
      const auto cfg = dir / (c.m.name + ".yaml");
      std::ofstream(cfg) << config(c.m, c.topic.empty() ? topic : c.topic, group, emu.fe(), dir, admin);

      auto check = check_connect(cfg, dir, c.m);
      INFO(check.out << check.err);
      CHECK(check.status == daemon::kExitCheckFailed);
      for (const auto& w : c.check_want.empty() ? c.want : c.check_want) CHECK_THAT(check.out, Catch::Contains(w));

      // run: exit 1 with the explanation in the `stopped:` line. /readyz
      // names the cause from the moment the health monitor or the pipeline
      // met it until the process is gone; how long that is depends on the
      // machine (0.3 to 5 s here), so every answer sampled is judged, and
      // pipeline_readiness_unit_test pins the reason itself.
      const auto log = dir / (c.m.name + ".log");
      Process proc = start_daemon(cfg, log, c.m);
      std::vector<std::string> named;  // 503 answers that name a Kafka cause
      const auto deadline = std::chrono::steady_clock::now() + 90s;
      while (proc.running() && std::chrono::steady_clock::now() < deadline) {
        try {
          auto r = emu.http("GET", admin, "/readyz");
          if (r.body.find("stopping on a fatal error: Kafka ") != std::string::npos ||
              r.body.find("Kafka has not answered yet: Kafka ") != std::string::npos)
            named.push_back(std::to_string(r.status) + " " + r.body);
        } catch (const std::exception&) {
          // not listening yet, or already gone
        }
        std::this_thread::sleep_for(20ms);
      }
      const auto status = proc.wait(30s);
      const std::string text = read_file(log);
      INFO(text << "\n" << proc.how_ended() << "\n/readyz answers naming a Kafka cause: " << named.size());
      CHECK(status == std::optional<int>(daemon::kExitFatal));
      for (const auto& w : c.want) CHECK_THAT(text, Catch::Contains("stopped: Kafka ") && Catch::Contains(w));
      std::string readyz;
      for (const auto& r : named) {
        CHECK_THAT(r, Catch::StartsWith("503 not ready: "));
        CHECK_THAT(r, Catch::Contains(c.want.back()));
        readyz += r;
      }
      check_no_password(check.out + check.err + text + readyz);
    }
  }
}

TEST_CASE("kafka security: the documented GSSAPI (Kerberos) example passes check", "[daemon][kafka][security][issue35]") {
  // No KDC runs in the tests (docs/operations.md says why); `check` without
  // --connect proves librdkafka accepts the properties: this build has the
  // Cyrus SASL GSSAPI support, and the names and values are right. The
  // keytab is read only by `run` and `check --connect`.
  TempDir dir("kafka-sec-gssapi");
  const std::string props = doc_example("kafka-gssapi", {});
  CHECK_THAT(props, Catch::Contains("sasl.mechanism: GSSAPI"));
  const Mechanism m{"gssapi", "kafka-1.example.com:9093", props};
  const auto cfg = dir / "gssapi.yaml";
  std::ofstream(cfg) << config(m, "dbserver1.shop.orders", "cdc2doris", "127.0.0.1:8030", dir, "127.0.0.1:0");
  auto check = run_command({CDC2DORIS_DAEMON_BIN, "check", "--config", cfg.string()}, dir.path());
  INFO(read_file(cfg) << check.out << check.err);
  CHECK(check.status == daemon::kExitOk);
  CHECK_THAT(check.out, Catch::Contains("is valid"));
  // `check` runs no kinit (it would fetch a ticket, or print "kinit: not found").
  CHECK(check.err.find("kinit") == std::string::npos);
  // Without a keytab librdkafka's default kinit command cannot be built:
  // refused by check as by run.
  std::string no_keytab;
  std::istringstream lines(props);
  for (std::string line; std::getline(lines, line);)
    if (line.find("sasl.kerberos.keytab") == std::string::npos) no_keytab += line + "\n";
  std::ofstream(cfg) << config(Mechanism{"gssapi", m.bootstrap, no_keytab}, "dbserver1.shop.orders", "cdc2doris",
                               "127.0.0.1:8030", dir, "127.0.0.1:0");
  auto keytabless = run_command({CDC2DORIS_DAEMON_BIN, "check", "--config", cfg.string()}, dir.path());
  CHECK(keytabless.status == daemon::kExitUsage);
  CHECK_THAT(keytabless.out + keytabless.err, Catch::Contains("Property not available: \"sasl.kerberos.keytab\""));
  // A misspelt Kerberos property is refused by the same check.
  std::ofstream(cfg) << config(Mechanism{"gssapi", m.bootstrap, props + "    sasl.kerberos.servce.name: kafka\n"},
                               "dbserver1.shop.orders", "cdc2doris", "127.0.0.1:8030", dir, "127.0.0.1:0");
  auto bad = run_command({CDC2DORIS_DAEMON_BIN, "check", "--config", cfg.string()}, dir.path());
  CHECK(bad.status == daemon::kExitUsage);
  CHECK_THAT(bad.out + bad.err, Catch::Contains("sasl.kerberos.servce.name"));
}
