#include "core/avro/registry_client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <stdexcept>

#include "core/decode/wire_values.hpp"
#include "core/doris/tls_context.hpp"
#include "core/doris/url.hpp"

namespace cdc2doris::avro {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// A schema is a few KB; a registry answering more is not answering a schema.
constexpr size_t kMaxAnswerBytes = 16 * 1024 * 1024;

// Runs the io_context until the one pending operation completes or the
// stream's deadline closes it.
void run(asio::io_context& ioc) {
  ioc.restart();
  ioc.run();
}

struct Reply {
  unsigned status = 0;
  std::string body;
  std::string artifact_type;
};

struct Target {
  const std::string& host;
  const std::string& port;
  const std::string& path;
};

// One request and its answer on a connected (and for TLS, handshaken) stream.
template <class Stream>
Reply exchange(asio::io_context& ioc, Stream& stream, const Target& t, const std::string& authorization,
               std::chrono::milliseconds timeout) {
  beast::error_code ec;
  http::request<http::empty_body> req(http::verb::get, t.path, 11);
  req.set(http::field::host, t.host);
  req.set(http::field::accept, "application/vnd.schemaregistry.v1+json, application/json");
  req.set(http::field::connection, "close");  // one connection per fetch
  if (!authorization.empty()) req.set(http::field::authorization, authorization);
  beast::get_lowest_layer(stream).expires_after(timeout);
  http::async_write(stream, req, [&](beast::error_code e, size_t) { ec = e; });
  run(ioc);
  if (ec) throw beast::system_error(ec);

  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxAnswerBytes);
  beast::get_lowest_layer(stream).expires_after(timeout);
  http::async_read(stream, buf, parser, [&](beast::error_code e, size_t) { ec = e; });
  run(ioc);
  if (ec) throw beast::system_error(ec);
  auto& res = parser.get();
  const auto type = res.find("X-Registry-ArtifactType");
  return Reply{res.result_int(), std::move(res.body()), type == res.end() ? "" : std::string(type->value())};
}

// Throws std::runtime_error (beast::system_error) on any transport failure,
// timeout and refused certificates included.
Reply http_get(const Target& t, ssl::context* tls, const std::string& authorization,
               std::chrono::milliseconds timeout) {
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  tcp::resolver::results_type endpoints;
  resolver.async_resolve(t.host, t.port, [&](beast::error_code e, tcp::resolver::results_type r) {
    ec = e;
    endpoints = std::move(r);
  });
  run(ioc);
  if (ec) throw beast::system_error(ec);
  auto connect = [&](beast::tcp_stream& tcp) {
    tcp.expires_after(timeout);
    tcp.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
    run(ioc);
    if (ec) throw beast::system_error(ec);
  };
  if (tls == nullptr) {
    beast::tcp_stream stream(ioc);
    connect(stream);
    Reply reply = exchange(ioc, stream, t, authorization, timeout);
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return reply;
  }
  beast::ssl_stream<beast::tcp_stream> stream(ioc, *tls);
  connect(beast::get_lowest_layer(stream));
  SSL* native = stream.native_handle();
  // SNI, and OpenSSL's own check of the name (or IP address) the URL gives.
  asio::ip::make_address(t.host, ec);
  const bool ip = !ec;
  if ((!ip && SSL_set_tlsext_host_name(native, t.host.c_str()) != 1) ||
      (ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(native), t.host.c_str())
          : X509_VERIFY_PARAM_set1_host(SSL_get0_param(native), t.host.c_str(), 0)) != 1)
    throw std::runtime_error("TLS: cannot check the certificate against the name " + t.host);
  beast::get_lowest_layer(stream).expires_after(timeout);
  stream.async_handshake(ssl::stream_base::client, [&](beast::error_code e) { ec = e; });
  run(ioc);
  if (ec) {
    const long verify = SSL_get_verify_result(native);
    throw std::runtime_error("TLS handshake failed: " + ec.message() +
                             (verify != X509_V_OK ? std::string(": ") + X509_verify_cert_error_string(verify) : ""));
  }
  Reply reply = exchange(ioc, stream, t, authorization, timeout);
  // No TLS shutdown: the answer is whole (its length delimited it), and
  // waiting for the registry's close_notify cost the whole `timeout` per
  // fetch against Apicurio (Vert.x does not answer one on a kept-alive
  // connection; avro_registry_test's HTTPS part found it).
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
  return reply;
}

