#include "daemon/abort_lingering.hpp"

#include <optional>
#include <variant>

#include "core/doris/lingering_walk.hpp"
#include "daemon/exit_codes.hpp"

namespace cdc2doris::daemon {

int abort_lingering_txns(doris::DorisClient& client, const AbortLingering& what, std::ostream& out,
                         std::ostream& err) {
  size_t aborted = 0, walked = 0;
  for (const auto& t : what.tables) {
    const std::string name = t.db + "." + t.table;
    doris::LabelWalk walk;
    walk.prefix = what.prefix;
    walk.db = t.db;
    walk.table = t.table;
    walk.sequence_col = t.sequence_col;
    walk.first_epoch = what.from_epoch;
    walk.skip_epoch = [&what](uint64_t e) { return what.pending.count(e) > 0; };
    bool failed = false;
    auto r = doris::walk_labels(client, walk, [&](const doris::LabelInUse& in_use) {
      const auto& st = in_use.state;
      if ((st.state != doris::LabelState::Running && st.state != doris::LabelState::Precommitted) || !st.txn_id)
        return doris::WalkNext::Continue;
      auto ab = client.abort(t.db, *st.txn_id);
      if (!ab) {
        auto& e = ab.error();
        failed = true;
        err << "cdc2doris: aborting txn " << *st.txn_id << " (label " << in_use.label << ", table " << name
            << "): " << e.what() << "\n";
        return doris::WalkNext::Stop;
      }
      ++aborted;
      out << "aborted txn " << *st.txn_id << " (label " << in_use.label << ", table " << name << ")\n";
      return doris::WalkNext::Continue;
    });
    if (!r) {
      auto& e = r.error();
      err << "cdc2doris: Doris: " << e.what() << "\n";
      return kExitFatal;
    }
    if (failed) return kExitFatal;
    const auto& sum = *r;
    walked += sum.probed;
    if (sum.budget_spent)
      err << "cdc2doris: stopped walking " << name << " after " << sum.probed << " label(s), in epoch "
          << sum.last_epoch << "; run again with --from-epoch " << sum.last_epoch << "\n";
  }
  out << aborted << " lingering txn(s) of label prefix " << what.prefix << " aborted (" << walked
      << " label(s) probed from epoch " << what.from_epoch << ")\n";
  return kExitOk;
}

}  // namespace cdc2doris::daemon
