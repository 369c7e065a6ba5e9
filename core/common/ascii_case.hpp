#pragma once
// ASCII-only case folding: Doris compares identifiers (column names,
// property values) ignoring ASCII case, and a byte of a multi-byte UTF-8
// character must never be changed. Defined out of line: the decoder's hot
// files are compiled for AVX2 and must not share inline copies with the rest.
#include <string>
#include <string_view>

namespace cdc2doris {

std::string ascii_lower(std::string s);
bool ascii_iequals(std::string_view a, std::string_view b);

}  // namespace cdc2doris
