#include <iostream>
#include <utility>

#include "core/decode/decode_cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // A named object, not the defaulted argument: GCC 12 at -O3 warns that the
  // default argument temporary's strings "may be used uninitialized" (a false
  // positive, -Werror in the release build).
  cdc2doris::decode::DecodeCommandOptions options;
  return cdc2doris::decode::run_decode_command(args, std::cin, std::cout, std::cerr, std::move(options));
}
