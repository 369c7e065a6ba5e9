#include "core/doris/tls_context.hpp"

#include <stdexcept>

namespace cdc2doris::doris {

namespace ssl = boost::asio::ssl;

ssl::context make_client_tls(const ClientTlsFiles& files, bool verify_peer, const std::string& key_prefix) {
  ssl::context ctx(ssl::context::tls_client);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ctx.set_verify_mode(verify_peer ? ssl::verify_peer : ssl::verify_none);
  // Each throws with OpenSSL's reason; the key and the file say which.
  auto load = [&](const char* key, const std::string& file, auto&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      throw std::invalid_argument(key_prefix + "." + key + " " + file + ": " + e.what());
    }
  };
  if (files.ca_file.empty())
    ctx.set_default_verify_paths();
  else
    load("ca_file", files.ca_file, [&] { ctx.load_verify_file(files.ca_file); });
  if (!files.cert_file.empty()) {
    load("cert_file", files.cert_file, [&] { ctx.use_certificate_chain_file(files.cert_file); });
    load("key_file", files.key_file, [&] { ctx.use_private_key_file(files.key_file, ssl::context::pem); });
  }
  return ctx;
}

}  // namespace cdc2doris::doris
