// Kafka source and DLQ against librdkafka's in-process mock cluster, plus
// the pure parts (error classification, redaction, batch ownership).
#include <catch2/catch.hpp>

#include <set>

#include "core/kafka/dlq.hpp"
#include "core/kafka/errors.hpp"
#include "core/kafka/source.hpp"
#include "tests/kafka/source_test_util.hpp"
#include "tools/fixtures/kafka_util.hpp"
#include "tests/support/mock_cluster.hpp"

using namespace cdc2doris;
using namespace cdc2doris::kafka;
using namespace cdc2doris::kafka::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using namespace std::chrono_literals;

namespace {

std::map<std::string, std::string> props(const std::string& bootstrap, const std::string& group) {
  return {{"bootstrap.servers", bootstrap},
          {"group.id", group},
          {"session.timeout.ms", "6000"},
          {"heartbeat.interval.ms", "500"},
          {"topic.metadata.refresh.interval.ms", "1000"},
          {"log_level", "3"}};
}

std::vector<test::TestRecord> records(int n, int32_t partition, const std::string& tag) {
  std::vector<test::TestRecord> out;
  for (int i = 0; i < n; ++i) {
    test::TestRecord r;
    r.key = tag + "-k" + std::to_string(i);
    r.value = tag + "-v" + std::to_string(i);
    r.partition = partition;
    out.push_back(r);
  }
  return out;
}

// Offsets seen per partition, to check for gaps and duplicates.
std::map<int32_t, std::vector<int64_t>> offsets_by_partition(const std::vector<Copied>& rs) {
  std::map<int32_t, std::vector<int64_t>> out;
  for (const auto& r : rs) out[r.partition].push_back(r.offset);
  return out;
}

}  // namespace

TEST_CASE("secret properties are redacted, others kept", "[kafka]") {
  std::map<std::string, std::string> p = {{"sasl.password", "hunter2"},
                                          {"sasl.jaas.config", "x required password=\"p\";"},
                                          {"ssl.key.password", "k"},
                                          {"ssl.key.pem", "-----BEGIN"},
                                          {"sasl.oauthbearer.client.secret", "s"},
                                          {"ssl.key.location", "/etc/key.pem"},
                                          {"bootstrap.servers", "b:9092"},
                                          {"SASL.PASSWORD", "upper"}};
  auto r = redact(p);
  CHECK(r["sasl.password"] == "[redacted]");
  CHECK(r["sasl.jaas.config"] == "[redacted]");
  CHECK(r["ssl.key.password"] == "[redacted]");
  CHECK(r["ssl.key.pem"] == "[redacted]");
  CHECK(r["sasl.oauthbearer.client.secret"] == "[redacted]");
  CHECK(r["SASL.PASSWORD"] == "[redacted]");
  CHECK(r["ssl.key.location"] == "/etc/key.pem");
  CHECK(r["bootstrap.servers"] == "b:9092");
}

TEST_CASE("librdkafka errors map to dispositions", "[kafka]") {
  auto [err, cls] = GENERATE(table<rd_kafka_resp_err_t, ErrorClass>({
      {RD_KAFKA_RESP_ERR__PARTITION_EOF, ErrorClass::Ignore},
      {RD_KAFKA_RESP_ERR__TRANSPORT, ErrorClass::Transient},
      {RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, ErrorClass::Transient},
      {RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, ErrorClass::Transient},
      {RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, ErrorClass::Retry},
      {RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, ErrorClass::Retry},
      {RD_KAFKA_RESP_ERR__FATAL, ErrorClass::Fatal},
      {RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED, ErrorClass::Fatal},
      {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, ErrorClass::Fatal},
      {RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, ErrorClass::Fatal},
      {RD_KAFKA_RESP_ERR_INVALID_MSG, ErrorClass::Retry},
  }));
  CHECK(classify(err) == cls);
  Error e = make_error(err, "op");
  CHECK(e.disposition() == (cls == ErrorClass::Fatal ? Disposition::Fatal : Disposition::Retry));
  CHECK_THAT(e.message(), Contains(rd_kafka_err2name(err)));
}

