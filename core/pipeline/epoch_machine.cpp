#include "core/pipeline/epoch_machine.hpp"

namespace cdc2doris::pipeline {

Transition transition(Phase phase, Event event) {
  using A = Action;
  using E = Event;
  using P = Phase;
  switch (phase) {
    case P::Open:
      switch (event) {
        case E::EndRequested: return {P::Finishing, {A::FinishLoads}};
        case E::LoadFailedRetry: return {P::Aborting, {A::AbortTxns}};
        case E::LoadFailedFatal: return {P::Failed, {A::AbortTxns, A::Stop}};
        default: break;
      }
      break;
    case P::Finishing:
      switch (event) {
        case E::LoadsPrecommitted: return {P::Recording, {A::WriteRecord}};
        case E::LoadFailedRetry: return {P::Aborting, {A::AbortTxns}};
        case E::LoadFailedFatal: return {P::Failed, {A::AbortTxns, A::Stop}};
        default: break;
      }
      break;
    case P::Recording:
      switch (event) {
        case E::RecordWritten: return {P::CommittingGroup, {A::CommitGroup}};
        // The store failing is fatal: without the record nothing may commit.
        case E::LoadFailedFatal: return {P::Failed, {A::AbortTxns, A::Stop}};
        default: break;
      }
      break;
    case P::CommittingGroup:
      switch (event) {
        case E::GroupCommitted: return {P::Committing, {A::CommitTxns}};
        // Nothing of the epoch reached the group: nobody else may commit it.
        case E::Fenced: return {P::Aborting, {A::AbortRecord, A::AbortTxns}};
        // Undecidable (the group could not be asked): the record stays
        // PRECOMMITTED and recovery asks the group again.
        case E::LoadFailedFatal: return {P::Failed, {A::Stop}};
        default: break;
      }
      break;
    case P::Committing:
      switch (event) {
        case E::AllCommitted: return {P::MarkingCommitted, {A::MarkCommitted}};
        case E::CommitRetry: return {P::Committing, {A::Backoff, A::CommitTxns}};
        case E::TxnLost: return {P::Replaying, {A::ReplayLost}};
        case E::CommitFatal: return {P::Failed, {A::Stop}};
        default: break;
      }
      break;
    case P::Replaying:
      switch (event) {
        case E::LoadsPrecommitted: return {P::Recording, {A::WriteRecord}};
        // The record stays PRECOMMITTED: retrying the replay is the only way forward.
        case E::LoadFailedRetry: return {P::Replaying, {A::Backoff, A::ReplayLost}};
        case E::LoadFailedFatal: return {P::Failed, {A::Stop}};
        default: break;
      }
      break;
    case P::MarkingCommitted:
      switch (event) {
        case E::StateMarked: return {P::CommittingOffsets, {A::CommitOffsets}};
        case E::LoadFailedFatal: return {P::Failed, {A::Stop}};
        default: break;
      }
      break;
    case P::CommittingOffsets:
      if (event == E::OffsetsCommitted) return {P::Done, {}};
      break;
    case P::Aborting:
      if (event == E::AbortDone) return {P::Open, {A::Rewind, A::Backoff}};
      if (event == E::LoadFailedFatal) return {P::Failed, {A::Stop}};
      break;
    case P::Done:
    case P::Failed:
      break;
  }
  return {phase, {}, false};
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Open: return "open";
    case Phase::Finishing: return "finishing";
    case Phase::Recording: return "recording";
    case Phase::CommittingGroup: return "committing-group";
    case Phase::Committing: return "committing";
    case Phase::Replaying: return "replaying";
    case Phase::MarkingCommitted: return "marking-committed";
    case Phase::CommittingOffsets: return "committing-offsets";
    case Phase::Done: return "done";
    case Phase::Aborting: return "aborting";
    case Phase::Failed: return "failed";
  }
  return "?";
}

const char* to_string(Event e) {
  switch (e) {
    case Event::EndRequested: return "end-requested";
    case Event::LoadsPrecommitted: return "loads-precommitted";
    case Event::LoadFailedRetry: return "load-failed-retry";
    case Event::LoadFailedFatal: return "load-failed-fatal";
    case Event::RecordWritten: return "record-written";
    case Event::GroupCommitted: return "group-committed";
    case Event::Fenced: return "fenced";
    case Event::CommitRetry: return "commit-retry";
    case Event::CommitFatal: return "commit-fatal";
    case Event::TxnLost: return "txn-lost";
    case Event::AllCommitted: return "all-committed";
    case Event::StateMarked: return "state-marked";
    case Event::OffsetsCommitted: return "offsets-committed";
    case Event::AbortDone: return "abort-done";
  }
  return "?";
}

const char* to_string(Action a) {
  switch (a) {
    case Action::FinishLoads: return "finish-loads";
    case Action::WriteRecord: return "write-record";
    case Action::CommitGroup: return "commit-group";
    case Action::AbortRecord: return "abort-record";
    case Action::CommitTxns: return "commit-txns";
    case Action::ReplayLost: return "replay-lost";
    case Action::MarkCommitted: return "mark-committed";
    case Action::CommitOffsets: return "commit-offsets";
    case Action::AbortTxns: return "abort-txns";
    case Action::Rewind: return "rewind";
    case Action::Backoff: return "backoff";
    case Action::Stop: return "stop";
  }
  return "?";
}

}  // namespace cdc2doris::pipeline
