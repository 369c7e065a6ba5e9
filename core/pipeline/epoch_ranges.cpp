#include "core/pipeline/epoch_ranges.hpp"

namespace cdc2doris::pipeline {

std::vector<state::PartitionRange> epoch_ranges(const PartitionOffsets& pos, const PartitionOffsets& base,
                                                const PartitionOffsets& committed) {
  std::vector<state::PartitionRange> out;
  out.reserve(pos.size());
  for (const auto& [tp, end] : pos) {
    auto b = base.find(tp);
    const int64_t start = b == base.end() ? end : b->second;
    if (start == end && !committed.count(tp)) continue;
    out.push_back({tp.topic, tp.partition, start, end});
  }
  return out;
}

}  // namespace cdc2doris::pipeline
