// core/avro's framings and formats against the tests' scriptable HTTP server
// standing in for the registry's two APIs: Apicurio's id headers
// (apicurio.value.globalId / contentId, an 8-byte big-endian long, the bare
// Avro body), the 8-byte id after magic byte 0, Confluent's 4-byte one,
// decoding.format auto and formats per topic pattern. Each error names the
// record and the id; the paths asked show which API and id kind were used.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <string>

#include "core/avro/avro_records.hpp"
#include "tools/fixtures/avro_encode.hpp"
#include "tests/doris/fake_server.hpp"

using namespace cdc2doris;
using namespace std::chrono_literals;
namespace bin = cdc2doris::test::avro_bin;
namespace json = boost::json;

namespace {

const std::string kSchema =
    R"({"type":"record","name":"Key","namespace":"srv.public.t","fields":[{"name":"id","type":"int"}]})";
const std::string kJson = R"({"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],)"
                          R"("optional":false,"name":"srv.public.t.Key"},"payload":{"id":42}})";

// Confluent's API at /ccompat (a JSON wrapper), Apicurio's at /v2 (the bare
// schema and its artifact type); id 7 is known in every form, 9 is a Protobuf
// artifact, anything else unknown.
test::FakeScript registry_script() {
  test::FakeScript script;
  script.on_request = [](const test::FakeRequest& r) {
    test::FakeReply reply;
    if (r.target == "/ccompat/schemas/ids/7") {
      reply.body = json::serialize(json::object{{"schema", kSchema}});
    } else if (r.target == "/v2/ids/globalIds/7" || r.target == "/v2/ids/contentIds/7") {
      reply.body = kSchema;
      reply.headers["X-Registry-ArtifactType"] = "AVRO";
    } else if (r.target == "/v2/ids/globalIds/9") {
      reply.body = "syntax = \"proto3\";";
      reply.headers["X-Registry-ArtifactType"] = "PROTOBUF";
    } else {
      reply.status = 404;
      reply.body = R"({"error_code":404,"message":"No artifact with ID found"})";
    }
    return reply;
  };
  return script;
}

avro::RegistryOptions registry_at(const std::string& url, avro::RegistryApi api) {
  avro::RegistryOptions o;
  o.url = url;
  o.timeout = 2000ms;
  o.api = api;
  return o;
}

avro::RecordOptions records_of(avro::RecordFormat format, int id_bytes = 4,
                               avro::IdKind kind = avro::IdKind::Content) {
  avro::RecordOptions o;
  o.format = format;
  o.id_bytes = id_bytes;
  o.payload_id = kind;
  return o;
}

std::string long_be(int64_t id) {
  std::string out;
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((id >> shift) & 0xff);
  return out;
}

decode::KafkaRecord record_at(int64_t offset) {
  decode::KafkaRecord in;
  in.topic = "srv.public.t";
  in.partition = 3;
  in.offset = offset;
  return in;
}

}  // namespace

TEST_CASE("avro framing: an 8-byte id after magic byte 0 as Apicurio writes it", "[avro]") {
  std::string why;
  const std::string record = std::string(1, '\0') + long_be(0x0102030405060708LL) + "body";
  const auto f = avro::unframe(record, 8, why);
  REQUIRE(f.has_value());
  CHECK(f->schema_id == 0x0102030405060708LL);
  CHECK(f->body == "body");
  CHECK_FALSE(avro::unframe(std::string("\0\0\0\0\0\0\0\0", 8), 8, why));
  CHECK(why == "8 bytes");
}

