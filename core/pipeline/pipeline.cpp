#include "core/pipeline/pipeline.hpp"

#include "core/pipeline/pipeline_impl.hpp"

namespace cdc2doris::pipeline {

// Positions and committed offsets; the health monitor adds watermarks and lag.
void Pipeline::Impl::publish_partitions() {
  auto publish = [&](const TopicPartition& tp) {
    auto p = pos_.find(tp);
    auto c = committed_.find(tp);
    deps_.metrics.update_partition(kafka::to_string(tp), p == pos_.end() ? -1 : p->second,
                                   c == committed_.end() ? -1 : c->second, paused_);
  };
  for (const auto& [tp, p] : pos_) publish(tp);
  for (const auto& tp : deps_.source.assignment())
    if (!pos_.count(tp)) publish(tp);
}

void Pipeline::Impl::publish_state() {
  const char* phase = stop_.load()                    ? "stopping"
                      : replay_                       ? "replaying"
                      : closing_                      ? "committing"
                      : open_.phase != Phase::Open    ? to_string(open_.phase)
                      : open_.loads.empty()           ? "idle"
                                                      : "open";
  std::string key = phase;
  key += '/' + std::to_string(open_.epoch) + '/' + std::to_string(open_.loads.size());
  if (closing_) key += "/c" + std::to_string(closing_->record.epoch) + '.' + std::to_string(closing_->attempt);
  if (replay_) key += "/r" + std::to_string(replay_->record.epoch) + '.' + std::to_string(replay_->attempt);
  const auto now = Clock::now();
  if (key == published_state_ && now - last_state_publish_ < std::chrono::seconds(1)) return;
  published_state_ = std::move(key);
  last_state_publish_ = now;

  const int64_t unix_now = unix_ms();
  auto since = [&](Clock::time_point t) {
    return unix_now - std::chrono::duration_cast<std::chrono::milliseconds>(now - t).count();
  };
  EpochView open;
  open.epoch = open_.epoch;
  open.phase = to_string(open_.phase);
  open.tables = open_.loads.size();
  for (const auto& [t, tl] : open_.loads)
    for (const auto& l : tl.loads) open.rows += l.rows;
  open.since_unix_ms = since(open_.started);
  std::vector<EpochView> committing;
  if (closing_) {
    EpochView c;
    c.epoch = closing_->record.epoch;
    c.phase = to_string(closing_->phase);
    // A table may hold several txns (parts) of the epoch, adjacent in the record.
    for (size_t i = 0; i < closing_->record.txns.size(); ++i) {
      const auto& t = closing_->record.txns[i];
      if (i == 0 || t.db != closing_->record.txns[i - 1].db || t.table != closing_->record.txns[i - 1].table)
        ++c.tables;
    }
    c.since_unix_ms = since(closing_->committing_since);
    c.attempts = closing_->attempt;
    committing.push_back(std::move(c));
  }
  std::optional<EpochView> replaying;
  if (replay_) {
    EpochView r;
    r.epoch = replay_->record.epoch;
    r.phase = to_string(replay_->phase);
    r.tables = replay_->tables.size();
    for (const auto& [t, tl] : replay_->loads)
      for (const auto& l : tl.loads) r.rows += l.rows;
    r.attempts = replay_->attempt;
    replaying = std::move(r);
  }
  deps_.metrics.set_phase(phase);
  deps_.metrics.set_epoch_views(replay_ ? std::nullopt : std::optional<EpochView>(std::move(open)),
                                std::move(committing), std::move(replaying));
}

void Pipeline::Impl::preset_metric_labels() {
  const char* policy = to_string(cfg_.bad_record_policy);
  for (int c = 0; c <= static_cast<int>(decode::DecodeErrorCode::UnknownFormat); ++c)
    deps_.metrics.preset_bad_record(decode::to_string(static_cast<decode::DecodeErrorCode>(c)), policy);
  for (int k = 0; k <= static_cast<int>(doris::ErrorKind::Shutdown); ++k)
    if (static_cast<doris::ErrorKind>(k) != doris::ErrorKind::TxnGone)
      deps_.metrics.preset_doris_error(doris::to_string(static_cast<doris::ErrorKind>(k)));
}

Pipeline::Pipeline(PipelineConfig config, decode::DecoderOptions decoder_options, Dependencies deps)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(decoder_options), deps)) {}
Pipeline::~Pipeline() = default;
RunResult Pipeline::run() { return impl_->run(); }
void Pipeline::request_stop() { impl_->request_stop(); }
bool Pipeline::stop_requested() const { return impl_->stop_requested(); }

}  // namespace cdc2doris::pipeline
