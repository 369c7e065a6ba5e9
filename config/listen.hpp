#pragma once
// admin.listen: "HOST:PORT" -> "IP:PORT" as the admin server binds it (IPv6
// without brackets: it splits at the last ':'). Names are resolved when the
// configuration is loaded, so `check` and `run` accept the same addresses.
#include <string>

#include "core/common/result.hpp"

namespace cdc2doris::config {

struct ListenError {
  std::string expected;  // what an address must look like, for the error message
};

Result<std::string, ListenError> resolve_listen(const std::string& s);

}  // namespace cdc2doris::config
