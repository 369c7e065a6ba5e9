#pragma once
#include <cstdint>
#include <limits>
#include <optional>

namespace cdc2doris::config {

// Inclusive bounds of an integer, duration (in milliseconds) or size (in
// bytes) key; the reader rejects values outside them with the key's mark.
struct Bounds {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
};
constexpr std::optional<Bounds> at_least(int64_t min) { return Bounds{min, std::numeric_limits<int64_t>::max()}; }
constexpr std::optional<Bounds> between(int64_t min, int64_t max) { return Bounds{min, max}; }
inline constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();  // keys held in an int

}  // namespace cdc2doris::config
