// The admin endpoint's bearer token and the redaction of secrets, as an
// operator meets them (issue 35 §4, §5b), against the real broker and the
// Doris emulator: /status and /metrics answer 401 with a Bearer challenge
// unless the token is presented, the probes stay open unless configured
// otherwise, `cdc2doris status` presents the token; short secrets (a Doris
// password "0.1") never blank out addresses or version numbers, and no
// configured secret appears in any endpoint, log line or CLI output; the
// state directory is created 0700.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <thread>

#include "daemon/exit_codes.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tools/fixtures/process.hpp"
#include "tests/support/run_command.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

const std::string kToken = "adm-T0ken-5a9f1c7e-long-enough";
const std::string kDorisPassword = "0.1";  // short: also a piece of 127.0.0.1 and of the version 0.1.0
const std::string kKafkaPassword = "Zq7";  // short, and nowhere else in the output

struct Ran {
  int status;
  std::string output;
};

// `argv` to its end (at most 60 s): its exit status and its output, stdout
// and stderr together (a secret must appear in neither).
Ran run(std::vector<std::string> argv, const TempDir& dir, std::map<std::string, std::string> env = {}) {
  ProcessOptions po;
  po.argv = std::move(argv);
  po.env = std::move(env);
  const auto out = (dir / "run.out").string();
  std::filesystem::remove(out);
  po.stdout_file = out;
  po.stderr_file = out;
  Process p(po);
  auto st = p.wait(60s);
  return {st.value_or(-1), read_file(out)};
}

Ran run_cli(const std::vector<std::string>& args, const TempDir& dir) {
  std::vector<std::string> argv{CDC2DORIS_DAEMON_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(std::move(argv), dir, {{"DORIS_PASSWORD", kDorisPassword}});
}

// `cmd` through sh; its exit status and output.
Ran shell(const std::string& cmd, const TempDir& dir) { return run({"sh", "-c", cmd}, dir); }

std::string config(const std::string& bootstrap, const std::string& fe, const std::string& topic, const TempDir& dir,
                   const std::string& admin, bool probes_require_token, const std::string& admin_extra = "") {
  return "kafka:\n  bootstrap_servers: \"" + bootstrap + "\"\n  group_id: sec-test\n  topics: [\"" + topic +
         "\"]\n  properties:\n    auto.offset.reset: earliest\n    session.timeout.ms: \"6000\"\n"
         // A secret even on a PLAINTEXT listener, where librdkafka ignores it.
         "    sasl.password: \"" + kKafkaPassword + "\"\n"
         "doris:\n  fe: [\"" + fe + "\"]\n  user: root\n  password: \"${DORIS_PASSWORD}\"\n  connect_timeout: 1s\n"
         "  request_timeout: 10s\n  max_attempts: 1\n"
         "delivery:\n  label_prefix: sec\n  epoch_interval: 300ms\n  shutdown_deadline: 20s\n"
         "state:\n  dir: " + (dir / "state" / "sec").string() + "\n"
         "admin:\n  listen: \"" + admin + "\"\n  token_file: " + (dir / "admin-token").string() + "\n" +
         (probes_require_token ? "  probes_require_token: true\n" : "") + admin_extra + "logging:\n  level: debug\n";
}

HttpResponse get(Emulator& emu, const std::string& admin, const std::string& path, const std::string& auth = "") {
  std::map<std::string, std::string> headers;
  if (!auth.empty()) headers["Authorization"] = auth;
  try {
    return emu.http("GET", admin, path, headers);
  } catch (const std::exception&) {
    return {};
  }
}

HttpResponse wait_status(Emulator& emu, const std::string& admin, const std::string& path, int status,
                         const std::string& auth = "") {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  HttpResponse r;
  while (std::chrono::steady_clock::now() < deadline) {
    r = get(emu, admin, path, auth);
    if (r.status == status) return r;
    std::this_thread::sleep_for(200ms);
  }
  return r;
}

// Every way a short secret's value was once cut out of ordinary text.
void check_no_secret(const std::string& everything) {
  CHECK(everything.find(kToken) == std::string::npos);
  CHECK(everything.find(kKafkaPassword) == std::string::npos);
  CHECK(everything.find("127.0.[redacted]") == std::string::npos);
  CHECK(everything.find("[redacted].0") == std::string::npos);
  CHECK(everything.find(":" + kDorisPassword + "@") == std::string::npos);
}

}  // namespace

