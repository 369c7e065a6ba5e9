// `state abort-lingering`'s Doris half against the in-memory Doris: it walks
// by the rules start-up recovery walks by (core/doris/lingering_walk.hpp),
// so the operator command leaves no txn that recovery would abort (issue 32:
// it used to stop at the first unused part and after 64 parts).
#include <catch2/catch.hpp>

#include <sstream>

#include "core/doris/label.hpp"
#include "core/doris/lingering_walk.hpp"
#include "daemon/abort_lingering.hpp"
#include "daemon/exit_codes.hpp"
#include "tests/pipeline/fakes.hpp"

using namespace cdc2doris;
using cdc2doris::test::FakeDoris;
using cdc2doris::test::TxnState;

namespace {
std::string label(uint64_t epoch, uint32_t part, const std::string& table = "t0") {
  return doris::make_label("old", "db", table, epoch, part);
}
TxnState state_of(const FakeDoris& d, const std::string& l) {
  auto t = d.txn_by_label("db", l);
  REQUIRE(t);
  return t->state;
}
int run(FakeDoris& d, daemon::AbortLingering what, std::string* out_text = nullptr) {
  std::ostringstream out, err;
  const int rc = daemon::abort_lingering_txns(d, what, out, err);
  INFO(out.str() << err.str());
  if (out_text) *out_text = out.str();
  return rc;
}
// A Doris with the retired instance's two tables.
struct TwoTables {
  FakeDoris d;
  TwoTables() {
    d.add_table("db", "t0", true);
    d.add_table("db", "t1", true);
  }
};
daemon::AbortLingering retired(uint64_t from) {
  daemon::AbortLingering w;
  w.prefix = "old";
  w.from_epoch = from;
  w.tables = {{"db", "t0", ""}, {"db", "t1", ""}};
  return w;
}
}  // namespace

TEST_CASE("abort-lingering: later parts of an epoch are aborted also when part 0 never reached Doris",
          "[daemon][unit]") {
  TwoTables two;
  FakeDoris& d = two.d;
  d.seed_txn("db", "t0", label(5, 1), TxnState::Precommitted);
  d.seed_txn("db", "t0", label(5, 2), TxnState::Prepare);
  d.seed_txn("db", "t1", label(5, 0, "t1"), TxnState::Prepare);
  std::string out;
  REQUIRE(run(d, retired(5), &out) == daemon::kExitOk);
  CHECK(state_of(d, label(5, 1)) == TxnState::Aborted);
  CHECK(state_of(d, label(5, 2)) == TxnState::Aborted);
  CHECK(state_of(d, label(5, 0, "t1")) == TxnState::Aborted);
  CHECK(out.find("3 lingering txn(s) of label prefix old aborted") != std::string::npos);
}

TEST_CASE("abort-lingering: an epoch of more than 64 loads per table is walked to its end", "[daemon][unit]") {
  TwoTables two;
  FakeDoris& d = two.d;
  for (uint32_t p = 0; p < 70; ++p) d.seed_txn("db", "t0", label(2, p), TxnState::Precommitted);
  REQUIRE(run(d, retired(2)) == daemon::kExitOk);
  for (uint32_t p = 0; p < 70; ++p) CHECK(state_of(d, label(2, p)) == TxnState::Aborted);
}

TEST_CASE("abort-lingering: pending epochs are left to their owner, finished labels are walked past",
          "[daemon][unit]") {
  TwoTables two;
  FakeDoris& d = two.d;
  d.seed_txn("db", "t0", label(3, 0), TxnState::Committed);
  d.seed_txn("db", "t0", label(4, 0), TxnState::Precommitted);  // pending in the group
  d.seed_txn("db", "t0", label(5, 0), TxnState::Precommitted);
  d.seed_txn("db", "t0", label(7, 0), TxnState::Precommitted);  // after an unused epoch: never written by it
  auto what = retired(3);
  what.pending = {4};
  REQUIRE(run(d, what) == daemon::kExitOk);
  CHECK(state_of(d, label(3, 0)) == TxnState::Committed);
  CHECK(state_of(d, label(4, 0)) == TxnState::Precommitted);
  CHECK(state_of(d, label(5, 0)) == TxnState::Aborted);
  CHECK(state_of(d, label(7, 0)) == TxnState::Precommitted);
}

TEST_CASE("abort-lingering: a table Doris does not know ends its walk, other tables are still walked",
          "[daemon][unit]") {
  FakeDoris d;
  d.add_table("db", "t1", true);
  d.seed_txn("db", "t1", label(1, 0, "t1"), TxnState::Prepare);
  REQUIRE(run(d, retired(1)) == daemon::kExitOk);
  CHECK(state_of(d, label(1, 0, "t1")) == TxnState::Aborted);
}

TEST_CASE("label walk: the probe budget ends a walk and says where", "[daemon][unit]") {
  FakeDoris d;
  d.add_table("db", "t0", true);
  for (uint64_t e = 1; e <= 10; ++e) d.seed_txn("db", "t0", label(e, 0), TxnState::Committed);
  doris::LabelWalk walk;
  walk.prefix = "old";
  walk.db = "db";
  walk.table = "t0";
  walk.max_probes = 6;
  size_t seen = 0;
  auto r = doris::walk_labels(d, walk, [&](const doris::LabelInUse&) {
    ++seen;
    return doris::WalkNext::Continue;
  });
  REQUIRE(r.has_value());
  const auto& sum = *r;
  CHECK(sum.budget_spent);
  CHECK(sum.probed == 6);
  // Each epoch costs its part 0 (in use) and part 1 (unused, ends the epoch).
  CHECK(seen == 3);
  CHECK(sum.last_epoch == 4);
}
