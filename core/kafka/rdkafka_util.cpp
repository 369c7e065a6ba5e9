#include "core/kafka/rdkafka_util.hpp"

#include <algorithm>
#include <limits>

#include "core/kafka/errors.hpp"

namespace cdc2doris::kafka::rk {

std::variant<GroupOffsetMap, Error> read_committed(rd_kafka_t* rk, const std::vector<TopicPartition>& tps,
                                                   std::chrono::milliseconds timeout, PartitionErrors on_partition) {
  GroupOffsetMap out;
  if (tps.empty()) return out;
  List l = make_list(tps);
  const int ms = static_cast<int>(std::clamp<int64_t>(timeout.count(), 0, std::numeric_limits<int>::max()));
  if (rd_kafka_resp_err_t err = rd_kafka_committed(rk, l.get(), ms)) return make_error(err, "read committed offsets");
  for (int i = 0; i < l->cnt; ++i) {
    const auto& e = l->elems[i];
    TopicPartition tp{e.topic, e.partition};
    if (e.err) {
      if (on_partition == PartitionErrors::Skip) continue;
      ErrorContext ctx;
      ctx.topic = tp.topic;
      ctx.partition = tp.partition;
      return make_error(e.err, "read committed offsets", std::move(ctx));
    }
    if (e.offset < 0) continue;
    GroupOffset go{e.offset, {}};
    if (e.metadata != nullptr && e.metadata_size > 0)
      go.metadata.assign(static_cast<const char*>(e.metadata), e.metadata_size);
    out[tp] = std::move(go);
  }
  return out;
}

}  // namespace cdc2doris::kafka::rk
