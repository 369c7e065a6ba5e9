#include <catch2/catch.hpp>

#include "core/pipeline/epoch_machine.hpp"

using namespace cdc2doris::pipeline;
using A = Action;
using E = Event;
using P = Phase;

namespace {
struct Row {
  P from;
  E event;
  P to;
  std::vector<A> actions;
};

// The full table of valid transitions; every (phase, event) pair not listed
// here must be rejected.
const std::vector<Row> kTable = {
    {P::Open, E::EndRequested, P::Finishing, {A::FinishLoads}},
    {P::Open, E::LoadFailedRetry, P::Aborting, {A::AbortTxns}},
    {P::Open, E::LoadFailedFatal, P::Failed, {A::AbortTxns, A::Stop}},
    {P::Finishing, E::LoadsPrecommitted, P::Recording, {A::WriteRecord}},
    {P::Finishing, E::LoadFailedRetry, P::Aborting, {A::AbortTxns}},
    {P::Finishing, E::LoadFailedFatal, P::Failed, {A::AbortTxns, A::Stop}},
    {P::Recording, E::RecordWritten, P::CommittingGroup, {A::CommitGroup}},
    {P::CommittingGroup, E::GroupCommitted, P::Committing, {A::CommitTxns}},
    {P::CommittingGroup, E::Fenced, P::Aborting, {A::AbortRecord, A::AbortTxns}},
    {P::CommittingGroup, E::LoadFailedFatal, P::Failed, {A::Stop}},
    {P::Recording, E::LoadFailedFatal, P::Failed, {A::AbortTxns, A::Stop}},
    {P::Committing, E::AllCommitted, P::MarkingCommitted, {A::MarkCommitted}},
    {P::Committing, E::CommitRetry, P::Committing, {A::Backoff, A::CommitTxns}},
    {P::Committing, E::TxnLost, P::Replaying, {A::ReplayLost}},
    {P::Committing, E::CommitFatal, P::Failed, {A::Stop}},
    {P::Replaying, E::LoadsPrecommitted, P::Recording, {A::WriteRecord}},
    {P::Replaying, E::LoadFailedRetry, P::Replaying, {A::Backoff, A::ReplayLost}},
    {P::Replaying, E::LoadFailedFatal, P::Failed, {A::Stop}},
    {P::MarkingCommitted, E::StateMarked, P::CommittingOffsets, {A::CommitOffsets}},
    {P::MarkingCommitted, E::LoadFailedFatal, P::Failed, {A::Stop}},
    {P::CommittingOffsets, E::OffsetsCommitted, P::Done, {}},
    {P::Aborting, E::AbortDone, P::Open, {A::Rewind, A::Backoff}},
    {P::Aborting, E::LoadFailedFatal, P::Failed, {A::Stop}},
};

const P kPhases[] = {P::Open,      P::Finishing,        P::Recording,         P::CommittingGroup, P::Committing, P::Replaying,
                     P::MarkingCommitted, P::CommittingOffsets, P::Done, P::Aborting, P::Failed};
const E kEvents[] = {E::EndRequested, E::LoadsPrecommitted, E::LoadFailedRetry, E::LoadFailedFatal,
                     E::RecordWritten, E::GroupCommitted, E::Fenced, E::CommitRetry, E::CommitFatal, E::TxnLost,
                     E::AllCommitted, E::StateMarked, E::OffsetsCommitted, E::AbortDone};
}  // namespace

TEST_CASE("epoch machine: every listed transition yields its phase and actions", "[pipeline][epoch]") {
  for (const auto& row : kTable) {
    INFO(to_string(row.from) << " --" << to_string(row.event) << "-->");
    auto t = transition(row.from, row.event);
    CHECK(t.valid);
    CHECK(t.next == row.to);
    CHECK(t.actions == row.actions);
  }
}

TEST_CASE("epoch machine: every other (phase, event) pair is rejected and changes nothing", "[pipeline][epoch]") {
  size_t rejected = 0;
  for (P p : kPhases)
    for (E e : kEvents) {
      bool listed = false;
      for (const auto& row : kTable) listed |= (row.from == p && row.event == e);
      if (listed) continue;
      INFO(to_string(p) << " --" << to_string(e) << "-->");
      auto t = transition(p, e);
      CHECK_FALSE(t.valid);
      CHECK(t.next == p);
      CHECK(t.actions.empty());
      ++rejected;
    }
  CHECK(rejected == std::size(kPhases) * std::size(kEvents) - kTable.size());
}

TEST_CASE("epoch machine: past the group commit point, an epoch is never aborted", "[pipeline][epoch]") {
  // The exactly-once argument: once the consumer group accepted the pending
  // epoch (GroupCommitted), no path leads to AbortTxns.
  for (P p : {P::Committing, P::Replaying, P::MarkingCommitted, P::CommittingOffsets})
    for (E e : kEvents) {
      auto t = transition(p, e);
      for (A a : t.actions) CHECK(a != A::AbortTxns);
      CHECK(t.next != P::Aborting);
      CHECK(t.next != P::Open);
    }
}

TEST_CASE("epoch machine: the happy path reaches Done in order", "[pipeline][epoch]") {
  P p = P::Open;
  std::vector<A> performed;
  for (E e : {E::EndRequested, E::LoadsPrecommitted, E::RecordWritten, E::GroupCommitted, E::AllCommitted,
              E::StateMarked, E::OffsetsCommitted}) {
    auto t = transition(p, e);
    REQUIRE(t.valid);
    performed.insert(performed.end(), t.actions.begin(), t.actions.end());
    p = t.next;
  }
  CHECK(p == P::Done);
  CHECK(performed ==
        std::vector<A>{A::FinishLoads, A::WriteRecord, A::CommitGroup, A::CommitTxns, A::MarkCommitted,
                       A::CommitOffsets});
}

TEST_CASE("epoch machine: a fenced member aborts its recorded epoch and re-reads", "[pipeline][epoch]") {
  P p = P::Open;
  std::vector<A> performed;
  for (E e : {E::EndRequested, E::LoadsPrecommitted, E::RecordWritten, E::Fenced, E::AbortDone}) {
    auto t = transition(p, e);
    REQUIRE(t.valid);
    performed.insert(performed.end(), t.actions.begin(), t.actions.end());
    p = t.next;
  }
  CHECK(p == P::Open);
  CHECK(performed == std::vector<A>{A::FinishLoads, A::WriteRecord, A::CommitGroup, A::AbortRecord, A::AbortTxns,
                                    A::Rewind, A::Backoff});
}
