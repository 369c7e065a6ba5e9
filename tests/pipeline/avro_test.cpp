// decoding.format avro through the pipeline into the Doris emulator, with a
// real schema registry (Apicurio, tests/support/schema_registry.hpp): a
// registry that does not answer makes the pipeline back off and read the
// same records again (none skipped, nothing committed past them); once the
// schemas resolve the rows load; an unknown schema id is a bad record under
// the policy; with every id cached, a registry that is gone costs nothing;
// a registry refusing the credentials stops the pipeline (docs/avro.md).
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "core/avro/avro_records.hpp"
#include "tools/fixtures/avro_encode.hpp"
#include "tests/doris/fake_server.hpp"
#include "tests/pipeline/ddl_world.hpp"
#include "tests/pipeline/fakes.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/schema_registry.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test::ddl;
using namespace std::chrono_literals;
namespace bin = cdc2doris::test::avro_bin;
namespace json = boost::json;

namespace {

const std::string kKeySchema =
    R"({"type":"record","name":"Key","namespace":"pg.d.orders","fields":[{"name":"id","type":"long"}]})";
// A Debezium envelope as the Avro converters write it, cut to what the decoder needs.
const std::string kValueSchema = R"({"type":"record","name":"Envelope","namespace":"pg.d.orders","fields":[
  {"name":"before","type":["null",{"type":"record","name":"Value","fields":[
    {"name":"id","type":"long"},{"name":"name","type":["null","string"],"default":null}]}],"default":null},
  {"name":"after","type":["null","Value"],"default":null},
  {"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[
    {"name":"connector","type":"string"},{"name":"db","type":"string"},{"name":"schema","type":"string"},
    {"name":"table","type":"string"},{"name":"lsn","type":["null","long"],"default":null}]}},
  {"name":"op","type":"string"}]})";

int32_t register_schema(const test::SchemaRegistry& registry, const std::string& subject, const std::string& schema,
                        const test::TempDir& scratch) {
  const auto r = test::curl_http("POST", registry.ccompat_url() + "/subjects/" + subject + "/versions",
                                 json::serialize(json::object{{"schema", schema}}), scratch.path());
  INFO(r.body);
  REQUIRE(r.status == 200);
  return static_cast<int32_t>(json::parse(r.body).as_object().at("id").to_number<int64_t>());
}

std::string insert(int64_t id, const std::string& name, int64_t lsn) {
  using namespace bin;
  return branch(0) + branch(1, varint(id) + branch(1, string(name))) + string("postgresql") + string("d") +
         string("public") + string("orders") + branch(1, varint(lsn)) + string("c");
}

}  // namespace

TEST_CASE("avro through the pipeline: an unanswering registry is retried without skipping, then the rows load",
          "[pipeline][avro]") {
  auto registry = std::make_unique<test::SchemaRegistry>();  // starts while the first run retries
  test::TempDir scratch("avro-pipeline");
  World w;
  w.table("CREATE TABLE orders (id BIGINT NOT NULL, name STRING NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) "
          "BUCKETS 1");
  w.topic("orders");
  registry->wait_ready();
  const int32_t key_id = register_schema(*registry, "pg.d.orders-key", kKeySchema, scratch);
  const int32_t value_id = register_schema(*registry, "pg.d.orders-value", kValueSchema, scratch);
  for (int64_t id = 1; id <= 3; ++id)
    w.source.produce("pg.d.orders", 0, bin::framed(static_cast<uint32_t>(key_id), bin::varint(id)),
                     bin::framed(static_cast<uint32_t>(value_id), insert(id, "n" + std::to_string(id), 1000 + id)));

  // Nothing answers at this URL: every attempt is a retry, never a bad record.
  {
    avro::AvroRecords unanswered(
        avro::RegistryOptions{"http://127.0.0.1:" + std::to_string(test::free_port()), "", "", 200ms});
    w.avro = &unanswered;
    const auto res = w.run_until(
        [&] {
          const auto s = w.metrics.snapshot();
          const auto it = s.rewinds_by_reason.find("schema registry");
          return it != s.rewinds_by_reason.end() && it->second >= 3;
        },
        w.config());
    CHECK_FALSE(res.error);  // it backs off and tries again; it does not stop
    const auto s = w.metrics.snapshot();
    CHECK(s.rewinds_by_reason.at("schema registry") >= 3);
    for (const auto& [reason, n] : s.bad_records) CHECK(n == 0);
    CHECK(w.emu.rows("d", "orders").empty());
    for (const auto& [tp, offset] : w.source.group_committed()) CHECK(offset == 0);
  }

  // The registry answers: the same records load, and an id it never gave is
  // a bad record (skipped here by policy, counted).
  w.source.produce("pg.d.orders", 0, bin::framed(static_cast<uint32_t>(key_id), bin::varint(4)),
                   bin::framed(static_cast<uint32_t>(value_id + 1000), insert(4, "n4", 1004)));
  w.source.produce("pg.d.orders", 0, bin::framed(static_cast<uint32_t>(key_id), bin::varint(5)),
                   bin::framed(static_cast<uint32_t>(value_id), insert(5, "n5", 1005)));
  avro::AvroRecords records(avro::RegistryOptions{registry->ccompat_url(), "", "", 5000ms});
  w.avro = &records;
  auto cfg = w.config();
  cfg.bad_record_policy = pipeline::BadRecordPolicy::Skip;
  const auto res = w.run(5, cfg);  // the stop commits the epoch
  REQUIRE_FALSE(res.error);
  CHECK(w.emu.rows("d", "orders") == std::vector<std::string>{R"({"id":1,"name":"n1"})", R"({"id":2,"name":"n2"})",
                                                              R"({"id":3,"name":"n3"})", R"({"id":5,"name":"n5"})"});
  CHECK(w.metrics.snapshot().bad_records.at("unknown_schema_id|skip") == 1);
  CHECK(records.registry_fetches() == 3);  // key, value, the unknown id: each asked once

  // The registry goes away. Records under the ids already fetched load as
  // before: no request, no rewind, no bad record.
  registry.reset();
  for (int64_t id = 6; id <= 7; ++id)
    w.source.produce("pg.d.orders", 0, bin::framed(static_cast<uint32_t>(key_id), bin::varint(id)),
                     bin::framed(static_cast<uint32_t>(value_id), insert(id, "n" + std::to_string(id), 1000 + id)));
  const auto rewinds_before = w.metrics.snapshot().rewinds_by_reason.at("schema registry");
  const auto outage = w.run(2, cfg);
  REQUIRE_FALSE(outage.error);
  const auto rows = w.emu.rows("d", "orders");
  REQUIRE(rows.size() == 6);
  CHECK(rows[4] == R"({"id":6,"name":"n6"})");
  CHECK(rows[5] == R"({"id":7,"name":"n7"})");
  CHECK(records.registry_fetches() == 3);
  const auto s = w.metrics.snapshot();
  CHECK(s.rewinds_by_reason.at("schema registry") == rewinds_before);
  CHECK(s.bad_records.at("unknown_schema_id|skip") == 1);
  for (const auto& [tp, offset] : w.source.group_committed()) CHECK(offset == 7);
}

