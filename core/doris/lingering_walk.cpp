#include "core/doris/lingering_walk.hpp"

#include "core/doris/label.hpp"

namespace cdc2doris::doris {

DorisResult<WalkSummary> walk_labels(DorisClient& client, const LabelWalk& walk,
                                                  const std::function<WalkNext(const LabelInUse&)>& on_in_use) {
  WalkSummary sum;
  LoadSpec spec;
  spec.db = walk.db;
  spec.table = walk.table;
  spec.sequence_col = walk.sequence_col;
  for (uint64_t epoch = walk.first_epoch;; ++epoch) {
    if (walk.skip_epoch && walk.skip_epoch(epoch)) continue;
    sum.last_epoch = epoch;
    bool epoch_used = false;
    for (uint32_t part = 0;; ++part) {
      if (sum.probed >= static_cast<size_t>(walk.max_probes)) {
        sum.budget_spent = true;
        return sum;
      }
      spec.label = make_label(walk.prefix, walk.db, walk.table, epoch, part);
      auto probed = client.probe_label(spec);
      ++sum.probed;
      if (!probed) {
        auto& err = probed.error();
        if (err.kind() != ErrorKind::UnknownTable) return err;
        sum.table_unknown = true;
        return sum;
      }
      const auto& st = *probed;
      if (st.state == LabelState::Unused) {
        if (part == 0) continue;  // a later part may still be in use
        break;
      }
      epoch_used = true;
      if (on_in_use({spec.label, epoch, part, st}) == WalkNext::Stop) {
        sum.stopped = true;
        return sum;
      }
    }
    if (!epoch_used) return sum;
  }
}

}  // namespace cdc2doris::doris