TEST_CASE("security: the admin token guards /status and /metrics, the probes stay open; short secrets hidden by "
          "position only",
          "[daemon][security][issue35]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("security");
  std::ofstream(dir / "admin-token") << kToken << "\n";
  EmulatorOptions eo;
  eo.users = {"root:" + kDorisPassword};
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  emu.sql("", "CREATE DATABASE shop");
  emu.sql("shop", "CREATE TABLE items (id BIGINT NOT NULL, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  const std::string topic = "sec.shop.items";
  broker.create_topic(topic, 1);
  const std::string admin = "127.0.0.1:" + std::to_string(free_port());
  std::ofstream(dir / "cfg.yaml") << config(broker.bootstrap(), emu.fe(), topic, dir, admin, false);

  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "cfg.yaml").string()};
  po.env = {{"DORIS_PASSWORD", kDorisPassword}};
  po.stdout_file = (dir / "daemon.log").string();
  po.stderr_file = (dir / "daemon.log").string();
  auto daemon = std::make_unique<Process>(po);
  INFO(read_file(dir / "daemon.log"));
  std::string everything;

  // The probes answer without a token (kubelet sends none).
  REQUIRE(wait_status(emu, admin, "/healthz", 200).status == 200);
  auto ready = wait_status(emu, admin, "/readyz", 200);
  REQUIRE(ready.status == 200);
  everything += ready.body;

  const std::string bearer = "Bearer " + kToken;
  for (const std::string path : {"/status", "/metrics"}) {
    INFO(path);
    auto none = get(emu, admin, path);
    CHECK(none.status == 401);
    CHECK(none.headers["www-authenticate"] == R"(Bearer realm="cdc2doris")");
    CHECK_THAT(none.body, Catch::Contains("Authorization: Bearer"));
    auto wrong = get(emu, admin, path, "Bearer " + kToken + "x");
    CHECK(wrong.status == 401);
    CHECK_THAT(wrong.headers["www-authenticate"], Catch::Contains("error=\"invalid_token\""));
    CHECK(get(emu, admin, path, "Bearer").status == 401);
    CHECK(get(emu, admin, path, "Basic " + kToken).status == 401);
    CHECK(get(emu, admin, path, kToken).status == 401);
    auto ok = get(emu, admin, path, bearer);
    CHECK(ok.status == 200);
    CHECK(get(emu, admin, path, "bearer " + kToken).status == 200);  // the scheme is case-insensitive
    everything += none.body + wrong.body + ok.body;
  }
  CHECK(get(emu, admin, "/nope").status == 404);

  // Rows through, so /status and the log name the FE, the tables and the labels.
  std::vector<TestRecord> recs;
  for (int i = 1; i <= 20; ++i)
    recs.push_back({"{\"id\":" + std::to_string(i) + "}",
                    R"({"before":null,"after":{"id":)" + std::to_string(i) +
                        R"(,"v":"x"},"source":{"version":"2.5.0.Final","connector":"mysql","name":"sec","ts_ms":1,)"
                        R"("snapshot":"false","db":"shop","table":"items"},"op":"c","ts_ms":2})",
                    {},
                    0});
  broker.produce(topic, recs);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (emu.rows("shop", "items").size() < 20 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(200ms);
  CHECK(emu.rows("shop", "items").size() == 20);
  for (const std::string path : {"/status", "/metrics", "/readyz", "/healthz"}) everything += get(emu, admin, path, bearer).body;

  // `cdc2doris status` presents admin.token from the config, or --token-file.
  auto by_config = run_cli({"status", "--config", (dir / "cfg.yaml").string()}, dir);
  CHECK(by_config.status == 0);
  CHECK_THAT(by_config.output, Catch::Contains(": READY"));
  auto no_token = run_cli({"status", "--admin", admin}, dir);
  CHECK(no_token.status == 1);
  CHECK_THAT(no_token.output, Catch::Contains("401") && Catch::Contains("--token-file"));
  auto by_file = run_cli({"status", "--admin", admin, "--token-file", (dir / "admin-token").string()}, dir);
  CHECK(by_file.status == 0);
  everything += by_config.output + no_token.output + by_file.output;

  auto check = run_cli({"check", "--connect", "--config", (dir / "cfg.yaml").string()}, dir);
  CHECK(check.status == 0);
  // The FE address is printed as it is, although the password is a piece of it.
  CHECK_THAT(check.output, Catch::Contains("doris FE " + emu.fe() + ": authenticated as root"));
  everything += check.output;

  CHECK(daemon->stop(30s) == 0);
  daemon.reset();
  const std::string log = read_file(dir / "daemon.log");
  everything += log;
  CHECK_THAT(log, Catch::Contains("cdc2doris 0.1.0"));  // the version line, verbatim
  CHECK_THAT(log, Catch::Contains("bearer token required on /metrics and /status"));
  // The Kafka properties line hides it by key, once.
  CHECK_THAT(log, Catch::Contains("sasl.password=[redacted] "));
  check_no_secret(everything);

  // Created by the daemon: 0700.
  struct stat st {};
  REQUIRE(::stat((dir / "state" / "sec").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);

  // probes_require_token: the probes want the token as well.
  std::ofstream(dir / "cfg.yaml") << config(broker.bootstrap(), emu.fe(), topic, dir, admin, true);
  daemon = std::make_unique<Process>(po);
  auto healthz = wait_status(emu, admin, "/healthz", 401);
  CHECK(healthz.status == 401);
  CHECK(healthz.headers["www-authenticate"] == R"(Bearer realm="cdc2doris")");
  CHECK(get(emu, admin, "/readyz").status == 401);
  CHECK(wait_status(emu, admin, "/healthz", 200, bearer).status == 200);
  CHECK(wait_status(emu, admin, "/readyz", 200, bearer).status == 200);
  CHECK(daemon->stop(30s) == 0);
  daemon.reset();
  check_no_secret(read_file(dir / "daemon.log"));
}


TEST_CASE("security: admin.tls serves the endpoint over HTTPS only; status trusts the configured certificate",
          "[daemon][security][tls][issue35]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("security-tls");
  std::ofstream(dir / "admin-token") << kToken << "\n";
  // A self-signed certificate for 127.0.0.1 (openssl from Debian, scripts/setup).
  auto gen = shell("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=cdc2doris-admin -addext "
                   "subjectAltName=IP:127.0.0.1 -keyout " + (dir / "admin.key").string() + " -out " +
                       (dir / "admin.pem").string(),
                   dir);
  INFO(gen.output);
  REQUIRE(gen.status == 0);
  EmulatorOptions eo;
  eo.users = {"root:" + kDorisPassword};
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  emu.sql("", "CREATE DATABASE shop");
  const std::string topic = "sectls.shop.items";
  broker.create_topic(topic, 1);
  const std::string port = std::to_string(free_port());
  const std::string admin = "127.0.0.1:" + port;
  std::ofstream(dir / "cfg.yaml") << config(broker.bootstrap(), emu.fe(), topic, dir, admin, false,
                                            "  tls:\n    cert_file: " + (dir / "admin.pem").string() +
                                                "\n    key_file: " + (dir / "admin.key").string() + "\n");
  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "cfg.yaml").string()};
  po.env = {{"DORIS_PASSWORD", kDorisPassword}};
  po.stdout_file = (dir / "daemon.log").string();
  po.stderr_file = (dir / "daemon.log").string();
  Process daemon(po);
  INFO(read_file(dir / "daemon.log"));

  const std::string curl = "curl -sS --max-time 10 --cacert " + (dir / "admin.pem").string() + " ";
  const std::string url = "https://127.0.0.1:" + port;
  Ran ready{};
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    ready = shell(curl + "-o /dev/null -w '%{http_code}' " + url + "/readyz", dir);
    if (ready.output == "200") break;
    std::this_thread::sleep_for(300ms);
  }
  CHECK(ready.output == "200");
  CHECK(shell(curl + "-o /dev/null -w '%{http_code}' " + url + "/status", dir).output == "401");
  auto status = shell(curl + "-H 'Authorization: Bearer " + kToken + "' " + url + "/status", dir);
  CHECK(status.status == 0);
  CHECK_THAT(status.output, Catch::Contains("\"ready\":true"));
  // The certificate is checked: without the CA curl refuses; plain HTTP gets no answer.
  CHECK(shell("curl -sS --max-time 10 -o /dev/null " + url + "/healthz", dir).status != 0);
  CHECK(get(emu, admin, "/healthz").status == 0);
  // `cdc2doris status --config` speaks HTTPS and trusts the configured certificate.
  auto by_config = run_cli({"status", "--config", (dir / "cfg.yaml").string()}, dir);
  CHECK(by_config.status == 0);
  CHECK_THAT(by_config.output, Catch::Contains(": READY"));
  CHECK(daemon.stop(30s) == 0);
  CHECK_THAT(read_file(dir / "daemon.log"), Catch::Contains("admin endpoint on https://" + admin));

  // A key that does not match the certificate: refused at start, exit 2.
  shell("openssl genrsa -out " + (dir / "other.key").string() + " 2048", dir);
  std::ofstream(dir / "cfg.yaml") << config(broker.bootstrap(), emu.fe(), topic, dir, admin, false,
                                            "  tls:\n    cert_file: " + (dir / "admin.pem").string() +
                                                "\n    key_file: " + (dir / "other.key").string() + "\n");
  auto bad = run_cli({"run", "--config", (dir / "cfg.yaml").string()}, dir);
  CHECK(bad.status == daemon::kExitUsage);
  CHECK_THAT(bad.output, Catch::Contains("admin.tls.key_file " + (dir / "other.key").string() + ": key values mismatch"));
}
