#include <string>

#include "core/common/redact.hpp"
#include "core/kafka/source.hpp"

namespace cdc2doris::kafka {

bool is_sensitive_property(std::string_view key) { return is_secret_key(key); }

std::map<std::string, std::string> redact(const std::map<std::string, std::string>& props) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : props) out[k] = is_sensitive_property(k) ? std::string(kRedacted) : v;
  return out;
}

}  // namespace cdc2doris::kafka
