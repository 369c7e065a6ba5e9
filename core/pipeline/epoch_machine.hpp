#pragma once
// The lifecycle of one checkpoint epoch as a pure transition function. The
// coordinator (pipeline.cpp) is the thin driver: it feeds events in, performs
// the actions that come out, and never decides on its own what comes next.
//
//            end trigger (timer, size, memory, budget, load bound, caught up, shutdown, revoke)
//   ┌──────┐ EndRequested ┌───────────┐ LoadsPrecommitted ┌───────────┐ RecordWritten ┌─────────────────┐
//   │ Open │─────────────►│ Finishing │──────────────────►│ Recording │──────────────►│ CommittingGroup │
//   └──────┘[FinishLoads] └───────────┘   [WriteRecord]   └───────────┘  [CommitGroup] └─────────────────┘
//    │  ▲                    │ LoadFailedRetry                  ▲           Fenced │          │ GroupCommitted
//    │  │ AbortDone          ▼                                  │  [AbortRecord,   │          ▼ [CommitTxns]
//    │  │ [Rewind,      ┌──────────┐                            │   AbortTxns]     │   ┌────────────┐
//    │  │  Backoff]     │ Aborting │◄───────────────────────────┼──────────────────┘   │ Committing │◄─┐
//    │  └───────────────└──────────┘                            │ LoadsPrecommitted    └────────────┘  │ CommitRetry
//    │ LoadFailedRetry       ▲                            ┌───────────┐    TxnLost     │  │  │  └─[Backoff,
//    └───[AbortTxns]─────────┘                            │ Replaying │◄───────────────┘  │  │    CommitTxns]
//                                                         └───────────┘  [ReplayLost]     │  ▼ AllCommitted
//                                                           │ LoadFailedRetry             │  [MarkCommitted]
//                                                           └─[Backoff, ReplayLost]       │
//                                   ┌──────┐  OffsetsCommitted ┌───────────────────┐ StateMarked ┌──────────────────┐
//                                   │ Done │◄──────────────────│ CommittingOffsets │◄────────────│ MarkingCommitted │
//                                   └──────┘                   └───────────────────┘[CommitOffsets]└──────────────────┘
//
// CommittingGroup is the fenced commit point of multi-instance operation:
// the epoch's start offsets and a metadata string naming it are committed to
// the consumer group with this member's generation. Fenced (the coordinator
// refused the generation: rebalanced away, a zombie after a pause) aborts the
// epoch's txns and marks the record ABORTED instead of committing them; the
// records are re-read under the next epoch number. A replayed epoch passed
// its commit point before, so its CommitGroup only confirms it.
//
// LoadFailedFatal (auth, unknown table, data quality, a bad record under the
// `fail` policy, the store failing) leads to Failed: with [AbortTxns, Stop]
// while no record exists (Open, Finishing, Recording), with [Stop] after it —
// the next start rolls the recorded epoch forward. CommitFatal likewise. Once
// the PRECOMMITTED record is synced the epoch only moves forward: commit, or
// replay what Doris lost; it is never aborted.
#include <string>
#include <vector>

namespace cdc2doris::pipeline {

enum class Phase {
  Open,               // consuming; rows stream into per-table loads
  Finishing,          // ending every load body; each becomes a PRECOMMITTED txn
  Recording,          // writing the synced PRECOMMITTED record
  CommittingGroup,    // committing start offsets + pending-epoch metadata with the member's generation
  Committing,         // 2PC commit of every txn, in parallel
  Replaying,          // re-reading the epoch's offset range for tables whose txn Doris lost
  MarkingCommitted,   // writing COMMITTED to the store
  CommittingOffsets,  // committing the end offsets to the consumer group
  Done,
  Aborting,           // aborting the epoch's open/pre-committed txns before a rewind
  Failed,             // terminal: the daemon stops
};

enum class Event {
  EndRequested,
  LoadsPrecommitted,
  LoadFailedRetry,   // retryable load/finish failure, or a bad record under a non-fatal path
  LoadFailedFatal,   // auth, unknown table, data quality, bad record under `fail`
  RecordWritten,
  GroupCommitted,    // the consumer group accepted the pending epoch (the commit point passed)
  Fenced,            // the consumer group refused this member's generation: nothing was written
  CommitRetry,       // a commit failed retryably (will be retried with backoff)
  CommitFatal,       // a commit failed fatally (e.g. auth revoked)
  TxnLost,           // Doris aborted/expired/forgot a pre-committed txn
  AllCommitted,
  StateMarked,
  OffsetsCommitted,  // also sent when the offset commit failed: Kafka offsets are advisory
  AbortDone,
};

enum class Action {
  FinishLoads,
  WriteRecord,
  CommitGroup,
  AbortRecord,
  CommitTxns,
  ReplayLost,
  MarkCommitted,
  CommitOffsets,
  AbortTxns,
  Rewind,
  Backoff,
  Stop,
};

struct Transition {
  Phase next;
  std::vector<Action> actions;
  bool valid = true;  // false: the event is impossible in this phase (a driver bug)
};

Transition transition(Phase phase, Event event);

const char* to_string(Phase p);
const char* to_string(Event e);
const char* to_string(Action a);

}  // namespace cdc2doris::pipeline
