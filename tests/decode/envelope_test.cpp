// The {schema, payload} wrapper read by recognising a topic's repeated
// schema text (Decoder::Impl::known_wrapper) must decide exactly as the full
// parse does: every case is decoded by a decoder that has seen the topic's
// schema (warm) and by a fresh one (cold), and both must agree.
#include "core/decode/decoder.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace cdc2doris::decode;

namespace {

const std::string kTopic = "dbserver1.inventory.orders";

const std::string kValueSchema =
    R"({"type":"struct","fields":[)"
    R"({"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"amount"},{"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1,"field":"at"}],"optional":true,"name":"dbserver1.inventory.orders.Value","field":"before"},)"
    R"({"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"amount"},{"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1,"field":"at"}],"optional":true,"name":"dbserver1.inventory.orders.Value","field":"after"},)"
    R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"table"},{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"},)"
    R"({"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"dbserver1.inventory.orders.Envelope"})";
const std::string kKeySchema =
    R"({"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"dbserver1.inventory.orders.Key"})";

std::string wrap(const std::string& schema, const std::string& payload) {
  return R"({"schema":)" + schema + R"(,"payload":)" + payload + "}";
}

std::string payload(std::string_view op, std::string_view before, std::string_view after) {
  return std::string(R"({"before":)") + std::string(before) + R"(,"after":)" + std::string(after) +
         R"(,"source":{"connector":"mysql","db":"inventory","table":"orders","ts_ms":1700000000000},"op":")" +
         std::string(op) + R"(","ts_ms":1700000000123})";
}

std::string key(int id) { return wrap(kKeySchema, R"({"id":)" + std::to_string(id) + "}"); }

struct Outcome {
  std::string text;  // rows, op, key columns, or the error's message
  uint64_t recognised = 0;
};

Outcome decode(Decoder& dec, const std::optional<std::string>& value, const std::optional<std::string>& k) {
  KafkaRecord r;
  r.topic = kTopic;
  r.partition = 1;
  r.offset = 42;
  if (value) r.value = *value;
  if (k) r.key = *k;
  Change c;
  const uint64_t before = dec.stats().schemas_recognised;
  Outcome o;
  if (auto err = dec.decode(r, c)) {
    o.text = "error " + std::string(to_string(err->code)) + ": " + err->message();
  } else {
    o.text = "kind " + std::to_string(static_cast<int>(c.kind)) + " op " + std::string(1, c.op ? c.op : '-') + " keys";
    for (const auto& kc : c.key_columns) o.text += " " + kc;
    for (const auto& row : c.rows) o.text += "\n" + row.json;
  }
  o.recognised = dec.stats().schemas_recognised - before;
  return o;
}

// Makes `dec` know the topic's key and value schema: it decodes one ordinary record.
void warm(Decoder& dec) {
  Change c;
  KafkaRecord r;
  r.topic = kTopic;
  const std::string v = wrap(kValueSchema, payload("c", "null", R"({"id":1,"amount":"AQ==","at":0})"));
  const std::string k = key(1);
  r.value = v;
  r.key = k;
  REQUIRE_FALSE(dec.decode(r, c));
}

}  // namespace

TEST_CASE("A repeated schema text is recognised without parsing it, with the full parse's result", "[decode][envelope]") {
  const std::string p_update = payload("u", R"({"id":5,"amount":"AQ==","at":0})", R"({"id":6,"amount":"ZA==","at":1712917800000})");
  struct Case {
    const char* what;
    std::optional<std::string> value;
    std::optional<std::string> key;
    int recognised;  // schemas the warm decoder recognised (key and value); -1: not checked, the record
                     // failed and was decoded again
  };
  const std::vector<Case> cases = {
      {"an update changing the key", wrap(kValueSchema, p_update), key(6), 2},
      {"a delete", wrap(kValueSchema, payload("d", R"({"id":5,"amount":null,"at":null})", "null")), key(5), 2},
      {"a tombstone in the wrapper", wrap(kValueSchema, "null"), key(5), 2},
      {"a Kafka tombstone", std::nullopt, key(5), 1},
      {"whitespace before the payload", R"({"schema":)" + kValueSchema + R"(,"payload": )" + p_update + " }", key(6), 2},
      {"a key of another schema", wrap(kValueSchema, p_update),
       wrap(R"({"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false})", R"({"id":6})"), 1},
      {"another schema text (spaces)", R"({"schema": )" + kValueSchema + R"(,"payload":)" + p_update + "}", key(6), 1},
      {"a key after the payload", R"({"schema":)" + kValueSchema + R"(,"payload":)" + p_update + R"(,"extra":{"a":1}})",
       key(6), -1},
      {"the payload twice (the last one counts)",
       R"({"schema":)" + kValueSchema + R"(,"payload":)" + payload("c", "null", R"({"id":1,"amount":null,"at":null})") +
           R"(,"payload":)" + p_update + "}",
       key(6), -1},
      {"a value the schema refuses", wrap(kValueSchema, payload("c", "null", R"({"id":"x","amount":null,"at":null})")),
       key(6), -1},
      {"invalid JSON in the payload", wrap(kValueSchema, payload("c", "null", R"({"id":01,"amount":null,"at":null})")),
       key(6), -1},
      {"content after the record", wrap(kValueSchema, p_update) + R"( {"a":1})", key(6), -1},
      {"content after the key", wrap(kValueSchema, p_update), key(6) + " []", 1},
      {"a truncated record", wrap(kValueSchema, p_update).substr(0, 3000), key(6), -1},
      {"no payload", R"({"schema":)" + kValueSchema + "}", key(6), 1},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    Decoder cold(DecoderOptions{});
    const Outcome expected = decode(cold, c.value, c.key);
    CHECK(expected.recognised == 0);
    Decoder dec(DecoderOptions{});
    warm(dec);
    const Outcome got = decode(dec, c.value, c.key);
    CHECK(got.text == expected.text);
    if (c.recognised >= 0) CHECK(got.recognised == static_cast<uint64_t>(c.recognised));
  }
}

TEST_CASE("Content after a record's JSON object is an error, not ignored", "[decode][envelope][errors]") {
  Decoder dec(DecoderOptions{});
  const std::string schemaless = payload("c", "null", R"({"id":1,"amount":"1.00","at":0})");
  Outcome o = decode(dec, schemaless + R"( {"id":2})", std::nullopt);
  CHECK(o.text == "error invalid_json: dbserver1.inventory.orders/1@42: invalid_json at value: expected nothing after "
                   "the JSON object's closing '}', got more content at byte " +
                       std::to_string(schemaless.size() + 1));
  o = decode(dec, wrap(kValueSchema, payload("c", "null", R"({"id":1,"amount":null,"at":null})")) + "{}", key(1));
  CHECK(o.text.find("invalid_json") != std::string::npos);
  CHECK(o.text.find("more content at byte") != std::string::npos);
  // A delete without a before-image needs its key: a key with content after it fails the record.
  o = decode(dec, payload("d", "null", "null"), R"({"id":1} {"id":2})");
  CHECK(o.text.find("more content at byte 9") != std::string::npos);
}