// librdkafka 2.0.2's words against a Kafka 4.1 broker (daemon_kafka_security_test
// meets each for real).
TEST_CASE("security failures: classified by code and text, explained with broker, mechanism and fix",
          "[kafka][security]") {
  const std::string alert =
      "ssl://127.0.0.1:9094/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 alert bad certificate: "
      "SSL alert number 42 (after 0ms in state APIVERSION_QUERY)";
  // A broker's TLS alert comes as _TRANSPORT: fatal, not a network blip.
  CHECK(classify(RD_KAFKA_RESP_ERR__TRANSPORT, alert) == ErrorClass::Fatal);
  CHECK(classify(RD_KAFKA_RESP_ERR__TRANSPORT, "127.0.0.1:9092/1: Connect to ipv4#127.0.0.1:9092 failed: "
                                               "Connection refused") == ErrorClass::Transient);
  auto sec = SecuritySettings::of({{"bootstrap.servers", "b:9094"}, {"security.protocol", "SSL"},
                                   {"ssl.ca.location", "/etc/ca.pem"}, {"group.id", "g1"}});
  CHECK_THAT(explain(RD_KAFKA_RESP_ERR__TRANSPORT, alert, sec),
             Contains("TLS: ssl://127.0.0.1:9094/bootstrap rejected the client") &&
                 Contains("set ssl.certificate.location and ssl.key.location"));
  CHECK_THAT(explain(RD_KAFKA_RESP_ERR__SSL,
                     "ssl://h:9094/bootstrap: SSL handshake failed: error:0A000086:SSL routines::certificate verify "
                     "failed: broker certificate could not be verified",
                     sec),
             Contains("SSL (TLS): the certificate of ssl://h:9094/bootstrap is not trusted by ssl.ca.location "
                      "(/etc/ca.pem)"));
  CHECK_THAT(explain(RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, "FindCoordinator response error", sec),
             Contains("may not use consumer group g1: grant READ on group g1") && Contains("bootstrap b:9094"));
  CHECK(explain(RD_KAFKA_RESP_ERR__TRANSPORT, "Connection refused", sec).empty());

  auto scram = SecuritySettings::of({{"security.protocol", "SASL_SSL"}, {"sasl.mechanism", "SCRAM-SHA-512"},
                                     {"sasl.username", "alice-secret-name"}, {"sasl.password", "pw-1"}});
  const std::string why = explain(RD_KAFKA_RESP_ERR__AUTHENTICATION,
                                  "sasl_ssl://h:9095/bootstrap: SASL authentication error: Authentication failed "
                                  "during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
                                  scram);
  CHECK_THAT(why, Contains("SASL authentication (SASL_SSL/SCRAM-SHA-512) refused by sasl_ssl://h:9095/bootstrap: "
                           "check sasl.username and sasl.password"));
  CHECK((why.find("librdkafka#4895") != std::string::npos) == (rd_kafka_version() < 0x020601ff));
  // Neither the user name (a secret here) nor the password.
  CHECK(why.find("alice-secret-name") == std::string::npos);
  CHECK(why.find("pw-1") == std::string::npos);
  // With the settings, the error is fatal and leads with the explanation.
  Error e = make_error(RD_KAFKA_RESP_ERR__TRANSPORT, alert, {}, &sec);
  CHECK(e.disposition() == Disposition::Fatal);
  CHECK_THAT(e.message(), StartsWith("Kafka TLS: ssl://127.0.0.1:9094/bootstrap rejected the client"));
}

