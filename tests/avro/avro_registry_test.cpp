// core/avro's registry client against a real schema registry (Apicurio
// Registry 2.4.2, its Confluent-compatible API): a schema registered through
// the API is fetched by its id, an unknown id is an error naming it, a cached
// id needs no registry, and a registry that is gone is a retry.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <memory>
#include <string>

#include "core/avro/avro_records.hpp"
#include "core/avro/registry_client.hpp"
#include "tests/avro/avro_encode.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/schema_registry.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test;
namespace bin = cdc2doris::test::avro_bin;
namespace json = boost::json;

namespace {

const std::string kSchema =
    R"({"type":"record","name":"Key","namespace":"reg.public.t","fields":[{"name":"id","type":"int"}]})";

// Registers `schema` under `subject` through Confluent's API; its id.
int32_t register_schema(const SchemaRegistry& registry, const std::string& subject, const std::string& schema,
                        const TempDir& scratch) {
  const auto r = curl_http("POST", registry.ccompat_url() + "/subjects/" + subject + "/versions",
                           json::serialize(json::object{{"schema", schema}}), scratch.path());
  INFO("register " << subject << ": " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return static_cast<int32_t>(json::parse(r.body).as_object().at("id").to_number<int64_t>());
}

}  // namespace

TEST_CASE("avro registry client: schemas by id from a real registry, cached, errors naming the id",
          "[avro][registry]") {
  TempDir scratch("avro-registry");
  auto registry = std::make_unique<SchemaRegistry>();
  registry->wait_ready();
  const int32_t id = register_schema(*registry, "reg.public.t-key", kSchema, scratch);
  const std::string url = registry->ccompat_url();

  avro::RegistryClient client(avro::RegistryOptions{url, "", "", std::chrono::milliseconds(5000)});
  // check --connect's probe: the subjects the registry holds.
  const auto subjects = client.probe();
  REQUIRE(std::holds_alternative<size_t>(subjects));
  CHECK(std::get<size_t>(subjects) == 1);
  auto got = client.schema(id);
  REQUIRE(std::holds_alternative<avro::RegistryClient::Schema>(got));
  CHECK(json::parse(*std::get<avro::RegistryClient::Schema>(got)) == json::parse(kSchema));
  CHECK(client.fetches() == 1);

  // An id the registry never gave.
  const int32_t unknown = id + 1000;
  auto missing = client.schema(unknown);
  REQUIRE(std::holds_alternative<avro::RegistryFailure>(missing));
  const auto& f = std::get<avro::RegistryFailure>(missing);
  CHECK(f.kind == avro::RegistryFailure::Kind::UnknownId);
  CHECK(f.message.find("schema id " + std::to_string(unknown) + " from the registry at " + url) != std::string::npos);

  // A record under that id is a bad record naming the record and the id.
  avro::AvroRecords records(avro::RegistryOptions{url, "", "", std::chrono::milliseconds(5000)});
  decode::KafkaRecord in, out;
  in.topic = "reg.public.t";
  in.partition = 1;
  in.offset = 5;
  const std::string bad_key = bin::framed(static_cast<uint32_t>(unknown), bin::varint(1));
  in.key = bad_key;
  auto failure = records.to_json(in, out);
  REQUIRE(failure.has_value());
  const auto* bad = std::get_if<decode::DecodeError>(&*failure);
  REQUIRE(bad != nullptr);
  CHECK(bad->code == decode::DecodeErrorCode::UnknownSchemaId);
  CHECK(bad->message().rfind("reg.public.t/1@5: unknown_schema_id at key: expected a schema id the registry knows, got "
                             "schema id " + std::to_string(unknown),
                             0) == 0);

  // A good key: the JSON the decoder reads.
  const std::string key = bin::framed(static_cast<uint32_t>(id), bin::varint(42));
  in.key = key;
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  REQUIRE(out.key.has_value());
  CHECK(json::parse(*out.key) == json::parse(R"({"schema":{"type":"struct","fields":[{"type":"int32",
        "optional":false,"field":"id"}],"optional":false,"name":"reg.public.t.Key"},"payload":{"id":42}})"));
  CHECK_FALSE(out.value.has_value());  // a tombstone stays one

  // The registry is gone: cached ids still resolve, others are a retry.
  registry.reset();
  const auto gone = client.probe();
  REQUIRE(std::holds_alternative<avro::RegistryFailure>(gone));
  CHECK(std::get<avro::RegistryFailure>(gone).kind == avro::RegistryFailure::Kind::Unreachable);
  got = client.schema(id);
  REQUIRE(std::holds_alternative<avro::RegistryClient::Schema>(got));
  CHECK(client.fetches() == 2);  // no request for the cached id
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  const std::string other = bin::framed(static_cast<uint32_t>(id + 1), bin::varint(1));
  in.key = other;
  failure = records.to_json(in, out);
  REQUIRE(failure.has_value());
  const auto* retry = std::get_if<Error>(&*failure);
  REQUIRE(retry != nullptr);
  CHECK(retry->disposition() == Disposition::Retry);
  CHECK(retry->message().find("schema id " + std::to_string(id + 1)) != std::string::npos);
  CHECK(retry->context().offset == 5);
}
