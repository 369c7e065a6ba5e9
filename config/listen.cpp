#include "config/listen.hpp"

#include <arpa/inet.h>
#include <netdb.h>

namespace cdc2doris::config {

Result<std::string, ListenError> resolve_listen(const std::string& s) {
  const ListenError shape{"HOST:PORT such as 127.0.0.1:8080, localhost:8080 or [::1]:8080 (a bare port does not say "
                          "which interface to listen on; 0.0.0.0:PORT listens on all)"};
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return shape;
  std::string host = s.substr(0, colon);
  const std::string port = s.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535)
    return ListenError{"HOST:PORT with a port from 0 to 65535"};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0 || res == nullptr)
    return ListenError{"HOST:PORT with a HOST that resolves (" + host + ": " + gai_strerror(rc) + ")"};
  // The first IPv4 address if there is one (glibc may order "localhost" as
  // ::1 first, depending on the host's configuration), else the first IPv6.
  const addrinfo* pick = res;
  for (const addrinfo* a = res; a != nullptr; a = a->ai_next)
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
  char ip[INET6_ADDRSTRLEN] = {};
  const void* addr = pick->ai_family == AF_INET6
                         ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(pick->ai_addr)->sin6_addr)
                         : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(pick->ai_addr)->sin_addr);
  inet_ntop(pick->ai_family, addr, ip, sizeof ip);
  freeaddrinfo(res);
  return std::string(ip) + ":" + port;
}

}  // namespace cdc2doris::config
