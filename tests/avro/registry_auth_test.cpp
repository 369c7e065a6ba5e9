// The registry client's bearer token and HTTPS (a CA file, a client
// certificate), against the tests' scriptable HTTP(S) server standing in for
// a registry: the header sent, a refused token never shown, a certificate
// checked against the CA and the URL's host, a client certificate presented
// when the server demands one, and files it cannot use refused up front.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <string>

#include "core/avro/registry_client.hpp"
#include "tests/doris/fake_server.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const std::string kSchema = R"({"type":"record","name":"Key","fields":[{"name":"id","type":"int"}]})";

// Confluent's API answering schema id 1 to requests carrying `authorization` (any, when empty).
test::FakeScript registry_script(std::string authorization = "") {
  test::FakeScript script;
  script.on_request = [authorization](const test::FakeRequest& r) {
    test::FakeReply reply;
    if (!authorization.empty() && r.header("authorization") != authorization) {
      reply.status = 401;
      reply.body = R"({"error_code":401,"message":"Unauthorized"})";
    } else if (r.target == "/schemas/ids/1") {
      reply.body = json::serialize(json::object{{"schema", kSchema}});
    } else {
      reply.status = 404;
    }
    return reply;
  };
  return script;
}

avro::RegistryOptions options_for(const std::string& url) {
  avro::RegistryOptions o;
  o.url = url;
  o.timeout = 3000ms;
  return o;
}

bool fetched(avro::RegistryClient& client) {
  auto got = client.schema(1);
  if (auto* f = std::get_if<avro::RegistryFailure>(&got)) FAIL_CHECK(f->message);
  return std::holds_alternative<avro::RegistryClient::Schema>(got);
}

}  // namespace

TEST_CASE("registry client: a bearer token is sent and a refused one never shown", "[avro][registry]") {
  test::FakeServer server(registry_script("Bearer tok-right-1"));
  auto options = options_for(server.url());
  options.bearer_token = "tok-right-1";
  avro::RegistryClient client(options);
  CHECK(fetched(client));
  REQUIRE(server.requests().size() == 1);
  CHECK(server.requests().front().header("authorization") == "Bearer tok-right-1");

  options.bearer_token = "tok-wrong-2";
  avro::RegistryClient wrong(options);
  auto got = wrong.schema(1);
  REQUIRE(std::holds_alternative<avro::RegistryFailure>(got));
  const auto& f = std::get<avro::RegistryFailure>(got);
  CHECK(f.kind == avro::RegistryFailure::Kind::Refused);
  CHECK_THAT(f.message, Catch::Contains("schema id 1") && Catch::Contains("HTTP 401"));
  CHECK(f.message.find("tok-wrong-2") == std::string::npos);

  options.user = "cdc";
  CHECK_THROWS_WITH(avro::RegistryClient(options), Catch::Contains("user (basic authentication) and bearer_token"));
}

TEST_CASE("registry client: https checks the certificate against the CA file and the host", "[avro][registry]") {
  test::TempDir dir("registry-tls");
  const auto server_files = test::make_self_signed(dir.path());
  test::FakeServer server(registry_script(), server_files);
  REQUIRE(server.url().rfind("https://", 0) == 0);

  auto options = options_for(server.url());
  options.ca_file = server_files.cert.string();
  avro::RegistryClient trusting(options);
  CHECK(fetched(trusting));
  // The certificate names localhost too.
  options.url = "https://localhost:" + std::to_string(server.port());
  avro::RegistryClient by_name(options);
  CHECK(fetched(by_name));

  // The system's CAs do not know the test's certificate: unreachable, saying why.
  avro::RegistryClient system_cas(options_for(server.url()));
  auto got = system_cas.schema(1);
  REQUIRE(std::holds_alternative<avro::RegistryFailure>(got));
  CHECK(std::get<avro::RegistryFailure>(got).kind == avro::RegistryFailure::Kind::Unreachable);
  CHECK_THAT(std::get<avro::RegistryFailure>(got).message, Catch::Contains("TLS handshake failed") &&
                                                               Catch::Contains("certificate"));

  options.ca_file = (dir.path() / "missing.pem").string();
  CHECK_THROWS_WITH(avro::RegistryClient(options), Catch::Contains("tls.ca_file " + options.ca_file));
  auto plain = options_for("http://127.0.0.1:1");
  plain.ca_file = server_files.cert.string();
  CHECK_THROWS_WITH(avro::RegistryClient(plain), Catch::Contains("the URL is http"));
}

TEST_CASE("registry client: a client certificate is presented when the registry demands one", "[avro][registry]") {
  test::TempDir server_dir("registry-mtls-server"), client_dir("registry-mtls-client");
  auto server_files = test::make_self_signed(server_dir.path());
  const auto client_files = test::make_self_signed(client_dir.path());
  server_files.client_ca = client_files.cert;  // self-signed: its own CA
  test::FakeServer server(registry_script(), server_files);

  auto options = options_for(server.url());
  options.ca_file = server_files.cert.string();
  avro::RegistryClient anonymous(options);
  auto got = anonymous.schema(1);
  REQUIRE(std::holds_alternative<avro::RegistryFailure>(got));
  CHECK(std::get<avro::RegistryFailure>(got).kind == avro::RegistryFailure::Kind::Unreachable);
  CHECK(server.requests().empty());  // refused at the handshake, before any request

  options.cert_file = client_files.cert.string();
  options.key_file = client_files.key.string();
  avro::RegistryClient presenting(options);
  CHECK(fetched(presenting));

  options.key_file.clear();
  CHECK_THROWS_WITH(avro::RegistryClient(options), Catch::Contains("tls.cert_file and tls.key_file go together"));
}