// Apicurio 2.4 authenticates through an OIDC server only, so the registry
// refusing basic-auth credentials is played by the tests' scriptable HTTP
// server (tests/doris/fake_server.hpp): it answers 401 unless the
// Authorization header carries cdc:right, as a Confluent registry with basic
// auth does.
TEST_CASE("avro through the pipeline: credentials the registry refuses stop it, naming the record and the id",
          "[pipeline][avro]") {
  const std::string good = "Basic Y2RjOnJpZ2h0";  // base64("cdc:right")
  auto reply = [](int status, std::string body) {
    test::FakeReply r;
    r.status = status;
    r.body = std::move(body);
    if (status == 401) r.headers["WWW-Authenticate"] = "Basic realm=\"registry\"";
    return r;
  };
  test::FakeScript script;
  script.on_request = [&](const test::FakeRequest& r) {
    if (r.header("authorization") != good) return reply(401, R"({"error_code":401,"message":"Unauthorized"})");
    if (r.target == "/schemas/ids/1") return reply(200, json::serialize(json::object{{"schema", kKeySchema}}));
    if (r.target == "/schemas/ids/2") return reply(200, json::serialize(json::object{{"schema", kValueSchema}}));
    return reply(404, R"({"error_code":40403,"message":"Schema not found"})");
  };
  test::FakeServer registry(std::move(script));
  World w;
  w.table("CREATE TABLE orders (id BIGINT NOT NULL, name STRING NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) "
          "BUCKETS 1");
  w.topic("orders");
  w.source.produce("pg.d.orders", 0, bin::framed(1, bin::varint(1)), bin::framed(2, insert(1, "n1", 1001)));

  avro::AvroRecords refused(avro::RegistryOptions{registry.url(), "cdc", "not-the-password", 5000ms});
  w.avro = &refused;
  const auto res = w.run_until([] { return false; }, w.config());  // until it stops by itself
  REQUIRE(res.error.has_value());
  CHECK(res.error->disposition() == Disposition::Fatal);
  const std::string message = res.error->what();
  CHECK_THAT(message, Catch::Contains("schema id 1 from the registry at " + registry.url()) &&
                          Catch::Contains("refused the credentials of decoding.schema_registry (HTTP 401"));
  CHECK(res.error->context().topic == "pg.d.orders");
  CHECK(res.error->context().offset == 0);
  CHECK(message.find("not-the-password") == std::string::npos);
  CHECK(w.emu.rows("d", "orders").empty());
  for (const auto& [reason, n] : w.metrics.snapshot().bad_records) CHECK(n == 0);
  for (const auto& [tp, offset] : w.source.group_committed()) CHECK(offset == 0);
  const auto asked = registry.requests();
  REQUIRE_FALSE(asked.empty());
  CHECK(asked.front().header("authorization") == "Basic Y2RjOm5vdC10aGUtcGFzc3dvcmQ=");

  // With the right password the same record loads.
  avro::AvroRecords accepted(avro::RegistryOptions{registry.url(), "cdc", "right", 5000ms});
  w.avro = &accepted;
  auto cfg = w.config();
  REQUIRE_FALSE(w.run(1, cfg).error);
  CHECK(w.emu.rows("d", "orders") == std::vector<std::string>{R"({"id":1,"name":"n1"})"});
}
