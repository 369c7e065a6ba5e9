#pragma once
// Redaction by position, never by value (issue 35). A secret is hidden where
// the text's structure says a secret stands: the userinfo of a URL, the value
// after a secret-named key (`sasl.password=...`, JAAS `password="..."`), an
// HTTP Authorization header. Text is never scanned for a secret's value: a
// short password ("0.1") would otherwise blank out parts of addresses
// ("127.0.0.1") and version numbers. Sources that could embed a secret
// anywhere else (librdkafka configuration errors, dumps of the
// configuration) hide it where they build the text.
#include <string>
#include <string_view>

namespace cdc2doris {

inline constexpr std::string_view kRedacted = "[redacted]";

// A configuration key (librdkafka property, JAAS option, HTTP header) whose
// value is a secret or an identity to keep out of logs: passwords, secrets,
// tokens, credentials, SASL user names and JAAS/OAUTHBEARER configs, private
// key material. Not file paths (`ssl.key.location`): those help diagnose.
bool is_secret_key(std::string_view key);

// `text` with URL userinfo ("http://***@fe:8030"), the value of every
// `KEY=VALUE` / `KEY="VALUE"` whose KEY is_secret_key, and the credentials of
// an `Authorization:` header replaced. Every other character is kept.
std::string redact_secrets(std::string_view text);

}  // namespace cdc2doris
