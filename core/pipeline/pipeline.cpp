#include "core/pipeline/pipeline.hpp"

#include "core/pipeline/pipeline_impl.hpp"

namespace cdc2doris::pipeline {

const char* to_string(BadRecordPolicy p) {
  switch (p) {
    case BadRecordPolicy::Fail: return "fail";
    case BadRecordPolicy::Skip: return "skip";
    case BadRecordPolicy::DeadLetter: return "dead_letter";
  }
  return "?";
}

void Pipeline::Impl::publish_partitions() {
  for (const auto& [tp, p] : pos_) {
    PartitionStats s;
    s.position = p;
    if (auto c = committed_.find(tp); c != committed_.end()) s.committed = c->second;
    s.paused = paused_;
    deps_.metrics.set_partition(kafka::to_string(tp), s);
  }
  for (const auto& l : deps_.source.lag()) {
    PartitionStats s;
    if (auto p = pos_.find(l.tp); p != pos_.end()) s.position = p->second;
    if (auto c = committed_.find(l.tp); c != committed_.end()) s.committed = c->second;
    s.lag = l.lag.value_or(-1);
    s.paused = paused_;
    deps_.metrics.set_partition(kafka::to_string(l.tp), s);
  }
}

Pipeline::Pipeline(PipelineConfig config, decode::DecoderOptions decoder_options, Dependencies deps)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(decoder_options), deps)) {}
Pipeline::~Pipeline() = default;
RunResult Pipeline::run() { return impl_->run(); }
void Pipeline::request_stop() { impl_->request_stop(); }
bool Pipeline::stop_requested() const { return impl_->stop_requested(); }

}  // namespace cdc2doris::pipeline
