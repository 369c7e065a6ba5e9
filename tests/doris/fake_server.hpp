#pragma once
// A small scriptable HTTP(S) server for the client's edge cases that the Doris
// emulator does not model (TLS termination, exact wire behaviour, stalls) and
// for tests that must not depend on it. One thread per connection (tests
// only); every thread is joined by stop()/the destructor.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cdc2doris::test {

struct FakeRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                             // de-chunked (not decompressed)
  bool body_read = false;
  std::string header(const std::string& k) const {
    auto it = headers.find(k);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct FakeReply {
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
  bool close = false;
};

struct FakeScript {
  // Header phase of a request carrying Expect: 100-continue. Returning a reply
  // answers early (no 100 Continue, body never read).
  std::function<std::optional<FakeReply>(const FakeRequest&)> on_header;
  // Delay before "100 Continue".
  std::chrono::milliseconds continue_delay{0};
  // Reset the connection (RST) after this many body bytes.
  std::optional<size_t> reset_after;
  // Sleep this long per 64 KiB of body read (a slow BE).
  std::chrono::milliseconds read_delay{0};
  // Full request -> reply. Not called if on_header answered.
  std::function<FakeReply(const FakeRequest&)> on_request;
};

struct TlsFiles {
  std::filesystem::path cert;  // self-signed, SAN IP:127.0.0.1 + DNS:localhost; also the CA file
  std::filesystem::path key;
  // When set, the server demands a client certificate chaining to this CA.
  std::filesystem::path client_ca{};
};
// Generates a fresh self-signed certificate with OpenSSL into dir.
TlsFiles make_self_signed(const std::filesystem::path& dir);

class FakeServer {
 public:
  explicit FakeServer(FakeScript script, std::optional<TlsFiles> tls = std::nullopt);
  ~FakeServer();
  int port() const { return port_; }
  std::string url() const;  // http(s)://127.0.0.1:port
  std::string host_port() const { return "127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_.load(); }
  // Body bytes read so far over all requests, also of ones still in progress.
  size_t body_bytes_read() const;
  std::vector<FakeRequest> requests();  // completed requests, in order
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<int> connections_{0};
};

}  // namespace cdc2doris::test
