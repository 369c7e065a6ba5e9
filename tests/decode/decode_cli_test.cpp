#include "core/decode/decode_cli.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace cdc2doris::decode;

namespace {
struct Cli {
  int rc = -1;
  std::string out, err;
};
Cli run(std::vector<std::string> args, const std::string& input, DecodeCommandOptions base = {}) {
  std::istringstream in(input);
  std::ostringstream out, err;
  Cli c;
  c.rc = run_decode_command(args, in, out, err, std::move(base));
  c.out = out.str();
  c.err = err.str();
  return c;
}
const std::string kCreate =
    R"({"before":null,"after":{"id":1,"ts":"2024-03-10T07:00:00Z"},"source":{"connector":"mysql","db":"inv","table":"t","ts_ms":1},"op":"c"})";
}  // namespace

TEST_CASE("decode prints table, op and the exact rows", "[decode][cli]") {
  auto c = run({"--key", R"({"id":1})"}, kCreate + "\nnull\n");
  CHECK(c.rc == 0);
  // A tombstone deletes its key (after compaction it is all that is left of a delete).
  CHECK(c.out == "dbserver1.inventory.customers/0@0 inv.t op=c rows=1 key=id\n"
                 "  {\"id\":1,\"ts\":\"2024-03-10T07:00:00Z\",\"__DORIS_DELETE_SIGN__\":0}\n"
                 "dbserver1.inventory.customers/0@1 inv.t op=d rows=1 key=id\n"
                 "  {\"id\":1,\"__DORIS_DELETE_SIGN__\":1}  partial_columns=id,__DORIS_DELETE_SIGN__\n");
  CHECK(c.err.find("2 records, 2 changes, 2 rows, 0 errors") != std::string::npos);
}

TEST_CASE("decode --framed keeps key and value bytes exact", "[decode][cli]") {
  const std::string line = R"({"topic":"s.inv.t","partition":2,"offset":41,"key":{"id":1},"value":)" + kCreate + "}\n" +
                           R"({"topic":"s.inv.t","partition":2,"offset":42,"key":"{\"id\":1}","value":null})" + "\n";
  DecodeCommandOptions base;
  base.decode = [](Decoder& d, const KafkaRecord& rec, Change& ch, std::string& target) {
    auto e = d.decode(rec, ch);
    target = "ods." + ch.table;
    return e;
  };
  auto c = run({"--framed"}, line, base);
  CHECK(c.rc == 0);
  CHECK(c.out.find("s.inv.t/2@41 ods.t op=c rows=1 key=id\n") == 0);
  CHECK(c.out.find("s.inv.t/2@42 ods.t op=d rows=1") != std::string::npos);

  FramedRecord f;
  REQUIRE_FALSE(parse_framed_line(R"({"topic":"x","value":{"a":1.0E0, "b":[1,{"c":"}"}]},"key":null})", f));
  CHECK(f.value == std::string(R"({"a":1.0E0, "b":[1,{"c":"}"}]})"));
  CHECK_FALSE(f.key);
  CHECK(parse_framed_line(R"({"value":1})", f).value().find("topic") != std::string::npos);
  CHECK(parse_framed_line(R"({"topic":"x","value":{"a":1})", f).has_value());
}

TEST_CASE("decode applies the error policy", "[decode][cli]") {
  const std::string input = "{\"op\":\"c\"\n" + kCreate + "\n";
  auto fail = run({}, input);
  CHECK(fail.rc == 1);
  CHECK(fail.out.find("ERROR dbserver1.inventory.customers/0@0: invalid_json") != std::string::npos);
  CHECK(fail.out.find("op=c") == std::string::npos);  // stopped at the bad record
  auto skip = run({"--on-error", "skip"}, input);
  CHECK(skip.rc == 0);
  CHECK(skip.out.find("policy skip") != std::string::npos);
  CHECK(skip.out.find("op=c rows=1") != std::string::npos);
  auto dlq = run({"--on-error", "dead_letter", "--dead-letter-topic", "dlq"}, input);
  CHECK(dlq.rc == 0);
  CHECK(dlq.out.find("copied to dlq") != std::string::npos);
}

TEST_CASE("decode options and usage errors", "[decode][cli]") {
  auto tz = run({"--time-zone", "America/New_York", "--extra-op", "_op", "--binary-mode", "hex"},
                R"({"schema":{"type":"struct","name":"s.Envelope","fields":[{"type":"struct","optional":true,"field":"after","fields":[{"type":"string","name":"io.debezium.time.ZonedTimestamp","field":"ts"}]},{"type":"string","field":"op"}]},"payload":{"after":{"ts":"2024-03-10T07:00:00Z"},"op":"r"}})"
                "\n");
  CHECK(tz.rc == 0);
  CHECK(tz.out.find(R"({"ts":"2024-03-10 03:00:00","_op":"r","__DORIS_DELETE_SIGN__":0})") != std::string::npos);
  CHECK(run({"--envelope", "sideways"}, "").rc == 2);
  CHECK(run({"--bogus"}, "").rc == 2);
  CHECK(run({"--time-zone", "Nowhere/Land"}, "").rc == 2);
  CHECK(run({"--config", "x.yaml"}, "").rc == 2);  // no loader wired
  DecodeCommandOptions base;
  base.load_config = [](const std::string& path, DecodeCommandOptions& o) -> std::optional<std::string> {
    if (path != "ok.yaml") return "cannot read " + path;
    o.decoder.envelope = Envelope::Flattened;
    return std::nullopt;
  };
  auto flat = run({"--config", "ok.yaml"}, R"({"id":3,"__deleted":"true"})" "\n", base);
  CHECK(flat.rc == 0);
  CHECK(flat.out.find(R"({"id":3,"__DORIS_DELETE_SIGN__":1})") != std::string::npos);
  CHECK(run({"--config", "bad.yaml"}, "", base).rc == 2);
  CHECK(run({"--help"}, "").out.find("usage: cdc2doris decode") == 0);
}

TEST_CASE("A truncated value with a valid key is reported at the value, with the position", "[decode][cli][issue19]") {
  // The repro of issue 19 item 1: printf '{"before":null,"after":{"id":\n' | cdc2doris decode --topic x.db.t --key '{"id":-1}'
  auto c = run({"--topic", "x.db.t", "--key", R"({"id":-1})"}, "{\"before\":null,\"after\":{\"id\":\n");
  CHECK(c.rc == 1);
  CHECK(c.out.find("invalid_json at value: expected a JSON object ending in '}', got truncated or trailing content: it ends "
                   "at byte 28 of 29 with ':'") != std::string::npos);
  CHECK(c.out.find("at key") == std::string::npos);
}
