#pragma once
// The bench's Avro records (issue 34 item 4): a JsonConverter record
// ({"schema": <Connect schema>, "payload": ...}) re-encoded the way
// Debezium's Avro converter writes it, so the Avro path decodes the same
// records as the JSON schema-envelope path. The Avro schema follows AvroData's
// fromConnectSchema conventions (connect.name / connect.version /
// connect.parameters attributes, connect.type int16, Decimal as bytes with
// logicalType decimal, optional as a union with null, a repeated record name
// as a reference); the body is Avro binary in Confluent's framing.
// Bench-only: it covers the Connect types the shared workload generator
// writes and refuses any other with an exception.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace cdc2doris::bench {

class ConnectToAvro {
 public:
  // One Confluent-framed record for a JsonConverter record; the schema is
  // registered (given the next id, from 1) the first time its Connect schema
  // is seen, under `subject` (a registry's subject, e.g. "{topic}-value").
  // Throws std::runtime_error for a record it cannot express.
  std::string encode(std::string_view connect_json, const std::string& subject = "");
  // id -> the Avro schema's JSON, what a registry would answer for the id.
  const std::map<int32_t, std::string>& schemas() const { return schemas_; }
  // id -> the subject it was first seen under.
  const std::map<int32_t, std::string>& subjects() const { return subjects_; }

 private:
  std::map<std::string, int32_t> ids_;  // Connect schema text -> id
  std::map<int32_t, std::string> schemas_, subjects_;
};

}  // namespace cdc2doris::bench
