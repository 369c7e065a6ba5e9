#pragma once
// Client of a schema registry: the writer schema of an Avro record by its id,
// through Confluent's API (GET {url}/schemas/ids/{id}, which Apicurio's
// ccompat API serves by content id) or Apicurio's own (GET
// {url}/ids/globalIds/{id} or {url}/ids/contentIds/{id}). Schemas under an id
// never change, so each answer is kept (a bounded number of ids) and a
// registry outage costs nothing while every id needed is cached.
//
// Synchronous, one connection per fetch: a fetch happens once per new schema
// id, not per record. Not thread-safe (one per pipeline, like the Decoder).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <string_view>
#include <variant>

#include <boost/json/value.hpp>

namespace boost::asio::ssl {
class context;
}

namespace cdc2doris::avro {

// Which API `url` is the base of.
enum class RegistryApi {
  Confluent,  // http://registry:8081 (Confluent), http://registry:8080/apis/ccompat/v7 (Apicurio)
  Apicurio,   // http://registry:8080/apis/registry/v2
};

// What a schema id counts. Confluent has one kind; Apicurio gives each
// version of an artifact a global id and each distinct schema text a content
// id, and its Confluent API serves content ids (unless the registry runs in
// its legacy id mode).
enum class IdKind {
  Content,  // Confluent's schema id; Apicurio's content id
  Global,   // Apicurio's global id: only its own API serves it
};

struct SchemaRef {
  IdKind kind = IdKind::Content;
  int64_t id = 0;
  bool operator==(const SchemaRef&) const = default;
};
struct SchemaRefHash {
  size_t operator()(const SchemaRef& r) const {
    return std::hash<int64_t>()(r.id) ^ (r.kind == IdKind::Global ? 0x9e3779b97f4a7c15ULL : 0);
  }
};

struct RegistryOptions {
  // Base of the API `api` names, http:// or https://.
  std::string url;
  std::string user;      // basic auth when set
  std::string password;  // secret: never in messages
  std::chrono::milliseconds timeout{10000};  // connect, send and read, each
  size_t max_cached_ids = 1000;
  RegistryApi api = RegistryApi::Confluent;
  std::string bearer_token{};  // secret: `Authorization: Bearer` when set (not with `user`)
  // https: the CA bundle the registry's certificate must chain to (empty:
  // the system's), and a client certificate (chain) and key to present.
  std::string ca_file{};
  std::string cert_file{};
  std::string key_file{};
  bool operator==(const RegistryOptions&) const = default;
};

struct RegistryFailure {
  enum class Kind {
    Unreachable,  // no answer, a timeout, a 5xx or an answer that is not a schema: try again later
    UnknownId,    // 404: the registry has no schema under this id
    Refused,      // 401/403: the credentials are wrong (configuration)
    NotAvro,      // the id names a JSON Schema or Protobuf schema
    WrongApi,     // a global id with Confluent's API, which cannot serve one (configuration)
  };
  Kind kind = Kind::Unreachable;
  std::string message;  // names the id and the registry (without credentials)
};

class RegistryClient {
 public:
  // Throws std::invalid_argument for options_problem() and TLS files it
  // cannot read.
  explicit RegistryClient(RegistryOptions options);
  // What the options say together that no client can use (the URL, never
  // showing credentials in it; the two
  // kinds of credentials, TLS files for an http URL, a certificate without
  // its key), judged without reading any file: `key` is the offending option
  // below decoding.schema_registry ("bearer_token", "tls.key_file").
  struct OptionsProblem {
    std::string key;
    std::string what;
  };
  static std::optional<OptionsProblem> options_problem(const RegistryOptions& options);
  ~RegistryClient();
  RegistryClient(const RegistryClient&) = delete;
  RegistryClient& operator=(const RegistryClient&) = delete;

  using Schema = std::shared_ptr<const std::string>;  // the Avro schema's JSON text
  std::variant<Schema, RegistryFailure> schema(SchemaRef ref);
  std::variant<Schema, RegistryFailure> schema(int32_t id) { return schema(SchemaRef{IdKind::Content, id}); }

  // For `check --connect`: with the configured credentials, the number of
  // subjects (Confluent's API: GET {url}/subjects) or artifacts (Apicurio's:
  // GET {url}/search/artifacts), or why the registry cannot serve.
  std::variant<size_t, RegistryFailure> probe();

  // "schema id 7" (Confluent's API), "content id 7", "global id 7".
  std::string describe(SchemaRef ref) const;

  // Debezium's Avro converters register a topic's schemas under the subjects
  // (Apicurio: artifacts) `<topic>-key` and `<topic>-value`. prefetch() reads
  // every version of those of the topics `wanted` accepts into the cache,
  // newest first and while the cache has room, so that records written under
  // any of them decode while the registry is down. Subjects of other topics
  // and schemas that are not Avro are passed over. The first failure ends it
  // (the schemas read so far stay cached). registry_prefetch.cpp.
  struct Prefetched {
    size_t subjects = 0;  // the wanted topics' subjects found
    size_t schemas = 0;   // versions cached (already cached ones included)
  };
  std::variant<Prefetched, RegistryFailure> prefetch(const std::function<bool(std::string_view topic)>& wanted);

  size_t fetches() const { return fetches_; }  // schema requests made (cache misses)
  const RegistryOptions& options() const { return options_; }

 private:
  struct Answer {
    unsigned status = 0;
    std::string body;
    std::string artifact_type;  // Apicurio's X-Registry-ArtifactType header
  };
  // GET base + path; transport failures and refused credentials as failures.
  std::variant<Answer, RegistryFailure> get(const std::string& path, const std::string& where) const;
  // get() of a JSON answer with HTTP 200 (anything else: Unreachable naming `expected`).
  std::variant<boost::json::value, RegistryFailure> get_json(const std::string& path, const std::string& where,
                                                             const char* expected) const;
  std::variant<Prefetched, RegistryFailure> prefetch_confluent(const std::function<bool(std::string_view)>& wanted);
  std::variant<Prefetched, RegistryFailure> prefetch_apicurio(const std::function<bool(std::string_view)>& wanted);
  void remember(SchemaRef ref, const Schema& schema);
  RegistryOptions options_;
  std::string host_, port_, base_target_;
  std::unique_ptr<boost::asio::ssl::context> tls_;  // for https only
  std::unordered_map<SchemaRef, Schema, SchemaRefHash> cache_;
  std::deque<SchemaRef> order_;  // oldest first: evicted when the cache is full
  size_t fetches_ = 0;
};

}  // namespace cdc2doris::avro
