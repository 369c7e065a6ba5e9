#include <iostream>

#include "core/decode/decode_cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return cdc2doris::decode::run_decode_command(args, std::cin, std::cout, std::cerr);
}
