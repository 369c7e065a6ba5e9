#pragma once
// URL handling for FE addresses, 307 Location headers and ErrorURLs.
// Doris' Location carries the user's password in its userinfo
// (http://user:pass@be:8040/...), so anything printable goes through
// redact_url() first.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cdc2doris::doris {

struct Url {
  std::string scheme;    // "http" | "https"
  std::string userinfo;  // raw, possibly percent-encoded; never print it
  std::string host;      // without IPv6 brackets
  uint16_t port = 0;
  std::string target;    // path + query, at least "/"

  bool tls() const { return scheme == "https"; }
  std::string host_port() const;  // "host:port", IPv6 in brackets
};

// Accepts "scheme://[userinfo@]host[:port][/target]" and, with no scheme,
// "host:port[/target]" (scheme = default_scheme). The userinfo ends at the LAST
// '@' of the authority because Doris <= 1.2 wrote "user@default_cluster:pass@".
// Old FEs leave a trailing '?' and append the query without a separator; the
// target is kept verbatim so the BE sees exactly what the FE meant.
std::optional<Url> parse_url(std::string_view s, std::string_view default_scheme = "http");

// The URL with its userinfo replaced by "***" (or unchanged if it has none).
std::string redact_url(std::string_view s);

// Applies the address-rewrite map: an exact "host:port" key wins, then a
// "host" key. Values are "host:port" or "host" (port kept). Returns true if
// the address changed.
bool rewrite_address(const std::map<std::string, std::string>& map, std::string& host, uint16_t& port);

// Split "host:port" / "[v6]:port"; nullopt if malformed or port missing.
std::optional<std::pair<std::string, uint16_t>> split_host_port(std::string_view s);

}  // namespace cdc2doris::doris
