#pragma once
// The TLS client context of the daemon's HTTP clients (Doris FEs and BEs,
// the schema registry): one place for the protocol floor and how CA and
// client-certificate files are loaded.
#include <boost/asio/ssl/context.hpp>

#include <string>

namespace cdc2doris::doris {

struct ClientTlsFiles {
  std::string ca_file;    // PEM bundle; empty: the system's CAs
  std::string cert_file;  // PEM client certificate chain; empty: none
  std::string key_file;   // its key (with cert_file)
};

// TLS 1.2 or later. `key_prefix` names the files' configuration keys in
// errors ("doris.tls"): a file that cannot be used throws
// std::invalid_argument with the key, the file and OpenSSL's reason.
boost::asio::ssl::context make_client_tls(const ClientTlsFiles& files, bool verify_peer, const std::string& key_prefix);

}  // namespace cdc2doris::doris
