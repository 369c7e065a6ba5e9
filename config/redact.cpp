// What is secret in a configuration. Redaction itself is by position
// (core/common/redact.hpp); this list is what tests grep every output for.

#include "config/config.hpp"
#include "core/doris/url.hpp"

namespace cdc2doris::config {

std::vector<std::string> Config::secrets() const {
  std::vector<std::string> out;
  if (!doris.password.empty()) out.push_back(doris.password);
  if (!admin_token.empty()) out.push_back(admin_token);
  if (!schema_registry.password.empty()) out.push_back(schema_registry.password);
  if (!schema_registry.bearer_token.empty()) out.push_back(schema_registry.bearer_token);
  // A user name identifies, it does not authenticate: as a "secret" it would
  // blank out every word that happens to equal it (a SASL user "cdc2doris").
  for (const auto& [k, v] : kafka_properties)
    if (kafka::is_sensitive_property(k) && k != "sasl.username" && !v.empty()) out.push_back(v);
  // The password of an FE URL's userinfo ("http://user:pw@fe:8030").
  for (const auto& list : {&doris.fe_urls, &doris.backends})
    for (const auto& u : *list)
      if (auto url = doris::parse_url(u); url && url->userinfo.find(':') != std::string::npos) {
        std::string pw = url->userinfo.substr(url->userinfo.find(':') + 1);
        if (!pw.empty()) out.push_back(pw);
      }
  return out;
}

}  // namespace cdc2doris::config
