#pragma once
// Logging setup: one stderr sink for every component logger, text or JSON
// lines, and redaction by position (redact_secrets: URL userinfo, values of
// secret-named keys, Authorization headers) of every line. Secrets that could
// stand anywhere else are hidden where the message is built.
#include <string>

namespace cdc2doris::daemon {

void setup_logging(const std::string& level, const std::string& format);

}  // namespace cdc2doris::daemon
