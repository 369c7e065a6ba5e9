#include "tests/doris/fake_server.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <stdexcept>

namespace cdc2doris::test {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

TlsFiles make_self_signed(const std::filesystem::path& dir) {
  EVP_PKEY* pkey = EVP_EC_gen("P-256");
  if (!pkey) throw std::runtime_error("EVP_EC_gen failed");
  X509* x = X509_new();
  // Version 3 (value 2): extensions need it. OpenSSL accepts them in a v1
  // certificate; Java (the schema registry's TLS) refuses such a certificate.
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, pkey);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (auto [nid, val] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
                          std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, val);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (!X509_sign(x, pkey, EVP_sha256())) throw std::runtime_error("X509_sign failed");
  TlsFiles f{dir / "cert.pem", dir / "key.pem"};
  FILE* c = std::fopen(f.cert.c_str(), "w");
  PEM_write_X509(c, x);
  std::fclose(c);
  FILE* k = std::fopen(f.key.c_str(), "w");
  PEM_write_PrivateKey(k, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(pkey);
  return f;
}

struct FakeServer::Impl {
  FakeScript script;
  std::optional<ssl::context> tls;
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::thread accept_thread;
  std::mutex m;
  std::vector<std::thread> sessions;
  std::vector<std::shared_ptr<tcp::socket>> sockets;
  std::vector<FakeRequest> done;
  std::atomic<bool> stopping{false};
  std::atomic<size_t> body_bytes{0};

  template <class Stream>
  void serve(Stream& s, tcp::socket& raw) {
    beast::flat_buffer buf;
    for (;;) {
      http::request_parser<http::buffer_body> p;
      p.body_limit(boost::none);
      beast::error_code ec;
      http::read_header(s, buf, p, ec);
      if (ec) return;
      FakeRequest r;
      r.method = std::string(p.get().method_string());
      r.target = std::string(p.get().target());
      for (auto& f : p.get()) {
        std::string k(f.name_string());
        for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers[k] = std::string(f.value());
      }
      r.body_read = p.is_done();  // no body at all (Content-Length: 0)
      std::optional<FakeReply> reply;
      if (!r.header("expect").empty() && script.on_header) reply = script.on_header(r);
      if (!reply) {
        if (!r.header("expect").empty()) {
          std::this_thread::sleep_for(script.continue_delay);
          net::write(s, net::buffer(std::string_view("HTTP/1.1 100 Continue\r\n\r\n")), ec);
          if (ec) return;
        }
        char tmp[65536];
        while (!p.is_done()) {
          p.get().body().data = tmp;
          p.get().body().size = sizeof tmp;
          http::read(s, buf, p, ec);
          if (ec == http::error::need_buffer) ec = {};
          if (ec) return;
          r.body.append(tmp, sizeof tmp - p.get().body().size);
          body_bytes += sizeof tmp - p.get().body().size;
          if (script.reset_after && r.body.size() >= *script.reset_after) {
            // RST instead of FIN: what a crashing BE or a middlebox does.
            std::lock_guard lk(m);  // stop() may be shutting sockets down
            raw.set_option(net::socket_base::linger(true, 0), ec);
            raw.close(ec);
            return;
          }
          if (script.read_delay.count()) std::this_thread::sleep_for(script.read_delay);
        }
        r.body_read = true;
        reply = script.on_request ? script.on_request(r) : FakeReply{404, "Not Found", {}, false};
      }
      {
        std::lock_guard lk(m);
        done.push_back(r);
      }
      http::response<http::string_body> res{static_cast<http::status>(reply->status), 11};
      for (auto& [k, v] : reply->headers) res.set(k, v);
      res.body() = reply->body;
      res.keep_alive(!reply->close && p.get().keep_alive() && r.body_read);
      res.prepare_payload();
      http::write(s, res, ec);
      if (ec || !res.keep_alive()) return;
    }
  }
};

FakeServer::FakeServer(FakeScript script, std::optional<TlsFiles> tls) : impl_(std::make_unique<Impl>()) {
  impl_->script = std::move(script);
  if (tls) {
    impl_->tls.emplace(ssl::context::tls_server);
    impl_->tls->use_certificate_chain_file(tls->cert.string());
    impl_->tls->use_private_key_file(tls->key.string(), ssl::context::pem);
    if (!tls->client_ca.empty()) {
      impl_->tls->load_verify_file(tls->client_ca.string());
      impl_->tls->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    }
  }
  tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(net::socket_base::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->accept_thread = std::thread([this] {
    for (;;) {
      auto sock = std::make_shared<tcp::socket>(impl_->ioc);
      beast::error_code ec;
      impl_->acceptor.accept(*sock, ec);
      if (ec || impl_->stopping) return;
      ++connections_;
      std::lock_guard lk(impl_->m);
      impl_->sockets.push_back(sock);
      impl_->sessions.emplace_back([this, sock] {
        if (impl_->tls) {
          ssl::stream<tcp::socket&> s(*sock, *impl_->tls);
          beast::error_code ec;
          s.handshake(ssl::stream_base::server, ec);
          if (!ec) impl_->serve(s, *sock);
        } else {
          impl_->serve(*sock, *sock);
        }
        beast::error_code ec;
        std::lock_guard lk(impl_->m);
        sock->shutdown(tcp::socket::shutdown_both, ec);
      });
    }
  });
}

FakeServer::~FakeServer() { stop(); }

void FakeServer::stop() {
  if (impl_->stopping.exchange(true)) return;
  beast::error_code ec;
  // Wake the blocking accept(): connect to ourselves.
  {
    net::io_context tmp;
    tcp::socket s(tmp);
    s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)), ec);
  }
  impl_->accept_thread.join();
  impl_->acceptor.close(ec);
  std::vector<std::thread> threads;
  {
    std::lock_guard lk(impl_->m);
    for (auto& s : impl_->sockets) s->shutdown(tcp::socket::shutdown_both, ec);
    threads.swap(impl_->sessions);
  }
  for (auto& t : threads) t.join();
}

std::string FakeServer::url() const {
  return std::string(impl_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

size_t FakeServer::body_bytes_read() const { return impl_->body_bytes.load(); }

std::vector<FakeRequest> FakeServer::requests() {
  std::lock_guard lk(impl_->m);
  return impl_->done;
}

}  // namespace cdc2doris::test
