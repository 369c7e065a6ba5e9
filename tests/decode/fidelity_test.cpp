// Values land in Doris exactly as the source holds them (issue 12): zone
// rules past the last stored transition, JSON scalars, deletes under
// REPLICA IDENTITY DEFAULT, and errors that name the right part of a record.
#include <catch2/catch.hpp>

#include <string>

#include "core/decode/decoder.hpp"

using namespace cdc2doris::decode;

namespace {

struct Run {
  Decoder dec;
  Change change;
  explicit Run(DecoderOptions o = {}) : dec(std::move(o)) {}
  std::optional<DecodeError> operator()(std::optional<std::string_view> value, std::optional<std::string_view> key = std::nullopt,
                                        std::string_view topic = "pg.public.t", int64_t offset = 7) {
    KafkaRecord r;
    r.topic = topic;
    r.partition = 0;
    r.offset = offset;
    r.key = key;
    r.value = value;
    return dec.decode(r, change);
  }
  std::string row(size_t i = 0) const { return i < change.rows.size() ? change.rows[i].json : "<none>"; }
};

const std::string kPgSource =
    R"("source":{"version":"3.6.1.Final","connector":"postgresql","name":"pg","ts_ms":1700000000000,"snapshot":"false","db":"shop","schema":"public","table":"t","txId":771,"lsn":24023128})";

// A schema envelope of a row with one column `v` of the given Connect type.
std::string one_column(std::string_view column_schema, std::string_view op, std::string_view before, std::string_view after) {
  const std::string row = R"({"type":"struct","optional":true,"name":"pg.public.t.Value","fields":[{"type":"int32","optional":false,"field":"id"},)" +
                          std::string(column_schema) + "]";
  const std::string schema = R"({"type":"struct","fields":[)" + row + R"(,"field":"before"},)" + row +
                             R"(,"field":"after"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},{"type":"string","optional":false,"field":"op"}],"optional":false,"name":"pg.public.t.Envelope"})";
  return R"({"schema":)" + schema + R"(,"payload":{"before":)" + std::string(before) + R"(,"after":)" + std::string(after) + "," +
         kPgSource + R"(,"op":")" + std::string(op) + R"("}})";
}

std::string zoned_row(const char* zone, std::string_view instant) {
  DecoderOptions o;
  o.time_zone = zone;
  Run run(o);
  const auto err = run(one_column(R"({"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","field":"v"})", "c", "null",
                                  R"({"id":1,"v":")" + std::string(instant) + R"("})"));
  if (err) return err->message();
  return run.row();
}

}  // namespace

TEST_CASE("Zoned timestamps after the tz file's last transition follow its POSIX rule", "[decode][zoned][issue12]") {
  // tzif files list transitions up to 2037 at most ("slim" files far fewer);
  // later instants are governed by the footer's rule (CET-1CEST,M3.5.0,M10.5.0/3).
  CHECK(zoned_row("Europe/Berlin", "2040-07-01T12:00:00Z") == R"({"id":1,"v":"2040-07-01 14:00:00","__DORIS_DELETE_SIGN__":0})");
  CHECK(zoned_row("Europe/Berlin", "2040-01-15T12:00:00Z") == R"({"id":1,"v":"2040-01-15 13:00:00","__DORIS_DELETE_SIGN__":0})");
  CHECK(zoned_row("Europe/Berlin", "2100-07-01T00:30:00.5Z") == R"({"id":1,"v":"2100-07-01 02:30:00.500000","__DORIS_DELETE_SIGN__":0})");
  // A zone whose rule changed: Greenland moved to -02 with DST to -01 from
  // 2024 (tzdata 2023c); summer 2040 is -01.
  CHECK(zoned_row("America/Nuuk", "2040-07-01T12:00:00Z") == R"({"id":1,"v":"2040-07-01 11:00:00","__DORIS_DELETE_SIGN__":0})");
  CHECK(zoned_row("America/Nuuk", "2040-01-15T12:00:00Z") == R"({"id":1,"v":"2040-01-15 10:00:00","__DORIS_DELETE_SIGN__":0})");
  // Unchanged where the stored transitions apply.
  CHECK(zoned_row("Europe/Berlin", "2024-10-27T00:30:00Z") == R"({"id":1,"v":"2024-10-27 02:30:00","__DORIS_DELETE_SIGN__":0})");
  CHECK(zoned_row("Europe/Berlin", "1969-07-01T12:00:00Z") == R"({"id":1,"v":"1969-07-01 13:00:00","__DORIS_DELETE_SIGN__":0})");
}

TEST_CASE("Invalid time zone names are rejected when the decoder is built", "[decode][zoned][issue12]") {
  for (const char* bad : {"Mars/Olympus", "Europe/Berlinx", "../etc/passwd", "Europe/"}) {
    DecoderOptions o;
    o.time_zone = bad;
    CHECK_THROWS_AS(Decoder(o), std::invalid_argument);
  }
  for (const char* good : {"UTC", "Etc/UTC", "Asia/Shanghai", "America/Sao_Paulo"}) {
    DecoderOptions o;
    o.time_zone = good;
    CHECK_NOTHROW(Decoder(o));
  }
}