TEST_CASE("avro records: 8-byte payload ids resolve as global or content ids through Apicurio's API", "[avro]") {
  test::FakeServer server(registry_script());
  const std::string v2 = server.url() + "/v2";
  const std::string body = std::string(1, '\0') + long_be(7) + bin::varint(42);
  decode::KafkaRecord in = record_at(1), out;
  in.key = body;

  avro::AvroRecords global(records_of(avro::RecordFormat::Avro, 8, avro::IdKind::Global),
                           registry_at(v2, avro::RegistryApi::Apicurio));
  REQUIRE_FALSE(global.to_json(in, out).has_value());
  REQUIRE(out.key.has_value());
  CHECK(json::parse(*out.key) == json::parse(kJson));
  avro::AvroRecords content(records_of(avro::RecordFormat::Avro, 8, avro::IdKind::Content),
                            registry_at(v2, avro::RegistryApi::Apicurio));
  REQUIRE_FALSE(content.to_json(in, out).has_value());
  CHECK(json::parse(*out.key) == json::parse(kJson));
  const auto asked = server.requests();
  REQUIRE(asked.size() == 2);
  CHECK(asked[0].target == "/v2/ids/globalIds/7");
  CHECK(asked[1].target == "/v2/ids/contentIds/7");

  // An unknown global id: a bad record naming the record and the id.
  const std::string unknown = std::string(1, '\0') + long_be(5000000000LL) + bin::varint(1);
  in.key = unknown;
  const auto f = global.to_json(in, out);
  REQUIRE(f.has_value());
  const auto* bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK(bad->code == decode::DecodeErrorCode::UnknownSchemaId);
  CHECK_THAT(bad->message(), Catch::StartsWith("srv.public.t/3@1: unknown_schema_id at key: expected a schema id the "
                                               "registry knows, got global id 5000000000 from the registry at " +
                                               v2));
  // Too short for the 8-byte framing.
  const std::string short_body = bin::framed(7, "");
  in.key = short_body;
  const auto s = global.to_json(in, out);
  REQUIRE(s.has_value());
  bad = std::get_if<decode::DecodeError>(&*s);
  REQUIRE(bad != nullptr);
  CHECK(bad->message() == "srv.public.t/3@1: invalid_avro at key: expected Apicurio's wire format: magic byte 0, an "
                          "8-byte id, Avro binary, got 5 bytes");
}