std::string shorten(std::string s) {
  constexpr size_t kMax = 300;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

std::optional<std::string> url_problem(const std::string& text) {
  const auto url = doris::parse_url(text);
  if (!url || !url->userinfo.empty())
    return "schema registry URL \"" + doris::redact_url(text) +
           "\": expected http[s]://HOST[:PORT][/PATH] (credentials go in user and password)";
  return std::nullopt;
}

}  // namespace

std::optional<RegistryClient::OptionsProblem> RegistryClient::options_problem(const RegistryOptions& o) {
  if (auto problem = url_problem(o.url)) return OptionsProblem{"url", *problem};
  if (!o.user.empty() && !o.bearer_token.empty())
    return OptionsProblem{"bearer_token", "user (basic authentication) and bearer_token exclude each other"};
  if (o.cert_file.empty() != o.key_file.empty())
    return OptionsProblem{o.cert_file.empty() ? "tls.key_file" : "tls.cert_file",
                          "tls.cert_file and tls.key_file go together"};
  if (!doris::parse_url(o.url)->tls() && (!o.ca_file.empty() || !o.cert_file.empty()))
    return OptionsProblem{o.ca_file.empty() ? "tls.cert_file" : "tls.ca_file",
                          "tls.* is set but the URL is http; use https://"};
  return std::nullopt;
}

RegistryClient::RegistryClient(RegistryOptions options) : options_(std::move(options)) {
  if (auto problem = options_problem(options_))
    throw std::invalid_argument("decoding.schema_registry." + problem->key + ": " + problem->what);
  const auto url = doris::parse_url(options_.url);
  if (url->tls())
    tls_ = std::make_unique<ssl::context>(doris::make_client_tls(
        doris::ClientTlsFiles{options_.ca_file, options_.cert_file, options_.key_file}, /*verify_peer=*/true,
        "decoding.schema_registry.tls"));
  host_ = url->host;
  port_ = std::to_string(url->port != 0 ? url->port : (url->tls() ? 443 : 80));
  base_target_ = url->target;
  while (!base_target_.empty() && base_target_.back() == '/') base_target_.pop_back();
  if (options_.max_cached_ids == 0) options_.max_cached_ids = 1;
}

RegistryClient::~RegistryClient() = default;

std::variant<RegistryClient::Answer, RegistryFailure> RegistryClient::get(const std::string& path,
                                                                          const std::string& where) const {
  std::string authorization;
  if (!options_.user.empty()) {
    authorization = "Basic ";
    decode::base64_encode(options_.user + ":" + options_.password, authorization);
  } else if (!options_.bearer_token.empty()) {
    authorization = "Bearer " + options_.bearer_token;
  }
  Reply reply;
  try {
    const std::string target = base_target_ + path;
    reply = http_get(Target{host_, port_, target}, tls_.get(), authorization, options_.timeout);
  } catch (const std::exception& e) {
    return RegistryFailure{RegistryFailure::Kind::Unreachable, where + ": " + e.what()};
  }
  if (reply.status == 401 || reply.status == 403)
    return RegistryFailure{RegistryFailure::Kind::Refused,
                           where + ": the registry refused the credentials of decoding.schema_registry (HTTP " +
                               std::to_string(reply.status) + " " + shorten(reply.body) + ")"};
  return Answer{reply.status, std::move(reply.body), std::move(reply.artifact_type)};
}

std::variant<size_t, RegistryFailure> RegistryClient::probe() {
  const std::string where = "the registry at " + options_.url;
  const bool apicurio = options_.api == RegistryApi::Apicurio;
  // Apicurio's search answers {"artifacts": [...], "count": N}; one is enough to see N.
  const std::string path = apicurio ? "/search/artifacts?limit=1" : "/subjects";
  const char* expected = apicurio ? "a JSON object with a \"count\" of artifacts" : "a JSON array of subjects";
  auto got = get_json(path, where, expected);
  if (auto* f = std::get_if<RegistryFailure>(&got)) return *f;
  const auto& doc = std::get<boost::json::value>(got);
  if (!apicurio && doc.is_array()) return doc.get_array().size();
  const auto* count = doc.is_object() ? doc.get_object().if_contains("count") : nullptr;
  if (apicurio && count != nullptr && count->is_int64() && count->get_int64() >= 0)
    return static_cast<size_t>(count->get_int64());
  return RegistryFailure{RegistryFailure::Kind::Unreachable, where + ": expected " + expected + " from " +
                                                                 options_.url + path + ", got " +
                                                                 shorten(boost::json::serialize(doc))};
}

