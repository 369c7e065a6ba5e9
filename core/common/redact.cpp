#include "core/common/redact.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>

namespace cdc2doris {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// Where an unquoted value ends: whitespace or what separates options in
// librdkafka errors, JAAS lines, URLs' queries and our own messages.
bool value_end(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == ';' || c == '&' || c == '"' || c == '\'' ||
         c == ')' || c == ']' || c == '}';
}

std::string redact_userinfo(std::string text) {
  // "scheme://user:pw@host" -> "scheme://***@host". Greedy up to the
  // authority's last '@': Doris <= 1.2 wrote "user@default_cluster:pw@".
  static const std::regex userinfo(R"(([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s"']+@)");
  if (text.find("://") == std::string::npos) return text;
  return std::regex_replace(text, userinfo, "$1***@");
}

std::string redact_authorization(std::string text) {
  static const std::regex header(R"((authorization:[ \t]*)[^\r\n]+)", std::regex::icase);
  if (lower(text).find("authorization:") == std::string::npos) return text;
  return std::regex_replace(text, header, "$1" + std::string(kRedacted));
}

}  // namespace

bool is_secret_key(std::string_view key) {
  const std::string k = lower(key);
  // Substrings, so that new librdkafka and plugin properties (e.g.
  // "sasl.oauthbearer.client.secret") are covered without a list update.
  static constexpr std::array<std::string_view, 9> kMarkers = {
      "password", "secret", "sasl.jaas", "sasl.oauthbearer.config", "sasl.username",
      "ssl.key.pem", "ssl_key", "token", "credential"};
  if (k == "ssl.key.location" || k == "ssl.keystore.location") return false;  // paths are useful in logs
  for (auto m : kMarkers)
    if (k.find(m) != std::string::npos) return true;
  return k.starts_with("ssl.key") || k.starts_with("ssl.keystore") || k == "authorization";
}

std::string redact_secrets(std::string_view input) {
  const std::string text = redact_authorization(redact_userinfo(std::string(input)));
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t eq = text.find('=', i);
    if (eq == std::string::npos) {
      out.append(text, i, std::string::npos);
      break;
    }
    size_t key_start = eq;
    while (key_start > i && key_char(text[key_start - 1])) --key_start;
    out.append(text, i, eq + 1 - i);
    i = eq + 1;
    if (key_start == eq || !is_secret_key(std::string_view(text).substr(key_start, eq - key_start))) continue;
    if (text.compare(i, kRedacted.size(), kRedacted) == 0) {  // hidden where the text was built
      out += kRedacted;
      i += kRedacted.size();
      continue;
    }
    if (text.compare(i, 2, "\\\"") == 0) {  // KEY=\"VALUE\" inside an escaped (JSON) string
      const size_t close = text.find("\\\"", i + 2);
      out += "\\\"";
      out += kRedacted;
      if (close == std::string::npos) {
        i = text.size();
      } else {
        out += "\\\"";
        i = close + 2;
      }
    } else if (i < text.size() && (text[i] == '"' || text[i] == '\'')) {
      const char quote = text[i];
      const size_t close = text.find(quote, i + 1);
      out += quote;
      out += kRedacted;
      if (close == std::string::npos) {
        i = text.size();
      } else {
        out += quote;
        i = close + 1;
      }
    } else {
      size_t end = i;
      while (end < text.size() && !value_end(text[end])) ++end;
      if (end > i) out += kRedacted;
      i = end;
    }
  }
  return out;
}

}  // namespace cdc2doris
