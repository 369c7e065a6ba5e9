#pragma once
// One error type for the load/commit path. The disposition decides what the
// pipeline does, so it is set in exactly one place per component (e.g. the
// Doris response classifier) and never re-derived from message text later.
#include <cstdint>
#include <optional>
#include <string>

namespace cdc2doris {

// In order of gravity: RetryPolicy::retry_up_to (retry.hpp) compares them.
enum class Disposition {
  Retry,  // transient: abort the epoch, rewind, back off, go on
  Fail,   // this unit of work cannot succeed as is (e.g. data quality); policy decides
  Fatal,  // configuration/permission problem: stop the daemon, exit non-zero
};

const char* to_string(Disposition d);

// Context that locates an error. Every field is optional; what is set is
// printed, in a stable order, by Error::what().
struct ErrorContext {
  std::string table;  // db.table
  std::string label;
  std::optional<int64_t> txn_id;
  std::string endpoint;  // FE/BE host:port
  std::optional<int> http_status;
  std::string doris_status;
  std::string doris_message;
  std::string topic;
  std::optional<int32_t> partition;
  std::optional<int64_t> offset;
};

class Error {
 public:
  Error(Disposition d, std::string message, ErrorContext ctx = {})
      : disposition_(d), message_(std::move(message)), ctx_(std::move(ctx)) {}

  Disposition disposition() const { return disposition_; }
  const std::string& message() const { return message_; }
  const ErrorContext& context() const { return ctx_; }
  ErrorContext& context() { return ctx_; }
  // "message (table=db.t label=... txn_id=... ...)"
  std::string what() const;

 private:
  Disposition disposition_;
  std::string message_;
  ErrorContext ctx_;
};

}  // namespace cdc2doris