std::string RegistryClient::describe(SchemaRef ref) const {
  if (ref.kind == IdKind::Global) return "global id " + std::to_string(ref.id);
  return (options_.api == RegistryApi::Apicurio ? "content id " : "schema id ") + std::to_string(ref.id);
}

std::variant<RegistryClient::Schema, RegistryFailure> RegistryClient::schema(SchemaRef ref) {
  if (auto it = cache_.find(ref); it != cache_.end()) return it->second;
  const std::string where = describe(ref) + " from the registry at " + options_.url;
  const bool apicurio = options_.api == RegistryApi::Apicurio;
  if (ref.kind == IdKind::Global && !apicurio)
    return RegistryFailure{RegistryFailure::Kind::WrongApi,
                           where + ": Confluent's API serves no global ids (Apicurio's ccompat API takes content "
                                   "ids); set decoding.schema_registry.api: apicurio with its /apis/registry/v2 URL"};
  ++fetches_;
  const std::string id = std::to_string(ref.id);
  // Confluent wraps the schema in JSON; Apicurio answers the artifact's own text.
  const std::string path = !apicurio                   ? "/schemas/ids/" + id
                           : ref.kind == IdKind::Global ? "/ids/globalIds/" + id
                                                        : "/ids/contentIds/" + id;
  auto got = get(path, where);
  if (auto* f = std::get_if<RegistryFailure>(&got)) return *f;
  const Answer& answer = std::get<Answer>(got);
  const std::string got_text = "HTTP " + std::to_string(answer.status) + " " + shorten(answer.body);
  if (answer.status == 404)
    return RegistryFailure{RegistryFailure::Kind::UnknownId,
                           where + ": the registry has no such schema (" + got_text + ")"};
  if (answer.status != 200)
    return RegistryFailure{RegistryFailure::Kind::Unreachable, where + ": expected HTTP 200, got " + got_text};
  boost::system::error_code ec;
  const auto doc = boost::json::parse(answer.body, ec);
  std::string text;
  if (apicurio) {
    if (!answer.artifact_type.empty() && answer.artifact_type != "AVRO")
      return RegistryFailure{RegistryFailure::Kind::NotAvro,
                             where + ": expected an Avro schema, got artifact type " + answer.artifact_type};
    if (ec)
      return RegistryFailure{RegistryFailure::Kind::Unreachable,
                             where + ": expected an Avro schema's JSON, got " + got_text};
    text = answer.body;
  } else {
    const auto* obj = ec ? nullptr : doc.if_object();
    const auto* schema_text = obj != nullptr ? obj->if_contains("schema") : nullptr;
    if (schema_text == nullptr || !schema_text->is_string())
      return RegistryFailure{RegistryFailure::Kind::Unreachable,
                             where + ": expected a JSON object with a \"schema\" string, got " + got_text};
    // Confluent omits schemaType for Avro, its default.
    if (const auto* type = obj->if_contains("schemaType");
        type != nullptr && !(type->is_string() && type->get_string() == "AVRO"))
      return RegistryFailure{RegistryFailure::Kind::NotAvro,
                             where + ": expected an Avro schema, got schemaType " + boost::json::serialize(*type)};
    text = schema_text->get_string();
  }
  auto schema = std::make_shared<const std::string>(std::move(text));
  remember(ref, schema);
  return schema;
}

void RegistryClient::remember(SchemaRef ref, const Schema& schema) {
  if (cache_.count(ref) != 0) return;
  if (cache_.size() >= options_.max_cached_ids) {
    cache_.erase(order_.front());
    order_.pop_front();
  }
  cache_.emplace(ref, schema);
  order_.push_back(ref);
}

std::variant<boost::json::value, RegistryFailure> RegistryClient::get_json(const std::string& path,
                                                                           const std::string& where,
                                                                           const char* expected) const {
  auto got = get(path, where);
  if (auto* f = std::get_if<RegistryFailure>(&got)) return *f;
  const Answer& answer = std::get<Answer>(got);
  boost::system::error_code ec;
  auto doc = boost::json::parse(answer.body, ec);
  if (answer.status == 200 && !ec) return doc;
  return RegistryFailure{RegistryFailure::Kind::Unreachable,
                         where + ": expected HTTP 200 with " + expected + " from " + options_.url + path + ", got HTTP " +
                             std::to_string(answer.status) + " " + shorten(answer.body)};
}

}  // namespace cdc2doris::avro
