// Failures: aborting loads, rewinding to the last recorded epoch, backoff.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <variant>

namespace cdc2doris::pipeline {

namespace {
constexpr int kSeekAttempts = 5;
}  // namespace

void Pipeline::Impl::fail(const Error& error, const std::string& reason) {
  // Kafka is the replay buffer: abort what Doris holds for the epoch, rewind
  // to the end of the last recorded epoch and go on after a backoff.
  log_->warn("epoch {}: {} failed: {}", replay_ ? replay_->record.epoch : open_.epoch, reason, error.what());
  failure_ = error;
  failure_reason_ = reason;
  // Doris lookups a load needs count as failed loads for /readyz.
  if (reason == "schema lookup" || reason == "table properties lookup") {
    deps_.metrics.load_failed(error.what());
    deps_.metrics.note_error(reason, error.what());
  } else if (reason != "load") {  // load errors were noted where they happened
    deps_.metrics.note_error(reason, error.what());
  }
  const Event ev = error.disposition() == Disposition::Retry ? Event::LoadFailedRetry : Event::LoadFailedFatal;
  if (replay_) {
    abort_loads(replay_->loads);
    step(Who::Replay, ev);
  } else {
    step(Who::Open, ev);
  }
}

void Pipeline::Impl::abort_loads(LoadMap& loads) {
  for (auto& [target, tl] : loads)
    for (auto& load : tl.loads) {
      if (load.skip) continue;  // a committed part (replay): its label is not ours to abort
      if (load.stream) load.stream->cancel();
      // Best effort: what cannot be aborted now is found by the label probe at
      // the next start or by the label-conflict handling when this epoch number
      // is used again.
      auto r = deps_.doris.abort_by_label(target.db, load.spec.label);
      if (!r)
        log_->warn("aborting label {} failed: {}", load.spec.label, r.error().what());
    }
  loads.clear();
}

void Pipeline::Impl::abort_open_epoch_for_replay() {
  if (!open_.loads.empty()) ++deps_.metrics.epochs_aborted;
  abort_loads(open_.loads);
  open_.phase = Phase::Open;
  open_.end_requested = false;
  open_.started = Clock::now();
  ++rewind_generation_;
}

void Pipeline::Impl::abort_open_epoch_stopping() {
  failure_ = Error(Disposition::Retry, "stopping: the previous epoch did not commit before the shutdown deadline");
  failure_reason_ = "stopping";
  step(Who::Open, Event::LoadFailedRetry);
}

void Pipeline::Impl::rewind(const std::string& reason) {
  deps_.metrics.add_rewind(reason);
  open_.end_requested = false;
  open_.started = Clock::now();
  ++rewind_generation_;
  if (fenced_wait_until_) {
    // The positions go back now (what the epoch covers is empty again); the
    // seeks follow once the group has rebalanced (end_fenced_wait_if_due).
    for (const auto& tp : deps_.source.assignment()) {
      if (auto b = base_.find(tp); b != base_.end()) pos_[tp] = b->second;
      else erase_position(tp, /*with_base=*/false);
    }
    current_pos_ = current_base_ = nullptr;
    return;
  }
  seek_to_epoch_starts(reason);
}

void Pipeline::Impl::seek_to_epoch_starts(const std::string& reason) {
  for (const auto& tp : deps_.source.assignment()) {
    auto b = base_.find(tp);
    if (b == base_.end()) {
      // Nothing recorded covers it: restart it where the group says.
      erase_position(tp, /*with_base=*/false);
      continue;
    }
    // The consumer keeps fetching where it was when a seek fails: going on
    // would skip the records between the rewind target and there (issue 31).
    // A retryable failure is retried; one that persists stops the run
    // (exit 4) and the next start re-reads from the recorded state.
    auto err = retry_blocking(
        RetryPolicy{backoff_, kSeekAttempts, {}, Disposition::Fail},
        retry_hooks([&](const Error& e, int) { log_->warn("{}; will retry", e.what()); }),
        [&](int) -> std::optional<Error> {
          auto failed = deps_.source.seek(tp, b->second, std::chrono::seconds(10));
          if (!failed) return std::nullopt;
          ErrorContext ctx = failed->context();
          ctx.topic = tp.topic;
          ctx.partition = tp.partition;
          ctx.offset = b->second;
          return Error(failed->disposition(),
                       "rewind (" + reason + "): seek " + kafka::to_string(tp) + " to " +
                           std::to_string(b->second) + " failed: " + failed->what(),
                       ctx);
        });
    if (err)
      throw FatalStop{Error(err->disposition() == Disposition::Fatal ? Disposition::Fatal : Disposition::Retry,
                            err->what(), err->context())};
    pos_[tp] = b->second;
  }
  current_pos_ = current_base_ = nullptr;
}

bool Pipeline::Impl::end_fenced_wait_if_due() {
  if (!fenced_wait_until_) return false;
  const bool waited_out = Clock::now() >= *fenced_wait_until_;
  if (!rebalanced_since_fence_ && !waited_out) return true;
  fenced_wait_until_.reset();
  if (rebalanced_since_fence_) log_->info("the consumer group rebalanced after the fenced commit point: rewinding");
  else log_->warn("no rebalance came within {} s of the fenced commit point: rewinding the partitions this member "
                  "still holds", std::chrono::duration_cast<std::chrono::seconds>(kFencedWaitFor).count());
  ++rewind_generation_;
  seek_to_epoch_starts("fenced");
  return true;
}

void Pipeline::Impl::sleep_backoff(int attempt) {
  sleep_in_slices(backoff_.delay(attempt), stop_, [this] { deps_.metrics.beat(); });
}

RetryHooks Pipeline::Impl::retry_hooks(std::function<void(const Error&, int)> on_retry,
                                       std::function<bool()> stopped) {
  if (!stopped) stopped = [this] { return stop_.load(); };
  return RetryHooks{std::move(stopped),
                    [this](std::chrono::milliseconds d) { sleep_in_slices(d, stop_, [this] { deps_.metrics.beat(); }); },
                    std::move(on_retry)};
}

}  // namespace cdc2doris::pipeline