TEST_CASE("bad configuration is refused, naming the key but never a secret", "[kafka]") {
  SourceConfig c{{"t"}, {{"bootstrap.servers", "127.0.0.1:1"}, {"group.id", "g"}}};
  SECTION("auto commit cannot be enabled") {
    c.properties["enable.auto.commit"] = "true";
    CHECK_THROWS_WITH(make_kafka_source(c), Contains("enable.auto.commit must be false"));
  }
  SECTION("offset store cannot be enabled") {
    c.properties["enable.auto.offset.store"] = "true";
    CHECK_THROWS_AS(make_kafka_source(c), std::invalid_argument);
  }
  SECTION("group.id is required") {
    c.properties.erase("group.id");
    CHECK_THROWS_WITH(make_kafka_source(c), Contains("group.id"));
  }
  SECTION("unknown property") {
    c.properties["no.such.property"] = "1";
    CHECK_THROWS_WITH(make_kafka_source(c), Contains("no.such.property"));
  }
  SECTION("invalid secret value is not echoed") {
    c.properties["ssl.key.password"] = "";
    c.properties["sasl.mechanisms"] = "PLAIN";
    c.properties["security.protocol"] = "definitely-not-a-protocol-s3cr3t";
    try {
      make_kafka_source(c);
      FAIL("expected invalid_argument");
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Contains("security.protocol"));
    }
  }
  SECTION("no topics") {
    c.topics.clear();
    CHECK_THROWS_AS(make_kafka_source(c), std::invalid_argument);
  }
}

TEST_CASE("a batch releases its owner exactly once, also when moved", "[kafka]") {
  struct Counting : MessageBatch::Owner {
    int* n;
    explicit Counting(int* c) : n(c) {}
    ~Counting() override { ++*n; }
  };
  int released = 0;
  auto storage = std::make_shared<std::string>("keyvalue");
  auto headers = std::make_unique<std::vector<Header>>(std::vector<Header>{{"h", std::string_view("x")}});
  Message m;
  m.topic = "t";
  m.key = std::string_view(*storage).substr(0, 3);
  m.value = std::string_view(*storage).substr(3);
  m.headers = std::span<const Header>(headers->data(), 1);
  std::vector<Message> ms{m};
  {
    MessageBatch a(std::move(ms), std::move(headers), std::make_unique<Counting>(&released));
    CHECK(a.bytes() == 3 + 5 + 1 + 1);
    MessageBatch b = std::move(a);
    CHECK(b.size() == 1);
    CHECK(released == 0);
    MessageBatch c;
    c = std::move(b);
    c.release();
    CHECK(released == 1);
    CHECK(c.empty());
  }
  CHECK(released == 1);
}

