// core/avro's registry client against a real schema registry (Apicurio
// Registry 2.4.2, its Confluent-compatible API): a schema registered through
// the API is fetched by its id (also over the registry's own HTTPS), an
// unknown id is an error naming it, prefetched and cached ids need no
// registry, and a registry that is gone is a retry.
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/avro/avro_records.hpp"
#include "core/avro/registry_client.hpp"
#include "tools/fixtures/avro_encode.hpp"
#include "tests/doris/fake_server.hpp"
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
  const auto tls = make_self_signed(scratch.path());
  auto registry = std::make_unique<SchemaRegistry>(RegistryTls{tls.cert, tls.key});
  registry->wait_ready();
  const int32_t id = register_schema(*registry, "reg.public.t-key", kSchema, scratch);
  const std::string url = registry->ccompat_url();

  // HTTPS served by the registry itself (Quarkus, Vert.x over the JDK's
  // TLS): its certificate checked against the CA file and the URL's host,
  // by address and by name; the system's CAs do not know it.
  {
    const std::string https = "https://127.0.0.1:" + std::to_string(registry->https_port()) + "/apis/ccompat/v7";
    // A long timeout: a fetch that waited for something the registry never
    // sends (its close_notify, once) would take all of it.
    avro::RegistryOptions options{https, "", "", std::chrono::milliseconds(60000)};
    options.ca_file = tls.cert.string();
    avro::RegistryClient by_address(options);
    const auto started = std::chrono::steady_clock::now();
    CHECK(std::holds_alternative<size_t>(by_address.probe()));
    CHECK(std::holds_alternative<avro::RegistryClient::Schema>(by_address.schema(id)));
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));
    options.url = "https://localhost:" + std::to_string(registry->https_port()) + "/apis/ccompat/v7";
    avro::RegistryClient by_name(options);
    CHECK(std::holds_alternative<avro::RegistryClient::Schema>(by_name.schema(id)));
    avro::RegistryClient system_cas(avro::RegistryOptions{https, "", "", std::chrono::milliseconds(5000)});
    auto refused = system_cas.schema(id);
    REQUIRE(std::holds_alternative<avro::RegistryFailure>(refused));
    CHECK(std::get<avro::RegistryFailure>(refused).kind == avro::RegistryFailure::Kind::Unreachable);
    CHECK_THAT(std::get<avro::RegistryFailure>(refused).message,
               Catch::Contains("TLS handshake failed") && Catch::Contains("certificate"));
  }

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

  // Prefetch: every version of the wanted topics' subjects, newest first;
  // another topic's subject is left alone.
  const std::string v2 =
      R"({"type":"record","name":"Value","namespace":"reg.public.t","fields":[{"name":"id","type":"int"}]})";
  const std::string v3 = R"({"type":"record","name":"Value","namespace":"reg.public.t","fields":[{"name":"id",)"
                         R"("type":"int"},{"name":"x","type":["null","string"],"default":null}]})";
  const int32_t value_v1 = register_schema(*registry, "reg.public.t-value", v2, scratch);
  const int32_t value_v2 = register_schema(*registry, "reg.public.t-value", v3, scratch);
  const int32_t elsewhere = register_schema(
      *registry, "reg.public.u-value", R"({"type":"record","name":"U","fields":[{"name":"u","type":"long"}]})", scratch);
  avro::RegistryClient prefetching(avro::RegistryOptions{url, "", "", std::chrono::milliseconds(5000)});
  std::vector<std::string> asked;
  const auto pre = prefetching.prefetch([&](std::string_view topic) {
    asked.emplace_back(topic);
    return topic == "reg.public.t";
  });
  REQUIRE(std::holds_alternative<avro::RegistryClient::Prefetched>(pre));
  CHECK(std::get<avro::RegistryClient::Prefetched>(pre).subjects == 2);
  CHECK(std::get<avro::RegistryClient::Prefetched>(pre).schemas == 3);
  CHECK(prefetching.fetches() == 3);
  std::sort(asked.begin(), asked.end());
  CHECK(asked == std::vector<std::string>{"reg.public.t", "reg.public.t", "reg.public.u"});
  // The same through AvroRecords, with kafka.topics' regex form.
  avro::AvroRecords prefetched_records(avro::RegistryOptions{url, "", "", std::chrono::milliseconds(5000)});
  const auto by_regex = prefetched_records.prefetch({"^reg\\.public\\.t$", "other"});
  REQUIRE(std::holds_alternative<avro::RegistryClient::Prefetched>(by_regex));
  CHECK(std::get<avro::RegistryClient::Prefetched>(by_regex).schemas == 3);
  CHECK(prefetched_records.registry_fetches() == 3);

  // The registry is gone: cached ids still resolve, others are a retry.
  registry.reset();
  for (const int32_t prefetched : {id, value_v1, value_v2}) {
    INFO("prefetched schema id " << prefetched);
    CHECK(std::holds_alternative<avro::RegistryClient::Schema>(prefetching.schema(prefetched)));
  }
  CHECK(prefetching.fetches() == 3);
  auto not_prefetched = prefetching.schema(elsewhere);
  REQUIRE(std::holds_alternative<avro::RegistryFailure>(not_prefetched));
  CHECK(std::get<avro::RegistryFailure>(not_prefetched).kind == avro::RegistryFailure::Kind::Unreachable);
  in.value = bin::framed(static_cast<uint32_t>(value_v1), bin::varint(7));
  REQUIRE_FALSE(prefetched_records.to_json(in, out).has_value());
  CHECK(json::parse(*out.value).as_object().at("payload") == json::parse(R"({"id":7})"));
  CHECK(prefetched_records.registry_fetches() == 3);
  in.value.reset();
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

