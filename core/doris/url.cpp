#include "core/doris/url.hpp"

#include <charconv>

namespace cdc2doris::doris {

namespace {
std::optional<uint16_t> parse_port(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v == 0 || v > 65535) return std::nullopt;
  return static_cast<uint16_t>(v);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// host[:port] (no userinfo). default_port used when absent (0 = required).
bool parse_host_port(std::string_view hp, uint16_t default_port, std::string& host, uint16_t& port) {
  std::string_view port_part;
  if (!hp.empty() && hp.front() == '[') {
    auto close = hp.find(']');
    if (close == std::string_view::npos) return false;
    host = std::string(hp.substr(1, close - 1));
    auto rest = hp.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port_part = rest.substr(1);
    }
  } else {
    auto colon = hp.rfind(':');
    if (colon != std::string_view::npos) {
      host = std::string(hp.substr(0, colon));
      port_part = hp.substr(colon + 1);
    } else {
      host = std::string(hp);
    }
  }
  if (host.empty()) return false;
  if (port_part.empty()) {
    if (default_port == 0) return false;
    port = default_port;
    return true;
  }
  auto p = parse_port(port_part);
  if (!p) return false;
  port = *p;
  return true;
}
}  // namespace

std::string Url::host_port() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

std::optional<Url> parse_url(std::string_view s, std::string_view default_scheme) {
  Url u;
  auto sep = s.find("://");
  std::string_view rest;
  if (sep == std::string_view::npos) {
    u.scheme = lower(default_scheme);
    rest = s;
  } else {
    u.scheme = lower(s.substr(0, sep));
    rest = s.substr(sep + 3);
  }
  if (u.scheme != "http" && u.scheme != "https") return std::nullopt;
  auto auth_end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, auth_end);
  u.target = auth_end == std::string_view::npos ? "/" : std::string(rest.substr(auth_end));
  if (!u.target.empty() && u.target.front() == '?') u.target.insert(0, "/");
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    u.userinfo = std::string(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
  if (!parse_host_port(authority, u.tls() ? 443 : 80, u.host, u.port)) return std::nullopt;
  return u;
}

std::string redact_url(std::string_view s) {
  auto sep = s.find("://");
  size_t start = sep == std::string_view::npos ? 0 : sep + 3;
  auto auth_end = s.find_first_of("/?", start);
  std::string_view authority = s.substr(start, auth_end == std::string_view::npos ? s.npos : auth_end - start);
  auto at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(s);
  std::string out(s.substr(0, start));
  out += "***@";
  out += authority.substr(at + 1);
  if (auth_end != std::string_view::npos) out += s.substr(auth_end);
  return out;
}

bool rewrite_address(const std::map<std::string, std::string>& map, std::string& host, uint16_t& port) {
  if (map.empty()) return false;
  Url probe;
  probe.host = host;
  probe.port = port;
  auto it = map.find(probe.host_port());
  if (it == map.end()) it = map.find(host);
  if (it == map.end()) return false;
  std::string new_host;
  uint16_t new_port = port;
  if (!parse_host_port(it->second, port, new_host, new_port)) return false;
  bool changed = new_host != host || new_port != port;
  host = std::move(new_host);
  port = new_port;
  return changed;
}

std::optional<std::pair<std::string, uint16_t>> split_host_port(std::string_view s) {
  std::string host;
  uint16_t port = 0;
  if (!parse_host_port(s, 0, host, port)) return std::nullopt;
  return std::make_pair(host, port);
}

}  // namespace cdc2doris::doris