TEST_CASE("mock cluster: consume from caller-chosen offsets with keys, tombstones and headers", "[kafka][mock]") {
  test::MockCluster mc(1);
  std::string topic = unique_name("t");
  mc.create_topic(topic, 2);
  auto p0 = records(10, 0, "p0");
  p0[3].value.reset();  // tombstone
  p0[4].key.reset();
  p0[5].headers = {{"h1", "a"}, {"h2", ""}};
  test::produce(mc.bootstrap(), topic, p0);
  test::produce(mc.bootstrap(), topic, records(6, 1, "p1"));

  RecordingListener l;
  l.starts[TopicPartition{topic, 0}] = 2;  // partition 1 has no start: group offset, else earliest
  auto src = make_kafka_source(SourceConfig{{topic}, props(mc.bootstrap(), unique_name("g"))});
  src->subscribe(l);
  auto d = drain(*src, 8 + 6, 30s);
  REQUIRE(d.records.size() == 14);
  CHECK(d.errors.empty());
  REQUIRE(l.assigns.size() == 1);
  CHECK(std::set<TopicPartition>(l.assigns[0].begin(), l.assigns[0].end()) ==
        std::set<TopicPartition>{{topic, 0}, {topic, 1}});
  auto by = offsets_by_partition(d.records);
  CHECK(by[0] == std::vector<int64_t>{2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(by[1] == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  for (const auto& r : d.records) {
    if (r.partition != 0) continue;
    if (r.offset == 3) {
      CHECK_FALSE(r.value);
      CHECK(r.key == "p0-k3");
    } else if (r.offset == 4) {
      CHECK_FALSE(r.key);
      CHECK(r.value == "p0-v4");
    } else if (r.offset == 5) {
      REQUIRE(r.headers.size() == 2);
      CHECK(r.headers[0].first == "h1");
      CHECK(r.headers[0].second == "a");
      CHECK(r.headers[1].second == "");
    }
  }
  CHECK(src->assignment().size() == 2);
  CHECK_FALSE(src->close(10s));
  REQUIRE(l.revokes.size() == 1);
  CHECK(l.revokes[0].size() == 2);
  CHECK_FALSE(src->close(1s));  // idempotent

  // read_headers off (the daemon without a dead-letter queue): same records, no headers parsed.
  RecordingListener l2;
  SourceConfig no_headers{{topic}, props(mc.bootstrap(), unique_name("g"))};
  no_headers.read_headers = false;
  auto src2 = make_kafka_source(no_headers);
  src2->subscribe(l2);
  auto d2 = drain(*src2, 10 + 6, 30s);
  REQUIRE(d2.records.size() == 16);
  for (const auto& r : d2.records) CHECK(r.headers.empty());
  CHECK_FALSE(src2->close(10s));
}

TEST_CASE("mock cluster: commit, committed, seek, pause/resume and lag", "[kafka][mock]") {
  test::MockCluster mc(1);
  std::string topic = unique_name("t");
  std::string group = unique_name("g");
  mc.create_topic(topic, 1);
  test::produce(mc.bootstrap(), topic, records(20, 0, "a"));
  TopicPartition tp{topic, 0};

  RecordingListener l;
  auto src = make_kafka_source(SourceConfig{{topic}, props(mc.bootstrap(), group)});
  src->subscribe(l);
  auto d = drain(*src, 20, 30s);
  REQUIRE(d.records.size() == 20);

  CHECK_FALSE(src->commit(OffsetMap{{tp, 15}}, "epoch=7"));
  auto committed = src->committed({tp}, 10s);
  REQUIRE(std::holds_alternative<OffsetMap>(committed));
  CHECK(std::get<OffsetMap>(committed).at(tp) == 15);

  SECTION("seek rewinds") {
    REQUIRE_FALSE(src->seek(tp, 12, 10s));
    auto again = drain(*src, 8, 30s);
    REQUIRE(again.records.size() == 8);
    CHECK(again.records.front().offset == 12);
    CHECK(again.records.back().offset == 19);
  }
  SECTION("paused partitions deliver nothing while polled, then resume") {
    REQUIRE_FALSE(src->pause({tp}));
    test::produce(mc.bootstrap(), topic, records(5, 0, "b"));
    auto none = drain(*src, 0, 2s);
    CHECK(none.records.empty());
    auto lag = src->lag();
    REQUIRE(lag.size() == 1);
    CHECK(lag[0].position == 20);
    REQUIRE_FALSE(src->resume({tp}));
    auto more = drain(*src, 5, 30s);
    REQUIRE(more.records.size() == 5);
    CHECK(more.records.front().offset == 20);
    drain(*src, 0, 500ms);  // let a fetch response refresh the watermark
    lag = src->lag();
    REQUIRE(lag.size() == 1);
    CHECK(lag[0].high_watermark == 25);
    CHECK(lag[0].lag == 0);
  }
  CHECK_FALSE(src->close(10s));
}

TEST_CASE("mock cluster: broker down mid-consume loses and duplicates nothing", "[kafka][mock][fault]") {
  test::MockCluster mc(1);
  std::string topic = unique_name("t");
  mc.create_topic(topic, 1);
  test::produce(mc.bootstrap(), topic, records(50, 0, "a"));
  // Like the pipeline, resume a lost-and-reassigned partition from the last
  // position recorded (the session may expire while the broker is down).
  RecordingListener l;
  auto track = [&](const Copied& c) { l.starts[TopicPartition{c.topic, c.partition}] = c.offset + 1; };
  auto src = make_kafka_source(SourceConfig{{topic}, props(mc.bootstrap(), unique_name("g"))});
  src->subscribe(l);
  auto first = drain(*src, 50, 30s, track);
  REQUIRE(first.records.size() == 50);

  mc.broker_down(1);
  auto during = drain(*src, 0, 4s, track);
  CHECK(during.records.empty());
  CHECK(during.errors.empty());  // a down broker is librdkafka's to recover from
  mc.broker_up(1);
  test::produce(mc.bootstrap(), topic, records(30, 0, "b"));
  auto after = drain(*src, 30, 60s, track);
  REQUIRE(after.records.size() == 30);
  for (size_t i = 0; i < after.records.size(); ++i) CHECK(after.records[i].offset == 50 + static_cast<int64_t>(i));
  CHECK(after.errors.empty());
  INFO("transient errors during the outage: " << during.transient.size() + after.transient.size());
}

TEST_CASE("mock cluster: fetch errors are retried, commit errors are reported with a disposition",
          "[kafka][mock][fault]") {
  test::MockCluster mc(1);
  std::string topic = unique_name("t");
  mc.create_topic(topic, 1);
  test::produce(mc.bootstrap(), topic, records(10, 0, "a"));
  RecordingListener l;
  auto src = make_kafka_source(SourceConfig{{topic}, props(mc.bootstrap(), unique_name("g"))});
  src->subscribe(l);
  auto first = drain(*src, 1, 30s);
  REQUIRE_FALSE(first.records.empty());

  mc.fail_requests(1 /* Fetch */, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, 3);
  auto rest = drain(*src, 10 - first.records.size(), 30s);
  CHECK(first.records.size() + rest.records.size() == 10);

  mc.fail_requests(8 /* OffsetCommit */, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, 1);
  auto e = src->commit(OffsetMap{{TopicPartition{topic, 0}, 10}}, "");
  REQUIRE(e);
  CHECK(e->disposition() == Disposition::Fatal);
  CHECK_THAT(e->message(), Contains("GROUP_AUTHORIZATION_FAILED"));
  CHECK_FALSE(src->commit(OffsetMap{{TopicPartition{topic, 0}, 10}}, ""));
}

TEST_CASE("mock cluster: listener failure on assign is fatal and nothing is consumed", "[kafka][mock]") {
  test::MockCluster mc(1);
  std::string topic = unique_name("t");
  mc.create_topic(topic, 1);
  test::produce(mc.bootstrap(), topic, records(5, 0, "a"));
  struct Throwing : RecordingListener {
    OffsetMap on_assign(const std::vector<TopicPartition>&) override { throw std::runtime_error("store is gone"); }
  } l;
  auto src = make_kafka_source(SourceConfig{{topic}, props(mc.bootstrap(), unique_name("g"))});
  src->subscribe(l);
  // The mock coordinator delays a new group's first assignment by seconds,
  // more on a busy machine: wait for the error (bounded), then a little
  // longer to see that nothing arrives after it either.
  Drained d;
  for (auto until = std::chrono::steady_clock::now() + 60s; d.errors.empty() && std::chrono::steady_clock::now() < until;) {
    auto more = drain(*src, 0, 500ms);
    d.records.insert(d.records.end(), more.records.begin(), more.records.end());
    d.errors.insert(d.errors.end(), more.errors.begin(), more.errors.end());
  }
  auto after = drain(*src, 0, 2s);
  CHECK(d.records.empty());
  CHECK(after.records.empty());
  REQUIRE_FALSE(d.errors.empty());
  CHECK(d.errors[0].disposition() == Disposition::Fatal);
  CHECK_THAT(d.errors[0].message(), Contains("store is gone"));
}

TEST_CASE("mock cluster: dead letters carry the original record and the reason", "[kafka][mock][dlq]") {
  test::MockCluster mc(1);
  std::string dlq_topic = unique_name("dlq");
  mc.create_topic(dlq_topic, 1);
  auto dlq = make_kafka_dlq({{"bootstrap.servers", mc.bootstrap()}, {"group.id", "ignored-for-producer"}});
  std::string key = "k1", value = "{\"bad\":";
  std::vector<Header> hs{{"orig", std::string_view("x")}, {"nullhdr", std::nullopt}};
  Message m;
  m.topic = "src";
  m.partition = 3;
  m.offset = 42;
  m.key = key;
  m.value = value;
  m.headers = hs;
  REQUIRE_FALSE(dlq->produce(dlq_topic, m, "decode: unexpected end of JSON"));
  REQUIRE_FALSE(dlq->flush(30s));

  auto got = test::consume_all(mc.bootstrap(), dlq_topic, 1, 30s);
  REQUIRE(got.size() == 1);
  CHECK(got[0].key == key);
  CHECK(got[0].value == value);
  std::map<std::string, std::string> h(got[0].headers.begin(), got[0].headers.end());
  CHECK(h["orig"] == "x");
  CHECK(h.contains("nullhdr"));
  CHECK(h[std::string(kDlqErrorHeader)] == "decode: unexpected end of JSON");
  CHECK(h[std::string(kDlqTopicHeader)] == "src");
  CHECK(h[std::string(kDlqPartitionHeader)] == "3");
  CHECK(h[std::string(kDlqOffsetHeader)] == "42");
}

TEST_CASE("dlq refuses to run without idempotence", "[kafka][dlq]") {
  CHECK_THROWS_AS(make_kafka_dlq({{"bootstrap.servers", "127.0.0.1:1"}, {"enable.idempotence", "false"}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(make_kafka_dlq({{"bootstrap.servers", "127.0.0.1:1"}, {"acks", "1"}}), std::invalid_argument);
}

// Issue 31 (7): a replay reads its recorded range whoever owns the
// partitions now, on a handle that never joins the group.
TEST_CASE("mock cluster: read_range reads from first up to end of partitions the source does not own", "[kafka][mock]") {
  test::MockCluster mc(1);
  std::string topic = unique_name("t");
  mc.create_topic(topic, 2);
  test::produce(mc.bootstrap(), topic, records(10, 0, "p0"));
  test::produce(mc.bootstrap(), topic, records(6, 1, "p1"));
  auto src = make_kafka_source(SourceConfig{{topic}, props(mc.bootstrap(), unique_name("g"))});
  REQUIRE(src->can_read_range());
  // Not subscribed: it owns nothing.
  Source::Ranges ranges{{{topic, 0}, {3, 7}}, {{topic, 1}, {0, 6}}};
  std::map<int32_t, std::vector<int64_t>> seen;
  std::vector<std::string> values;
  auto err = src->read_range(ranges, [&](const Message& m) {
    seen[m.partition].push_back(m.offset);
    if (m.partition == 0 && m.value) values.emplace_back(*m.value);
  }, 30s);
  INFO((err ? err->what() : std::string()));
  REQUIRE_FALSE(err);
  CHECK(seen[0] == std::vector<int64_t>{3, 4, 5, 6});
  CHECK(seen[1] == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(values == std::vector<std::string>{"p0-v3", "p0-v4", "p0-v5", "p0-v6"});
  // An empty range reads nothing and returns at once.
  seen.clear();
  CHECK_FALSE(src->read_range({{{topic, 0}, {5, 5}}}, [&](const Message& m) { seen[m.partition].push_back(m.offset); },
                              5s));
  CHECK(seen.empty());
  CHECK_FALSE(src->close(5s));
}
