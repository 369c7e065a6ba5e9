#pragma once
// librdkafka error codes → our Error and its disposition, in one place.
#include <librdkafka/rdkafka.h>

#include <string>

#include "core/common/error.hpp"

namespace cdc2doris::kafka {

enum class ErrorClass {
  Ignore,     // not an error for us (partition EOF)
  Transient,  // librdkafka recovers by itself: log and count
  Retry,      // the pipeline must abort the epoch and rewind
  Fatal,      // configuration, credentials, lost data: stop the daemon
};

ErrorClass classify(rd_kafka_resp_err_t err);

// Builds the Error for a classified code (Transient maps to Retry so the
// value is still meaningful if someone acts on it).
Error make_error(rd_kafka_resp_err_t err, const std::string& what, ErrorContext ctx = {});

}  // namespace cdc2doris::kafka