TEST_CASE("avro records: Apicurio's id headers carry the id of a bare Avro body", "[avro]") {
  test::FakeServer server(registry_script());
  const std::string v2 = server.url() + "/v2";
  const std::string id7 = long_be(7), body = bin::varint(42);
  decode::KafkaRecord in = record_at(2), out;
  in.value = body;
  in.headers = {{"other", "x"}, {"apicurio.value.globalId", id7}};

  // Headers decide whatever the payload framing configured.
  avro::AvroRecords apicurio(records_of(avro::RecordFormat::Avro, 4), registry_at(v2, avro::RegistryApi::Apicurio));
  REQUIRE_FALSE(apicurio.to_json(in, out).has_value());
  REQUIRE(out.value.has_value());
  CHECK(json::parse(*out.value) == json::parse(kJson));
  CHECK(out.headers == in.headers);

  // A key header beside it is the key's, not the value's.
  in.key = body;
  in.headers = {{"apicurio.key.contentId", id7}, {"apicurio.value.globalId", id7}};
  REQUIRE_FALSE(apicurio.to_json(in, out).has_value());
  CHECK(json::parse(*out.key) == json::parse(kJson));
  auto asked = server.requests();
  REQUIRE(asked.size() == 2);
  CHECK(asked[0].target == "/v2/ids/globalIds/7");
  CHECK(asked[1].target == "/v2/ids/contentIds/7");

  // Confluent's API takes content ids (Apicurio's ccompat API serves them by id)...
  avro::AvroRecords ccompat(records_of(avro::RecordFormat::Avro), registry_at(server.url() + "/ccompat",
                                                                              avro::RegistryApi::Confluent));
  in.key.reset();
  in.headers = {{"apicurio.value.contentId", id7}};
  REQUIRE_FALSE(ccompat.to_json(in, out).has_value());
  CHECK(json::parse(*out.value) == json::parse(kJson));
  CHECK(server.requests().back().target == "/ccompat/schemas/ids/7");
  // ...but no global ids: the configuration is wrong, the daemon stops.
  in.headers = {{"apicurio.value.globalId", id7}};
  const auto wrong = ccompat.to_json(in, out);
  REQUIRE(wrong.has_value());
  const auto* fatal = std::get_if<Error>(&*wrong);
  REQUIRE(fatal != nullptr);
  CHECK(fatal->disposition() == Disposition::Fatal);
  CHECK_THAT(fatal->message(), Catch::Contains("value (header apicurio.value.globalId): global id 7") &&
                                   Catch::Contains("decoding.schema_registry.api: apicurio"));
  CHECK(fatal->context().topic == "srv.public.t");
  CHECK(fatal->context().partition == 3);
  CHECK(fatal->context().offset == 2);

  // A header that is not 8 bytes, an id naming a Protobuf artifact, an unknown id.
  in.headers = {{"apicurio.value.globalId", "\x07"}};
  auto f = apicurio.to_json(in, out);
  REQUIRE(f.has_value());
  auto* bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK(bad->message() == "srv.public.t/3@2: invalid_avro at value: expected Apicurio's header "
                          "apicurio.value.globalId: an 8-byte big-endian id, got 1 bytes");
  const std::string id9 = long_be(9);
  in.headers = {{"apicurio.value.globalId", id9}};
  f = apicurio.to_json(in, out);
  REQUIRE(f.has_value());
  bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK(bad->code == decode::DecodeErrorCode::InvalidAvro);
  CHECK_THAT(bad->message(), Catch::Contains("value (header apicurio.value.globalId)") &&
                                 Catch::Contains("global id 9") && Catch::Contains("artifact type PROTOBUF"));
  in.headers = {{"apicurio.value.groupId", "default"}, {"apicurio.value.artifactId", "srv.public.t-value"}};
  f = apicurio.to_json(in, out);
  REQUIRE(f.has_value());
  bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK_THAT(bad->message(), Catch::Contains("only the artifact's name in headers (apicurio.value.artifactId)"));
  const std::string id11 = long_be(11);
  in.headers = {{"apicurio.value.globalId", id11}};
  f = apicurio.to_json(in, out);
  REQUIRE(f.has_value());
  bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK(bad->code == decode::DecodeErrorCode::UnknownSchemaId);
  CHECK_THAT(bad->message(), Catch::StartsWith("srv.public.t/3@2: unknown_schema_id at value (header "
                                               "apicurio.value.globalId): expected a schema id the registry knows, "
                                               "got global id 11"));

  // Header names a converter renamed (apicurio.registry.headers.*.name):
  // the configured names carry the id, the default ones no longer do.
  auto renamed_options = records_of(avro::RecordFormat::Avro, 4);
  renamed_options.id_headers.value_global = "gid";
  renamed_options.id_headers.key_content = "kcid";
  avro::AvroRecords renamed(renamed_options, registry_at(v2, avro::RegistryApi::Apicurio));
  in.key = body;
  in.headers = {{"kcid", id7}, {"gid", id7}};
  REQUIRE_FALSE(renamed.to_json(in, out).has_value());
  CHECK(json::parse(*out.key) == json::parse(kJson));
  CHECK(json::parse(*out.value) == json::parse(kJson));
  asked = server.requests();
  REQUIRE(asked.size() >= 2);
  CHECK(asked[asked.size() - 2].target == "/v2/ids/contentIds/7");  // the key's
  CHECK(asked.back().target == "/v2/ids/globalIds/7");
  in.key.reset();
  in.headers = {{"apicurio.value.globalId", id7}};
  f = renamed.to_json(in, out);
  REQUIRE(f.has_value());
  bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK_THAT(bad->message(), Catch::Contains("Confluent's wire format"));
}

