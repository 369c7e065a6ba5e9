#pragma once
// Logging setup: one stderr sink for every component logger, text or JSON
// lines, and redaction (config::redact: URL userinfo, and each configured
// secret as a whole token) of every line — the last line of defence if a
// secret ever reaches a message.
#include <string>
#include <vector>

namespace cdc2doris::daemon {

void setup_logging(const std::string& level, const std::string& format, std::vector<std::string> secrets);

}  // namespace cdc2doris::daemon
