#pragma once
// An Avro writer schema and its values as Kafka Connect's JsonConverter
// writes them ({"schema": <Connect schema>, "payload": <value>}), so the
// JSON decoder and every value rule of docs/decoding.md apply to Avro records
// unchanged.
//
// The Connect schema follows the conventions of the AvroData classes behind
// Confluent's and Apicurio's Avro converters (their toConnectSchema): the
// Connect name, version, parameters and doc travel as the Avro attributes
// `connect.name`, `connect.version`, `connect.parameters`, `connect.doc`;
// `connect.type` int8/int16 narrows an int; the Avro logical types decimal,
// date, time-millis and timestamp-millis are Connect's Decimal, Date, Time and
// Timestamp; a union of null and one type is that type, optional. Values:
// bytes and fixed as base64 (as JsonConverter writes bytes), enums as their
// symbol, maps as objects.
//
// Apache Avro C reads the binary (avro_value_read with the writer schema);
// Avro C drops unknown attributes, so the Connect side is read from the
// schema's JSON by this file, which walks both trees together.
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cdc2doris::avro {

// Thrown for a schema this bridge cannot express in Connect terms or Avro C
// cannot compile, and for a body that does not decode as its schema says.
struct AvroError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ConnectBridge {
 public:
  // Throws AvroError.
  explicit ConnectBridge(std::string_view avro_schema_json);
  ~ConnectBridge();
  ConnectBridge(const ConnectBridge&) = delete;
  ConnectBridge& operator=(const ConnectBridge&) = delete;

  // The Connect schema as JsonConverter writes it: the same text for every
  // record of this schema, so the decoder recognises it byte for byte.
  const std::string& connect_schema() const;
  // Appends {"schema":...,"payload":...} for one Avro binary body (the whole
  // body must be one value). Throws AvroError naming the field.
  void to_json(std::string_view avro_body, std::string& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cdc2doris::avro
