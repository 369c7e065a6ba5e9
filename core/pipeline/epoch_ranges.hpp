#pragma once
// The partition ranges an epoch record covers (Pipeline::Impl::make_record).
#include <cstdint>
#include <map>
#include <vector>

#include "core/kafka/source.hpp"
#include "state/checkpoint_store.hpp"

namespace cdc2doris::pipeline {

using PartitionOffsets = std::map<kafka::TopicPartition, int64_t>;

// One range per partition with a position: from where the epoch started on it
// (`base`; none: it starts at its position) to the position reached (`pos`).
// A partition nothing was read from in this epoch and that no committed epoch
// covers (`committed`) is left out: it starts per auto.offset.reset, its
// epoch start is the first record fetched, and recording that offset would
// claim a position the consumer group never got (the commit point writes
// only partitions with records). On a compacted topic, whose first record
// sits above the log start, the next start read such a claim as the group's
// offsets lost and stopped (issue 31, the crash campaign).
std::vector<state::PartitionRange> epoch_ranges(const PartitionOffsets& pos, const PartitionOffsets& base,
                                                const PartitionOffsets& committed);

}  // namespace cdc2doris::pipeline