// Apicurio's own API with the ids its converter writes: the global id and
// the content id of the version registered above, read from the artifact's
// metadata, each resolve to the schema; the ccompat API's id is the content
// id (the registry is not in its legacy id mode); an unknown global id is a
// 404, a bad record naming the id.
TEST_CASE("avro registry client: global and content ids through Apicurio's own API", "[avro][registry]") {
  TempDir scratch("avro-registry-v2");
  SchemaRegistry registry;
  registry.wait_ready();
  const int32_t ccompat_id = register_schema(registry, "reg.public.t-value", kSchema, scratch);
  // A second version, so global and content ids differ from the first's.
  const std::string v2_schema =
      R"({"type":"record","name":"Key","namespace":"reg.public.t","fields":[{"name":"id","type":"int"},)"
      R"({"name":"x","type":["null","string"],"default":null}]})";
  register_schema(registry, "reg.public.t-value", v2_schema, scratch);
  const auto meta = registry.get("/apis/registry/v2/groups/default/artifacts/reg.public.t-value/versions/1/meta");
  INFO(meta.status << " " << meta.body);
  REQUIRE(meta.status == 200);
  const json::value meta_doc = json::parse(meta.body);
  const auto& m = meta_doc.as_object();
  const int64_t global_id = m.at("globalId").to_number<int64_t>();
  const int64_t content_id = m.at("contentId").to_number<int64_t>();
  CHECK(content_id == ccompat_id);

  avro::RegistryOptions options{registry.apicurio_url(), "", "", std::chrono::milliseconds(5000)};
  options.api = avro::RegistryApi::Apicurio;
  avro::RegistryClient client(options);
  const auto artifacts = client.probe();
  REQUIRE(std::holds_alternative<size_t>(artifacts));
  CHECK(std::get<size_t>(artifacts) == 1);
  for (const auto ref : {avro::SchemaRef{avro::IdKind::Global, global_id},
                         avro::SchemaRef{avro::IdKind::Content, content_id}}) {
    auto got = client.schema(ref);
    INFO(client.describe(ref));
    REQUIRE(std::holds_alternative<avro::RegistryClient::Schema>(got));
    CHECK(json::parse(*std::get<avro::RegistryClient::Schema>(got)) == json::parse(kSchema));
  }
  const avro::SchemaRef unknown{avro::IdKind::Global, global_id + 1000};
  auto missing = client.schema(unknown);
  REQUIRE(std::holds_alternative<avro::RegistryFailure>(missing));
  CHECK(std::get<avro::RegistryFailure>(missing).kind == avro::RegistryFailure::Kind::UnknownId);
  CHECK_THAT(std::get<avro::RegistryFailure>(missing).message,
             Catch::StartsWith("global id " + std::to_string(global_id + 1000) + " from the registry at " +
                               registry.apicurio_url()));

  // Prefetch through Apicurio's own API caches each version under both its
  // ids, whichever a record carries.
  avro::RegistryClient prefetching(options);
  const auto pre = prefetching.prefetch([](std::string_view topic) { return topic == "reg.public.t"; });
  REQUIRE(std::holds_alternative<avro::RegistryClient::Prefetched>(pre));
  CHECK(std::get<avro::RegistryClient::Prefetched>(pre).subjects == 1);
  CHECK(std::get<avro::RegistryClient::Prefetched>(pre).schemas == 2);
  CHECK(prefetching.fetches() == 2);
  for (const auto ref : {avro::SchemaRef{avro::IdKind::Global, global_id},
                         avro::SchemaRef{avro::IdKind::Content, content_id}}) {
    INFO(prefetching.describe(ref));
    auto got = prefetching.schema(ref);
    REQUIRE(std::holds_alternative<avro::RegistryClient::Schema>(got));
    CHECK(json::parse(*std::get<avro::RegistryClient::Schema>(got)) == json::parse(kSchema));
  }
  CHECK(prefetching.fetches() == 2);

  // Records as the converter writes them with headers and with the 8-byte payload id.
  avro::RecordOptions records_options;
  records_options.format = avro::RecordFormat::Avro;
  records_options.id_bytes = 8;
  records_options.payload_id = avro::IdKind::Global;
  avro::AvroRecords records(records_options, options);
  std::string id_bytes;
  for (int shift = 56; shift >= 0; shift -= 8) id_bytes += static_cast<char>((global_id >> shift) & 0xff);
  const std::string bare = bin::varint(42), framed = std::string(1, '\0') + id_bytes + bare;
  const std::string expected = R"({"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],)"
                               R"("optional":false,"name":"reg.public.t.Key"},"payload":{"id":42}})";
  decode::KafkaRecord in, out;
  in.topic = "reg.public.t";
  in.value = framed;
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  CHECK(json::parse(*out.value) == json::parse(expected));
  in.value = bare;
  in.headers = {{"apicurio.value.globalId", id_bytes}};
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  CHECK(json::parse(*out.value) == json::parse(expected));
}

