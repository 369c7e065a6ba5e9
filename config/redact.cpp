// What is secret in a configuration, and how text is cleaned of it.
#include <cctype>
#include <regex>

#include "config/config.hpp"
#include "core/doris/url.hpp"

namespace cdc2doris::config {

std::vector<std::string> Config::secrets() const {
  std::vector<std::string> out;
  if (!doris.password.empty()) out.push_back(doris.password);
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

namespace {
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }
}  // namespace

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  // Userinfo of any URL, whatever it holds: "scheme://user:pw@host" -> "scheme://***@host".
  // Greedy up to the authority's last '@': Doris <= 1.2 wrote "user@default_cluster:pw@".
  static const std::regex userinfo(R"(([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s"']+@)");
  if (text.find("://") != std::string::npos) text = std::regex_replace(text, userinfo, "$1***@");
  // Each secret where it stands as a whole token, not inside another word.
  for (const auto& s : secrets) {
    if (s.empty()) continue;
    for (size_t pos = text.find(s); pos != std::string::npos;) {
      const size_t end = pos + s.size();
      const bool token = (pos == 0 || !word_char(text[pos - 1]) || !word_char(s.front())) &&
                         (end == text.size() || !word_char(text[end]) || !word_char(s.back()));
      if (token) {
        text.replace(pos, s.size(), "[redacted]");
        pos = text.find(s, pos + 10);
      } else {
        pos = text.find(s, pos + 1);
      }
    }
  }
  return text;
}

}  // namespace cdc2doris::config
