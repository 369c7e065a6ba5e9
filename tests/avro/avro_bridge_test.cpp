// core/avro without a registry: Confluent's framing, the Avro -> Connect JSON
// bridge for each type the converters write, and that the decoder reads what
// the bridge writes as it reads JsonConverter's records.
#include <catch2/catch.hpp>

#include <simdjson.h>

#include <boost/json.hpp>
#include <string>

#include "core/avro/avro_connect.hpp"
#include "core/avro/avro_records.hpp"
#include "core/decode/decoder.hpp"
#include "tools/fixtures/avro_encode.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test;
namespace bin = cdc2doris::test::avro_bin;
namespace json = boost::json;

namespace {

// Every type the bridge maps, as Apicurio's and Confluent's AvroData write them.
const char* kValueSchema = R"({"type":"record","name":"Value","namespace":"srv.public.t","fields":[
 {"name":"id","type":"int"},
 {"name":"big","type":"long"},
 {"name":"name","type":["null","string"],"default":null},
 {"name":"flag","type":"boolean"},
 {"name":"ratio","type":"double"},
 {"name":"r32","type":"float"},
 {"name":"small","type":{"type":"int","connect.type":"int16"}},
 {"name":"amount","type":{"type":"bytes","scale":2,"precision":10,"connect.version":1,
   "connect.parameters":{"scale":"2","connect.decimal.precision":"10"},
   "connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}},
 {"name":"d","type":{"type":"int","connect.version":1,"connect.name":"io.debezium.time.Date"}},
 {"name":"ts","type":["null",{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTimestamp"}],
   "default":null},
 {"name":"tsm","type":{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp",
   "logicalType":"timestamp-millis"}},
 {"name":"status","type":[{"type":"string","connect.version":1,"connect.parameters":{"allowed":"a,b"},
   "connect.default":"a","connect.name":"io.debezium.data.Enum"},"null"],"default":"a"},
 {"name":"nested","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}},
 {"name":"again","type":["null","Inner"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"props","type":{"type":"map","values":"long"}},
 {"name":"color","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
 {"name":"raw","type":"bytes"}
]})";

std::string value_body() {
  using namespace bin;
  return varint(7) + varint(-5000000000LL) + branch(1, string("Zoë \"q\"")) + boolean(true) + float64(0.1) +
         float32(1.5f) + varint(-300) + bytes(std::string("\x04\xd2", 2)) /* 1234 -> 12.34 */ + varint(19724) +
         branch(1, varint(1704164645123456LL)) + varint(1704164645123LL) + branch(0, string("b")) + varint(3) +
         branch(1, varint(4)) + varint(2) + string("x") + string("y") + varint(0) /* array end */ + varint(1) +
         string("k") + varint(-1) + varint(0) /* map end */ + varint(1) /* GREEN */ + bytes(std::string("\0\xff", 2));
}

const json::object& field(const json::object& schema, const std::string& name) {
  for (const auto& f : schema.at("fields").as_array())
    if (f.as_object().at("field").as_string() == name) return f.as_object();
  FAIL("no field " << name << " in " << json::serialize(schema));
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("avro framing: magic byte 0 and a 4-byte big-endian schema id before the Avro body", "[avro]") {
  std::string why;
  const std::string record = bin::framed(0x01020304, "body");
  const auto f = avro::unframe(record, 4, why);
  REQUIRE(f.has_value());
  CHECK(f->schema_id == 0x01020304);
  CHECK(f->body == "body");
  const std::string header_only = bin::framed(9, "");
  const auto empty_body = avro::unframe(header_only, 4, why);
  REQUIRE(empty_body.has_value());
  CHECK(empty_body->body.empty());
  CHECK_FALSE(avro::unframe(std::string("\0\0\0", 3), 4, why));
  CHECK(why == "3 bytes");
  CHECK_FALSE(avro::unframe(std::string("\x01\0\0\0\x01x", 6), 4, why));
  CHECK(why == "magic byte 1");
  CHECK_FALSE(avro::unframe(R"({"schema":{}})", 4, why));
  CHECK(why == "magic byte 123 ('{': a JSON record?)");
}

TEST_CASE("avro records: a record not in Confluent's framing is a bad record naming where and what was expected",
          "[avro]") {
  // Nothing listens there: framing is judged before any registry request.
  avro::AvroRecords records(avro::RegistryOptions{"http://127.0.0.1:1", "", "", std::chrono::milliseconds(500)});
  decode::KafkaRecord in, out;
  in.topic = "srv.public.t";
  in.partition = 2;
  in.offset = 41;
  const std::string json_value = R"({"schema":null,"payload":{}})";
  in.value = json_value;
  auto f = records.to_json(in, out);
  REQUIRE(f.has_value());
  auto* bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK(bad->code == decode::DecodeErrorCode::InvalidAvro);
  CHECK(bad->message() ==
        "srv.public.t/2@41: invalid_avro at value: expected Confluent's wire format: magic byte 0, a 4-byte schema "
        "id, Avro binary, got magic byte 123 ('{': a JSON record?)");
  const std::string short_key("\0\0", 2);
  in.value.reset();
  in.key = short_key;
  f = records.to_json(in, out);
  REQUIRE(f.has_value());
  bad = std::get_if<decode::DecodeError>(&*f);
  REQUIRE(bad != nullptr);
  CHECK(bad->path == "key");
  CHECK(bad->detail == "2 bytes");
  CHECK(records.registry_fetches() == 0);
}

TEST_CASE("avro records: an unreachable registry is a retry naming the id and the record, not a bad record",
          "[avro]") {
  const int port = free_port();  // nothing listens
  avro::AvroRecords records(
      avro::RegistryOptions{"http://127.0.0.1:" + std::to_string(port), "", "", std::chrono::milliseconds(500)});
  decode::KafkaRecord in, out;
  in.topic = "srv.public.t";
  in.partition = 0;
  in.offset = 9;
  const std::string value = bin::framed(77, bin::varint(1));
  in.value = value;
  const auto f = records.to_json(in, out);
  REQUIRE(f.has_value());
  const auto* e = std::get_if<Error>(&*f);
  REQUIRE(e != nullptr);
  CHECK(e->disposition() == Disposition::Retry);
  CHECK(e->message().find("schema id 77 from the registry at http://127.0.0.1:" + std::to_string(port)) !=
        std::string::npos);
  CHECK(e->context().topic == "srv.public.t");
  CHECK(e->context().offset == 9);
}

TEST_CASE("avro bridge: Connect schema of every type as AvroData maps it", "[avro]") {
  avro::ConnectBridge bridge(kValueSchema);
  const json::object s = json::parse(bridge.connect_schema()).as_object();
  CHECK(s.at("type") == "struct");
  CHECK(s.at("name") == "srv.public.t.Value");
  CHECK(s.at("optional") == false);
  CHECK(field(s, "id") == json::parse(R"({"type":"int32","optional":false,"field":"id"})"));
  CHECK(field(s, "big").at("type") == "int64");
  CHECK(field(s, "name") == json::parse(R"({"type":"string","optional":true,"field":"name"})"));
  CHECK(field(s, "flag").at("type") == "boolean");
  CHECK(field(s, "ratio").at("type") == "double");
  CHECK(field(s, "r32").at("type") == "float");
  CHECK(field(s, "small").at("type") == "int16");
  CHECK(field(s, "amount") == json::parse(R"({"type":"bytes","optional":false,
        "name":"org.apache.kafka.connect.data.Decimal","version":1,
        "parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"})"));
  CHECK(field(s, "d") ==
        json::parse(R"({"type":"int32","optional":false,"name":"io.debezium.time.Date","version":1,"field":"d"})"));
  CHECK(field(s, "ts") == json::parse(R"({"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp",
        "version":1,"field":"ts"})"));
  CHECK(field(s, "tsm").at("name") == "org.apache.kafka.connect.data.Timestamp");
  // A union with null second is optional too; connect.default is the default.
  CHECK(field(s, "status") == json::parse(R"({"type":"string","optional":true,"name":"io.debezium.data.Enum",
        "version":1,"parameters":{"allowed":"a,b"},"default":"a","field":"status"})"));
  CHECK(field(s, "nested") == json::parse(R"({"type":"struct","fields":[{"type":"int32","optional":false,
        "field":"x"}],"optional":false,"name":"srv.public.t.Inner","field":"nested"})"));
  // A name used again, relative to the enclosing namespace.
  CHECK(field(s, "again").at("name") == "srv.public.t.Inner");
  CHECK(field(s, "again").at("optional") == true);
  CHECK(field(s, "tags") == json::parse(R"({"type":"array","items":{"type":"string","optional":false},
        "optional":false,"field":"tags"})"));
  CHECK(field(s, "props").at("type") == "map");
  CHECK(field(s, "props").at("values").at("type") == "int64");
  CHECK(field(s, "color").at("type") == "string");
  CHECK(field(s, "color").at("parameters").at("io.confluent.connect.avro.Enum") == "srv.public.t.Color");
  CHECK(field(s, "raw") == json::parse(R"({"type":"bytes","optional":false,"field":"raw"})"));
}

TEST_CASE("avro bridge: values as JsonConverter writes them", "[avro]") {
  avro::ConnectBridge bridge(kValueSchema);
  std::string out;
  bridge.to_json(value_body(), out);
  const json::object doc = json::parse(out).as_object();
  CHECK(json::serialize(doc.at("schema")) == json::serialize(json::parse(bridge.connect_schema())));
  const std::string payload = out.substr(out.find(",\"payload\":") + 11);
  CHECK(payload ==
        R"({"id":7,"big":-5000000000,"name":"Zoë \"q\"","flag":true,"ratio":0.1,"r32":1.5,"small":-300,)"
        R"("amount":"BNI=","d":19724,"ts":1704164645123456,"tsm":1704164645123,"status":"b","nested":{"x":3},)"
        R"("again":{"x":4},"tags":["x","y"],"props":{"k":-1},"color":"GREEN","raw":"AP8="}})");
  // Null branches and empty collections.
  using namespace bin;
  const std::string nulls = varint(1) + varint(2) + branch(0) + boolean(false) + float64(-2.5) + float32(0.25f) +
                            varint(0) + bytes("") + varint(-1) + branch(0) + varint(0) + branch(1) + varint(0) +
                            branch(0) + varint(0) + varint(0) + varint(0) + bytes("");
  out.clear();
  bridge.to_json(nulls, out);
  const json::object p = json::parse(out).as_object().at("payload").as_object();
  CHECK(p.at("name").is_null());
  CHECK(p.at("ts").is_null());
  CHECK(p.at("status").is_null());
  CHECK(p.at("again").is_null());
  CHECK(p.at("amount") == "");
  CHECK(p.at("tags").as_array().empty());
  CHECK(p.at("props").as_object().empty());
  CHECK(p.at("color") == "RED");
  // The text of the float is its shortest form, not the double's widening.
  CHECK(out.find("\"r32\":0.25,") != std::string::npos);
}

TEST_CASE("avro bridge: a body its schema does not describe is an error naming why", "[avro]") {
  avro::ConnectBridge bridge(kValueSchema);
  std::string out;
  const std::string body = value_body();
  CHECK_THROWS_WITH(bridge.to_json(body.substr(0, body.size() - 3), out),
                    Catch::Contains("does not decode as its schema says"));
  CHECK_THROWS_WITH(bridge.to_json(body + "x", out), Catch::Contains("bytes left over"));
  // A length Avro C would allocate before finding the bytes missing: refused first.
  avro::ConnectBridge one_string(R"({"type":"record","name":"R","fields":[{"name":"s","type":"string"}]})");
  CHECK_THROWS_WITH(one_string.to_json(bin::varint(1LL << 40) + "abc", out),
                    Catch::Contains("a length of 1099511627776 bytes where 3 remain"));
  CHECK_THROWS_WITH(one_string.to_json(bin::varint(-8), out), Catch::Contains("a length of -8 bytes"));
  avro::ConnectBridge longs(R"({"type":"record","name":"R","fields":[{"name":"a","type":{"type":"array",
                             "items":"long"}}]})");
  CHECK_THROWS_WITH(longs.to_json(bin::varint(1LL << 50) + bin::varint(1), out),
                    Catch::Contains("a block of 1125899906842624 elements where 1 bytes remain"));
  CHECK_THROWS_WITH(avro::ConnectBridge(R"({"type":"record","name":"R","fields":[{"name":"u","type":["int","string"]}]})"),
                    Catch::Contains("schema.u: a union of 2 types is not supported"));
  CHECK_THROWS_WITH(avro::ConnectBridge(R"({"type":"record","name":"R","fields":[{"name":"u","type":"Nope"}]})"),
                    Catch::Contains("unknown type name \"Nope\""));
  CHECK_THROWS_WITH(avro::ConnectBridge("{not json"), Catch::Contains("not JSON"));
}

