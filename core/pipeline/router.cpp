#include "core/pipeline/router.hpp"

namespace cdc2doris::pipeline {

const char* to_string(TruncatePolicy p) {
  switch (p) {
    case TruncatePolicy::Apply: return "apply";
    case TruncatePolicy::Ignore: return "ignore";
    case TruncatePolicy::Fail: return "fail";
  }
  return "?";
}

}  // namespace cdc2doris::pipeline
