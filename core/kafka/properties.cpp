#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "core/kafka/source.hpp"

namespace cdc2doris::kafka {

bool is_sensitive_property(std::string_view key) {
  std::string k(key);
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
  // Substrings, so that new librdkafka properties and plugin properties
  // (e.g. "sasl.oauthbearer.client.secret") are covered without a list update.
  static constexpr std::array<std::string_view, 9> kMarkers = {
      "password", "secret", "sasl.jaas", "sasl.oauthbearer.config", "sasl.username",
      "ssl.key.pem", "ssl_key", "token", "credential"};
  if (k == "ssl.key.location" || k == "ssl.keystore.location") return false;  // paths are useful in logs
  for (auto m : kMarkers) {
    if (k.find(m) != std::string::npos) return true;
  }
  return k.starts_with("ssl.key") || k.starts_with("ssl.keystore");
}

std::map<std::string, std::string> redact(const std::map<std::string, std::string>& props) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : props) out[k] = is_sensitive_property(k) ? "[redacted]" : v;
  return out;
}

}  // namespace cdc2doris::kafka