TEST_CASE("avro bridge: the decoder turns a Debezium envelope in Avro into the rows of its JSON twin", "[avro]") {
  const std::string envelope = R"({"type":"record","name":"Envelope","namespace":"srv.public.t",
   "connect.name":"srv.public.t.Envelope","fields":[
   {"name":"before","type":["null",{"type":"record","name":"Value","connect.name":"srv.public.t.Value","fields":[
     {"name":"id","type":"int"},
     {"name":"amount","type":["null",{"type":"bytes","scale":2,"precision":10,"connect.version":1,
       "connect.parameters":{"scale":"2","connect.decimal.precision":"10"},
       "connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null},
     {"name":"d","type":["null",{"type":"int","connect.version":1,"connect.name":"io.debezium.time.Date"}],
       "default":null},
     {"name":"ts","type":["null",{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTimestamp"}],
       "default":null},
     {"name":"note","type":["null","string"],"default":null},
     {"name":"vsd","type":["null",{"type":"record","name":"VariableScaleDecimal","namespace":"io.debezium.data",
       "fields":[{"name":"scale","type":"int"},{"name":"value","type":"bytes"}],"connect.doc":"Variable scaled decimal",
       "connect.version":1,"connect.name":"io.debezium.data.VariableScaleDecimal"}],"default":null},
     {"name":"tz","type":["null",{"type":"string","connect.version":1,"connect.name":"io.debezium.time.ZonedTimestamp"}],
       "default":null},
     {"name":"doc","type":["null",{"type":"string","connect.version":1,"connect.name":"io.debezium.data.Json"}],
       "default":null}]}],"default":null},
   {"name":"after","type":["null","Value"],"default":null},
   {"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql",
     "fields":[{"name":"connector","type":"string"},{"name":"name","type":"string"},{"name":"ts_ms","type":"long"},
     {"name":"db","type":"string"},{"name":"schema","type":"string"},{"name":"table","type":"string"}]}},
   {"name":"op","type":"string"},
   {"name":"ts_ms","type":["null","long"],"default":null}]})";
  using namespace bin;
  const std::string row = varint(5) + branch(1, bytes(std::string("\xff\x85", 2))) /* -123 -> -1.23 */ +
                          branch(1, varint(19724)) + branch(1, varint(1704164645123456LL)) +
                          branch(1, string("hi")) + branch(1, varint(3) + bytes(std::string("\x30\x39", 2))) +
                          branch(1, string("2024-01-02T03:04:05.5+02:00")) + branch(1, string(R"({"a": [1, 2]})"));
  const std::string body = branch(0) + branch(1, row) + string("postgresql") + string("srv") +
                           varint(1704164645000LL) + string("src") + string("public") + string("t") + string("c") +
                           branch(1, varint(1704164645001LL));
  avro::ConnectBridge bridge(envelope);
  std::string value;
  bridge.to_json(body, value);

  decode::Decoder decoder(decode::DecoderOptions{});
  decode::KafkaRecord rec;
  rec.topic = "srv.public.t";
  rec.value = value;
  decode::Change change;
  const auto err = decoder.decode(rec, change);
  INFO(value);
  REQUIRE_FALSE(err.has_value());
  CHECK(change.kind == decode::Kind::Change);
  CHECK(change.op == 'c');
  CHECK(change.db == "src");
  CHECK(change.table == "t");
  REQUIRE(change.rows.size() == 1);
  CHECK(json::parse(change.rows[0].json) ==
        json::parse(R"({"id":5,"amount":"-1.23","d":"2024-01-02","ts":"2024-01-02 03:04:05.123456","note":"hi",
                        "vsd":"12.345","tz":"2024-01-02 01:04:05.500000","doc":"{\"a\": [1, 2]}",
                        "__DORIS_DELETE_SIGN__":0})"));
  // The same schema text every time: the decoder recognises it without parsing.
  std::string again;
  bridge.to_json(body, again);
  rec.value = again;
  REQUIRE_FALSE(decoder.decode(rec, change).has_value());
  CHECK(decoder.stats().schemas_recognised == 1);
}

TEST_CASE("avro bridge: every truncation and byte flip of a body decodes or is an AvroError, never a crash",
          "[avro]") {
  avro::ConnectBridge bridge(kValueSchema);
  const std::string body = value_body();
  std::string out;
  size_t refused = 0;
  auto attempt = [&](const std::string& b) {
    out.clear();
    try {
      bridge.to_json(b, out);
      // What decodes is JSON, or a flipped byte made a string invalid UTF-8,
      // which the decoder refuses (invalid_utf8) as it does in JSON records.
      boost::system::error_code ec;
      json::parse(out, ec);
      INFO(ec.message() << " in " << out);
      if (ec) CHECK_FALSE(simdjson::validate_utf8(out.data(), out.size()));
    } catch (const avro::AvroError&) {
      ++refused;
    }
  };
  for (size_t n = 0; n < body.size(); ++n) attempt(body.substr(0, n));
  CHECK(refused == body.size());  // every proper prefix is too short
  for (size_t i = 0; i < body.size(); ++i)
    for (const unsigned char x : {0x01, 0x80, 0xff}) {
      std::string b = body;
      b[i] = static_cast<char>(static_cast<unsigned char>(b[i]) ^ x);
      attempt(b);
    }
}
