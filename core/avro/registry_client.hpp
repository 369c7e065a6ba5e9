#pragma once
// Client of a schema registry's Confluent-compatible API: the writer schema of
// an Avro record by its id (GET {url}/schemas/ids/{id}). Schemas under an id
// never change, so each answer is kept (a bounded number of ids) and a
// registry outage costs nothing while every id needed is cached.
//
// Synchronous, one connection per fetch: a fetch happens once per new schema
// id, not per record. Not thread-safe (one per pipeline, like the Decoder).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>

namespace cdc2doris::avro {

struct RegistryOptions {
  // Base of the Confluent API, e.g. http://registry:8081 (Confluent) or
  // http://registry:8080/apis/ccompat/v7 (Apicurio). http only for now.
  std::string url;
  std::string user;      // basic auth when set
  std::string password;  // secret: never in messages
  std::chrono::milliseconds timeout{10000};  // connect, send and read, each
  size_t max_cached_ids = 1000;
  bool operator==(const RegistryOptions&) const = default;
};

struct RegistryFailure {
  enum class Kind {
    Unreachable,  // no answer, a timeout, a 5xx or an answer that is not a schema: try again later
    UnknownId,    // 404: the registry has no schema under this id
    Refused,      // 401/403: the credentials are wrong (configuration)
    NotAvro,      // the id names a JSON Schema or Protobuf schema
  };
  Kind kind = Kind::Unreachable;
  std::string message;  // names the id and the registry (without credentials)
};

class RegistryClient {
 public:
  // Throws std::invalid_argument for a URL it cannot use.
  explicit RegistryClient(RegistryOptions options);

  using Schema = std::shared_ptr<const std::string>;  // the Avro schema's JSON text
  std::variant<Schema, RegistryFailure> schema(int32_t id);

  // For `check --connect`: GET {url}/subjects with the configured
  // credentials; the number of subjects, or why the registry cannot serve.
  std::variant<size_t, RegistryFailure> probe();

  size_t fetches() const { return fetches_; }  // schema requests made (cache misses)
  const RegistryOptions& options() const { return options_; }

 private:
  struct Answer {
    unsigned status = 0;
    std::string body;
  };
  // GET base + path; transport failures and refused credentials as failures.
  std::variant<Answer, RegistryFailure> get(const std::string& path, const std::string& where) const;
  RegistryOptions options_;
  std::string host_, port_, base_target_;
  std::unordered_map<int32_t, Schema> cache_;
  std::deque<int32_t> order_;  // oldest first: evicted when the cache is full
  size_t fetches_ = 0;
};

}  // namespace cdc2doris::avro