TEST_CASE("avro records: format auto reads JSON and Avro and names anything else", "[avro]") {
  test::FakeServer server(registry_script());
  avro::AvroRecords records(records_of(avro::RecordFormat::Auto),
                            registry_at(server.url() + "/ccompat", avro::RegistryApi::Confluent));
  decode::KafkaRecord in = record_at(4), out;

  // JSON (after whitespace) and Kafka nulls pass as they are, without the registry.
  const std::string json_value = " \n\t{\"payload\":null}";
  in.value = json_value;
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  REQUIRE(out.value.has_value());
  CHECK(out.value->data() == json_value.data());
  CHECK_FALSE(out.key.has_value());
  in.value.reset();
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  CHECK_FALSE(out.value.has_value());
  CHECK(server.requests().empty());

  // Magic byte 0: Avro; a JSON key beside it stays JSON.
  const std::string avro_value = bin::framed(7, bin::varint(42));
  const std::string json_key = R"({"id":42})";
  in.key = json_key;
  in.value = avro_value;
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  CHECK(*out.key == json_key);
  CHECK(json::parse(*out.value) == json::parse(kJson));
  // An id header: Avro, though its first byte is neither.
  const std::string bare = bin::varint(42), id7 = long_be(7);
  in.value = bare;
  in.headers = {{"apicurio.value.contentId", id7}};
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  CHECK(json::parse(*out.value) == json::parse(kJson));
  in.headers.clear();

  // Anything else: a bad record naming the record and its first bytes.
  const std::string text = "hello, world";
  in.value = text;
  auto f = records.to_json(in, out);
  REQUIRE(f.has_value());
  auto* bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK(bad->code == decode::DecodeErrorCode::UnknownFormat);
  CHECK(bad->message() == "srv.public.t/3@4: unknown_format at value: expected JSON (a '{' first), Avro (magic byte "
                          "0) or Apicurio's id header apicurio.value.globalId or apicurio.value.contentId, got first "
                          "bytes 68 65 6c 6c "
                          "6f 2c 20 77 (of 12)");
  const std::string empty;
  in.value = empty;
  f = records.to_json(in, out);
  REQUIRE(f.has_value());
  bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK(bad->detail == "0 bytes");
}

TEST_CASE("avro records: formats per topic pattern, the first match deciding", "[avro]") {
  avro::RecordOptions options = records_of(avro::RecordFormat::Avro);
  options.topic_formats = {{"json\\..*", avro::RecordFormat::Json},
                           {"mixed\\..*", avro::RecordFormat::Auto},
                           {"json\\.b", avro::RecordFormat::Avro}};
  // Nothing listens: JSON topics never ask the registry.
  avro::AvroRecords records(options, registry_at("http://127.0.0.1:1", avro::RegistryApi::Confluent));
  CHECK(records.format_of("json.a") == avro::RecordFormat::Json);
  CHECK(records.format_of("json.b") == avro::RecordFormat::Json);
  CHECK(records.format_of("mixed.x") == avro::RecordFormat::Auto);
  CHECK(records.format_of("xjson.a") == avro::RecordFormat::Avro);  // the whole name must match
  CHECK(records.format_of("other") == avro::RecordFormat::Avro);

  // A JSON topic's record passes as it is, even one that is not JSON: the decoder judges it.
  const std::string value = bin::framed(7, bin::varint(42));
  decode::KafkaRecord in = record_at(5), out;
  in.topic = "json.a";
  in.value = value;
  REQUIRE_FALSE(records.to_json(in, out).has_value());
  CHECK(out.value->data() == value.data());
  CHECK(records.registry_fetches() == 0);

  options.topic_formats = {{"(", avro::RecordFormat::Json}};
  CHECK_THROWS_WITH(avro::AvroRecords(options, registry_at("http://127.0.0.1:1", avro::RegistryApi::Confluent)),
                    Catch::StartsWith("topic pattern '(': not a regex"));
}
