#include "core/common/error.hpp"

namespace cdc2doris {

const char* to_string(Disposition d) {
  switch (d) {
    case Disposition::Retry: return "retry";
    case Disposition::Fail: return "fail";
    case Disposition::Fatal: return "fatal";
  }
  return "unknown";
}

std::string Error::what() const {
  std::string out = message_;
  std::string ctx;
  auto add = [&](const char* k, const std::string& v) {
    if (v.empty()) return;
    if (!ctx.empty()) ctx += ' ';
    ctx += k;
    ctx += '=';
    ctx += v;
  };
  add("table", ctx_.table);
  add("label", ctx_.label);
  if (ctx_.txn_id) add("txn_id", std::to_string(*ctx_.txn_id));
  add("endpoint", ctx_.endpoint);
  if (ctx_.http_status) add("http_status", std::to_string(*ctx_.http_status));
  add("doris_status", ctx_.doris_status);
  add("doris_message", ctx_.doris_message);
  add("topic", ctx_.topic);
  if (ctx_.partition) add("partition", std::to_string(*ctx_.partition));
  if (ctx_.offset) add("offset", std::to_string(*ctx_.offset));
  if (!ctx.empty()) out += " (" + ctx + ")";
  out += " [";
  out += to_string(disposition_);
  out += ']';
  return out;
}

}  // namespace cdc2doris
