// Source over librdkafka's high-level consumer (C API).
#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/common/thread_name.hpp"
#include "core/kafka/errors.hpp"
#include "core/kafka/rdkafka_util.hpp"
#include "core/kafka/source.hpp"

namespace cdc2doris::kafka {

namespace rk {
void log_cb(const rd_kafka_t* h, int level, const char* fac, const char* buf) {
  // syslog levels: 0..3 error, 4 warning, 5..6 info, 7 debug.
  auto lvl = level <= 3 ? spdlog::level::err
             : level == 4 ? spdlog::level::warn
             : level <= 6 ? spdlog::level::info
                          : spdlog::level::debug;
  spdlog::log(lvl, "librdkafka: name={} facility={} message={}", rd_kafka_name(h), fac, buf);
}
}  // namespace rk

namespace {

using Clock = std::chrono::steady_clock;

int to_ms(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<int64_t>(d.count(), 0, std::numeric_limits<int>::max()));
}

ErrorContext tp_context(const TopicPartition& tp) {
  ErrorContext c;
  c.topic = tp.topic;
  c.partition = tp.partition;
  return c;
}

// Keeps librdkafka messages alive for the views in a MessageBatch. The
// counter lets close() wait until the pipeline released every batch, because
// rd_kafka_destroy() must not run while messages are outstanding.
class RdMessages final : public MessageBatch::Owner {
 public:
  RdMessages(std::vector<rd_kafka_message_t*> msgs, std::shared_ptr<std::atomic<int64_t>> outstanding)
      : msgs_(std::move(msgs)), outstanding_(std::move(outstanding)) {
    outstanding_->fetch_add(1);
  }
  ~RdMessages() override {
    for (auto* m : msgs_) rd_kafka_message_destroy(m);
    outstanding_->fetch_sub(1);
  }

 private:
  std::vector<rd_kafka_message_t*> msgs_;
  std::shared_ptr<std::atomic<int64_t>> outstanding_;
};

class KafkaSource final : public Source {
 public:
  explicit KafkaSource(SourceConfig cfg) : topics_(std::move(cfg.topics)), read_headers_(cfg.read_headers) {
    if (topics_.empty()) throw std::invalid_argument("Kafka source: no topics configured");
    auto& props = cfg.properties;
    for (const char* forced : {"enable.auto.commit", "enable.auto.offset.store"}) {
      auto it = props.find(forced);
      if (it != props.end() && it->second != "false") {
        throw std::invalid_argument(std::string("Kafka property ") + forced +
                                    " must be false: offsets are committed only after the epoch is in Doris");
      }
      props[forced] = "false";
    }
    if (!props.contains("group.id")) throw std::invalid_argument("Kafka property group.id is required");
    props.try_emplace("partition.assignment.strategy", "cooperative-sticky");
    // Where a partition nobody has an offset for starts is the user's
    // auto.offset.reset (default earliest), applied in on_rebalance; for
    // librdkafka itself it is "error", so a next offset that retention
    // deleted is reported instead of silently reset (issue 31).
    {
      const std::string reset = props.try_emplace("auto.offset.reset", "earliest").first->second;
      if (reset == "smallest" || reset == "earliest" || reset == "beginning") initial_offset_ = RD_KAFKA_OFFSET_BEGINNING;
      else if (reset == "largest" || reset == "latest" || reset == "end") initial_offset_ = RD_KAFKA_OFFSET_END;
      else initial_offset_ = RD_KAFKA_OFFSET_INVALID;  // "error" (or a bad value librdkafka refuses below)
      if (initial_offset_ != RD_KAFKA_OFFSET_INVALID) props["auto.offset.reset"] = "error";
    }
    skip_offset_gaps_ = cfg.skip_offset_gaps;
    // librdkafka 2.0 stops fetching for up to a second once the consumer
    // queue holds queued.max.messages.kbytes or queued.min.messages (100,000
    // by default; fetch.queue.backoff.ms, 2.1+, made that tunable). The
    // prefetch is bounded by bytes alone. A fetch response is received into
    // one buffer of its size; at the default fetch.max.bytes (50 MB, ~32 MB
    // with 32 partitions) that is above glibc's largest mmap threshold, so
    // every response was a fresh mmap, page-faulted and zeroed page by page
    // (~20% of the daemon's CPU with 4.5 KB records). 8 MiB responses are
    // reused from the heap. With the backlog waker (below) 32 MiB catches
    // up as fast as 48 MiB, on 4.3 KB schema-envelope records too, at ~25 MiB
    // less peak RSS; below 32 MiB the schema stream slows down
    // (bench/results/2026-12-02-c0019f9a7a-memory.md; docs/kafka-source.md).
    props.try_emplace("queued.max.messages.kbytes", "32768");
    props.try_emplace("queued.min.messages", "10000000");
    props.try_emplace("fetch.max.bytes", "8388608");
    cooperative_configured_ = props["partition.assignment.strategy"].find("cooperative-sticky") != std::string::npos;
    spdlog::info("Kafka source config: topics={} properties={}", fmt_topics(), fmt_props(redact(props)));

    // The replay's range reader (read_range): assign() only, so it never
    // joins the group (librdkafka's assign() still wants a group.id: the
    // group's, which the ACLs already allow); no static id, no cooperative
    // strategy (librdkafka#4312); a range retention deleted is an error,
    // never a silent jump to the log start.
    security_ = SecuritySettings::of(props);
    reader_props_ = props;
    for (const char* k : {"group.instance.id", "partition.assignment.strategy"}) reader_props_.erase(k);
    reader_props_["auto.offset.reset"] = "error";
    reader_props_["enable.partition.eof"] = "true";
    rk::Conf conf = rk::make_conf(props);
    rd_kafka_conf_set_opaque(conf.get(), this);
    rd_kafka_conf_set_rebalance_cb(conf.get(), &KafkaSource::rebalance_trampoline);
    rd_kafka_conf_set_error_cb(conf.get(), &KafkaSource::error_trampoline);
    rd_kafka_conf_set_log_cb(conf.get(), &rk::log_cb);
    char errstr[512];
    rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr, sizeof errstr);
    if (rk_ == nullptr) throw std::invalid_argument(std::string("Kafka consumer: ") + errstr);
    conf.release();  // owned by rk_ now
    // Errors and logs are served by consumer_poll on the poll thread, so the
    // callbacks need no locking.
    rd_kafka_poll_set_consumer(rk_);
  }

  ~KafkaSource() override {
    if (rk_ != nullptr) {
      if (auto e = close(std::chrono::seconds(10))) spdlog::warn("Kafka source close: {}", e->what());
    }
  }

  void subscribe(RebalanceListener& listener) override {
    listener_ = &listener;
    rk::List l(rd_kafka_topic_partition_list_new(static_cast<int>(topics_.size())));
    for (const auto& t : topics_) rd_kafka_topic_partition_list_add(l.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(handle(), l.get());
    if (err) throw std::runtime_error(make_error(err, "subscribe to " + fmt_topics()).what());
  }

  PollResult poll(std::chrono::milliseconds timeout, size_t max_messages) override {
    PollResult out;
    if (rk_ == nullptr) {
      out.errors.emplace_back(Disposition::Fatal, "Kafka source is closed");
      return out;
    }
    in_poll_ = true;
    pending_.clear();
    int wait_ms = to_ms(timeout);
    while (pending_.size() < max_messages) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, wait_ms);
      wait_ms = 0;  // after the first record take only what is already fetched
      if (m == nullptr) break;
      if (m->err) {
        handle_message_error(m);
        rd_kafka_message_destroy(m);
        continue;
      }
      pending_.push_back(m);
    }
    in_poll_ = false;
    out.offset_gaps_skipped = std::move(gaps_skipped_);
    gaps_skipped_.clear();
    if (pending_.size() >= max_messages / 2) note_backlog(pending_);
    out.batch = make_batch(std::move(pending_));
    pending_ = {};
    out.errors = std::move(errors_);
    out.transient = std::move(transient_);
    errors_.clear();
    transient_.clear();
    return out;
  }

  bool can_read_range() const override { return true; }

  std::optional<Error> read_range(const Ranges& ranges, const std::function<void(const Message&)>& fn,
                                  std::chrono::milliseconds timeout) override {
    Ranges unread;
    for (const auto& [tp, r] : ranges)
      if (r.second > r.first) unread[tp] = r;
    if (unread.empty()) return std::nullopt;
    rk::Conf conf = rk::make_conf(reader_props_);
    rd_kafka_conf_set_log_cb(conf.get(), &rk::log_cb);
    char errstr[512];
    rd_kafka_t* h = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr, sizeof errstr);
    if (h == nullptr) return Error(Disposition::Retry, std::string("Kafka range reader: ") + errstr);
    conf.release();
    // Every message is destroyed before the handle (a batch lives for one record).
    std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> handle(h, [](rd_kafka_t* k) {
      rd_kafka_consumer_close(k);
      rd_kafka_destroy(k);
    });
    rd_kafka_poll_set_consumer(h);
    {
      std::vector<TopicPartition> tps;
      for (const auto& [tp, r] : unread) tps.push_back(tp);
      rk::List l = rk::make_list(tps);
      for (int i = 0; i < l->cnt; ++i) l->elems[i].offset = unread.at(tps[static_cast<size_t>(i)]).first;
      if (rd_kafka_resp_err_t err = rd_kafka_assign(h, l.get())) return make_error(err, "range reader: assign");
    }
    const auto deadline = Clock::now() + timeout;
    while (!unread.empty()) {
      if (Clock::now() >= deadline) {
        std::string left;
        for (const auto& [tp, r] : unread) left += (left.empty() ? "" : ", ") + to_string(tp) + " up to " + std::to_string(r.second);
        return Error(Disposition::Retry, "reading the replayed range timed out; not read: " + left);
      }
      rd_kafka_message_t* m = rd_kafka_consumer_poll(h, 100);
      if (m == nullptr) continue;
      const TopicPartition tp{m->rkt != nullptr ? rd_kafka_topic_name(m->rkt) : "", m->partition};
      auto it = unread.find(tp);
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        // The log ends before the range does: its last records are gone
        // (compaction, aborted transactions); nothing more will come.
        if (it != unread.end() && m->offset >= it->second.second) unread.erase(it);
        rd_kafka_message_destroy(m);
        continue;
      }
      if (m->err) {
        ErrorContext ctx = tp_context(tp);
        ctx.offset = m->offset;
        const rd_kafka_resp_err_t code = m->err;
        rd_kafka_message_destroy(m);
        if (code == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET || code == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE)
          return Error(Disposition::Fatal,
                       "records of a replayed epoch's range of " + to_string(tp) +
                           " are gone from Kafka (retention deleted them): the epoch cannot be replayed",
                       ctx);
        const ErrorClass c = classify(code);
        if (c == ErrorClass::Fatal || c == ErrorClass::Retry) return make_error(code, "range reader", ctx);
        continue;  // librdkafka recovers by itself; the deadline bounds it
      }
      if (it == unread.end() || m->offset >= it->second.second) {
        if (it != unread.end()) unread.erase(it);
        rd_kafka_message_destroy(m);
        continue;
      }
      if (m->offset + 1 >= it->second.second) unread.erase(it);
      MessageBatch one = make_batch({m});
      fn(one[0]);
    }
    return std::nullopt;
  }

  std::optional<Error> seek(const TopicPartition& tp, int64_t offset, std::chrono::milliseconds timeout) override {
    if (rk_ == nullptr) return closed_error();
    rk::List l = rk::make_list({tp});
    l->elems[0].offset = offset;
    rk::ErrorPtr e(rd_kafka_seek_partitions(rk_, l.get(), to_ms(timeout)));
    ErrorContext ctx = tp_context(tp);
    ctx.offset = offset;
    if (e) return make_error(rd_kafka_error_code(e.get()), "seek", ctx);
    if (l->elems[0].err) return make_error(l->elems[0].err, "seek", ctx);
    return std::nullopt;
  }

  std::optional<Error> pause(const std::vector<TopicPartition>& tps) override {
    return pause_resume(tps, true);
  }
  std::optional<Error> resume(const std::vector<TopicPartition>& tps) override {
    return pause_resume(tps, false);
  }

  std::optional<Error> commit(const OffsetMap& offsets, const std::string& metadata) override {
    if (rk_ == nullptr) return closed_error();
    if (offsets.empty()) return std::nullopt;
    rk::List l(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
    for (const auto& [tp, off] : offsets) {
      auto* e = rd_kafka_topic_partition_list_add(l.get(), tp.topic.c_str(), tp.partition);
      e->offset = off;
      if (!metadata.empty()) {
        // librdkafka frees metadata with the list, so it needs its own copy.
        e->metadata = std::malloc(metadata.size());
        std::memcpy(e->metadata, metadata.data(), metadata.size());
        e->metadata_size = metadata.size();
      }
    }
    rd_kafka_resp_err_t err = rd_kafka_commit(rk_, l.get(), 0);
    if (err) return make_error(err, "commit offsets");
    for (int i = 0; i < l->cnt; ++i) {
      if (l->elems[i].err) {
        return make_error(l->elems[i].err, "commit offsets",
                          tp_context(TopicPartition{l->elems[i].topic, l->elems[i].partition}));
      }
    }
    return std::nullopt;
  }

  CommitResult commit_group(const GroupOffsetMap& offsets) override {
    if (rk_ == nullptr) return {CommitStatus::Failed, closed_error()};
    if (offsets.empty()) return {};
    rk::List l(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
    for (const auto& [tp, go] : offsets) {
      auto* e = rd_kafka_topic_partition_list_add(l.get(), tp.topic.c_str(), tp.partition);
      e->offset = go.offset;
      if (!go.metadata.empty()) {
        // librdkafka frees metadata with the list, so it needs its own copy.
        e->metadata = std::malloc(go.metadata.size());
        std::memcpy(e->metadata, go.metadata.data(), go.metadata.size());
        e->metadata_size = go.metadata.size();
      }
    }
    // One OffsetCommit request carrying this member's generation id and
    // member id: the coordinator checks them for the whole request.
    rd_kafka_resp_err_t err = rd_kafka_commit(rk_, l.get(), 0);
    ErrorContext ctx;
    for (int i = 0; err == RD_KAFKA_RESP_ERR_NO_ERROR && i < l->cnt; ++i) {
      if (l->elems[i].err) {
        err = l->elems[i].err;
        ctx = tp_context(TopicPartition{l->elems[i].topic, l->elems[i].partition});
      }
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return {};
    const bool fenced = err == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION || err == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID ||
                        err == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID || err == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS;
    // Too large for the broker: metadata over offset.metadata.max.bytes
    // (per partition), or the __consumer_offsets batch over its
    // message.max.bytes (the coordinator answers INVALID_COMMIT_OFFSET_SIZE
    // for RECORD_LIST_TOO_LARGE / MESSAGE_TOO_LARGE, apache/kafka
    // GroupMetadataManager / CoordinatorRuntime). Not a fence, and the same
    // request fails again: Fatal.
    const bool too_large = err == RD_KAFKA_RESP_ERR_OFFSET_METADATA_TOO_LARGE ||
                           err == RD_KAFKA_RESP_ERR_INVALID_COMMIT_OFFSET_SIZE ||
                           err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE || err == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE;
    Error e = make_error(err, "commit offsets with generation", ctx);
    return {fenced ? CommitStatus::Fenced : CommitStatus::Failed,
            Error(too_large ? Disposition::Fatal : Disposition::Retry, e.what(), e.context())};
  }

  std::variant<GroupOffsetMap, Error> committed_group(const std::vector<TopicPartition>& tps,
                                                      std::chrono::milliseconds timeout) override {
    if (rk_ == nullptr) return *closed_error();
    return rk::read_committed(rk_, tps, timeout, rk::PartitionErrors::Fail);
  }

  std::variant<OffsetMap, Error> committed(const std::vector<TopicPartition>& tps,
                                           std::chrono::milliseconds timeout) override {
    return offsets_only(committed_group(tps, timeout));
  }


  std::variant<WatermarkMap, Error> watermarks(const std::vector<TopicPartition>& tps,
                                               std::chrono::milliseconds timeout) override {
    if (rk_ == nullptr) return *closed_error();
    WatermarkMap out;
    for (const auto& tp : tps) {
      int64_t low = 0, high = 0;
      rd_kafka_resp_err_t err =
          rd_kafka_query_watermark_offsets(rk_, tp.topic.c_str(), tp.partition, &low, &high, to_ms(timeout));
      if (err) return make_error(err, "query watermarks", tp_context(tp));
      out[tp] = {low, high};
    }
    return out;
  }

  std::vector<TopicPartition> assignment() override {
    if (rk_ == nullptr) return {};
    rd_kafka_topic_partition_list_t* raw = nullptr;
    if (rd_kafka_assignment(rk_, &raw) != RD_KAFKA_RESP_ERR_NO_ERROR) return {};
    rk::List l(raw);
    auto v = rk::to_vector(l.get());
    std::sort(v.begin(), v.end());
    return v;
  }

  std::vector<PartitionLag> lag() override {
    std::vector<PartitionLag> out;
    rd_kafka_t* h = rk_;
    if (h == nullptr) return out;
    rd_kafka_topic_partition_list_t* raw = nullptr;
    if (rd_kafka_assignment(h, &raw) != RD_KAFKA_RESP_ERR_NO_ERROR) return out;
    rk::List l(raw);
    rd_kafka_position(h, l.get());
    for (int i = 0; i < l->cnt; ++i) {
      const auto& e = l->elems[i];
      PartitionLag pl;
      pl.tp = TopicPartition{e.topic, e.partition};
      if (e.offset >= 0) pl.position = e.offset;
      int64_t low = -1, high = -1;
      // Cached from fetch responses: no broker round trip on a metrics scrape.
      if (rd_kafka_get_watermark_offsets(h, e.topic, e.partition, &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR &&
          high >= 0) {
        pl.high_watermark = high;
      }
      if (pl.position && pl.high_watermark) pl.lag = std::max<int64_t>(0, *pl.high_watermark - *pl.position);
      out.push_back(std::move(pl));
    }
    std::sort(out.begin(), out.end(), [](const PartitionLag& a, const PartitionLag& b) { return a.tp < b.tp; });
    return out;
  }

  std::optional<Error> close(std::chrono::milliseconds timeout) override {
    if (rk_ == nullptr) return std::nullopt;
    stop_waker();
    auto deadline = Clock::now() + timeout;
    std::optional<Error> result;
    // rd_kafka_destroy() must not run while the pipeline still holds messages.
    while (outstanding_->load() > 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (outstanding_->load() > 0) {
      result = Error(Disposition::Retry, "Kafka source close: message batches still held at the deadline");
    }

    bool closed = false;
    if (!result) {
      // The asynchronous close lets us bound the wait: the group leave and the
      // final revoke (served here, so on_revoke runs on this thread) may hang
      // on an unreachable coordinator.
      rd_kafka_queue_t* q = rd_kafka_queue_new(rk_);
      rk::ErrorPtr e(rd_kafka_consumer_close_queue(rk_, q));
      if (e) {
        result = Error(Disposition::Retry, std::string("Kafka source close: ") + rd_kafka_error_string(e.get()));
      } else {
        while (!(closed = rd_kafka_consumer_closed(rk_)) && Clock::now() < deadline) {
          rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 50);
          if (ev != nullptr) {
            handle_close_event(ev);
            rd_kafka_event_destroy(ev);
          }
        }
        if (!closed) {
          result = Error(Disposition::Retry, "Kafka source close timed out after " +
                                                 std::to_string(timeout.count()) +
                                                 " ms; the group reassigns the partitions after session.timeout.ms");
        }
      }
      rd_kafka_queue_destroy(q);
    }
    if (!result && !errors_.empty()) result = errors_.front();
    if (!assigned_once_ && cooperative_configured_) {
      // librdkafka < 2.3 aborts in rd_kafka_destroy() when a cooperative-sticky
      // consumer never received an assignment (confluentinc/librdkafka#4312,
      // Debian 12 ships 2.0.2). The consumer is closed already; only memory
      // and idle threads remain, and this happens at shutdown.
      spdlog::warn("Kafka source: not destroying a consumer that was never assigned (librdkafka#4312)");
#if defined(__SANITIZE_ADDRESS__)
      // Deliberate: LeakSanitizer would otherwise fail every asan run that
      // stops before an assignment; other leaks are still reported.
      __lsan_ignore_object(rk_);
#endif
    } else if (outstanding_->load() == 0) {
      rd_kafka_destroy_flags(rk_, closed ? 0 : RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    } else {
      // Destroying under live messages would hang or crash; leaking the handle
      // at shutdown is the lesser evil.
      spdlog::error("Kafka source: leaking the consumer handle, {} batches still held", outstanding_->load());
    }
    rk_ = nullptr;
    return result;
  }

 private:
  rd_kafka_t* handle() {
    if (rk_ == nullptr) throw std::logic_error("Kafka source is closed");
    return rk_;
  }

  static std::optional<Error> closed_error() { return Error(Disposition::Fatal, "Kafka source is closed"); }

  std::string fmt_topics() const {
    std::string s;
    for (const auto& t : topics_) s += (s.empty() ? "" : ",") + t;
    return s;
  }
  static std::string fmt_props(const std::map<std::string, std::string>& p) {
    std::string s;
    for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + v;
    return s;
  }

  std::optional<Error> pause_resume(const std::vector<TopicPartition>& tps, bool pause) {
    if (rk_ == nullptr) return closed_error();
    if (tps.empty()) return std::nullopt;
    rk::List l = rk::make_list(tps);
    rd_kafka_resp_err_t err = pause ? rd_kafka_pause_partitions(rk_, l.get()) : rd_kafka_resume_partitions(rk_, l.get());
    const char* what = pause ? "pause" : "resume";
    if (err) return make_error(err, what);
    for (int i = 0; i < l->cnt; ++i) {
      if (l->elems[i].err) {
        return make_error(l->elems[i].err, what, tp_context(TopicPartition{l->elems[i].topic, l->elems[i].partition}));
      }
    }
    return std::nullopt;
  }

  void record(Error e, ErrorClass c) {
    if (c == ErrorClass::Transient) {
      spdlog::warn("Kafka source: {}", e.what());
      transient_.push_back(std::move(e));
    } else {
      spdlog::error("Kafka source: {}", e.what());
      errors_.push_back(std::move(e));
    }
  }

  static std::string fenced_instance_hint(rd_kafka_resp_err_t code) {
    if (code != RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID) return {};
    return " (another live cdc2doris instance joined the consumer group with the same instance_id "
           "(group.instance.id); each live instance needs its own kafka.instance_id)";
  }

  void handle_message_error(const rd_kafka_message_t* m) {
    if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET && m->rkt != nullptr) {
      offset_reset(TopicPartition{rd_kafka_topic_name(m->rkt), m->partition}, m->offset, rd_kafka_message_errstr(m));
      return;
    }
    std::string detail = rd_kafka_message_errstr(m);
    ErrorClass c = classify(m->err, detail);
    if (c == ErrorClass::Ignore) return;
    if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
      char buf[512];
      const rd_kafka_resp_err_t code = rd_kafka_fatal_error(rk_, buf, sizeof buf);
      record(Error(Disposition::Fatal, std::string("Kafka: fatal consumer error: ") + rd_kafka_err2name(code) + ": " +
                                           buf + fenced_instance_hint(code)),
             ErrorClass::Fatal);
      return;
    }
    ErrorContext ctx;
    if (m->rkt != nullptr) {
      ctx.topic = rd_kafka_topic_name(m->rkt);
      ctx.partition = m->partition;
      if (m->offset >= 0) ctx.offset = m->offset;
    }
    record(make_error(m->err, "consume (" + detail + ")", std::move(ctx), &security_), c);
  }

  // librdkafka (auto.offset.reset=error) could not fetch `offset`: it is out
  // of the partition's range. Below the log start it was deleted; above the
  // high watermark the topic was re-created (or truncated) under us.
  void offset_reset(const TopicPartition& tp, int64_t offset, const std::string& why) {
    int64_t low = -1, high = -1;
    rd_kafka_query_watermark_offsets(rk_, tp.topic.c_str(), tp.partition, &low, &high, 5000);
    ErrorContext ctx = tp_context(tp);
    if (offset >= 0) ctx.offset = offset;
    if (skip_offset_gaps_ && low >= 0 && offset >= 0 && offset < low) {
      spdlog::warn("Kafka source: {}: offset {} was deleted (log start {}): continuing at the log start "
                   "(kafka.on_offset_gap: skip), records {}..{} are not loaded",
                   to_string(tp), offset, low, offset, low - 1);
      rk::List l = rk::make_list({tp});
      l->elems[0].offset = low;
      rk::ErrorPtr e(rd_kafka_seek_partitions(rk_, l.get(), 5000));
      if (e || l->elems[0].err)
        record(make_error(e ? rd_kafka_error_code(e.get()) : l->elems[0].err, "seek to the log start", ctx),
               ErrorClass::Fatal);
      else
        gaps_skipped_.push_back(tp);
      return;
    }
    std::string what = low >= 0 && offset >= 0 && offset < low
                           ? offset_gap_message(tp, offset, low)
                           : "Kafka: " + to_string(tp) + ": offset " + std::to_string(offset) +
                                 " is out of the partition's range (log start " + std::to_string(low) +
                                 ", high watermark " + std::to_string(high) + "; " + why +
                                 "): the topic was deleted and re-created, or truncated; restart to re-check";
    spdlog::error("Kafka source: {}", what);
    errors_.emplace_back(Disposition::Fatal, what, ctx);
  }

  static void error_trampoline(rd_kafka_t* h, int err, const char* reason, void* opaque) {
    auto* self = static_cast<KafkaSource*>(opaque);
    auto code = static_cast<rd_kafka_resp_err_t>(err);
    std::string why = reason;
    if (code == RD_KAFKA_RESP_ERR__FATAL) {
      char buf[512];
      code = rd_kafka_fatal_error(h, buf, sizeof buf);
      why = buf;
      why += fenced_instance_hint(code);
      self->record(Error(Disposition::Fatal, std::string("Kafka: fatal consumer error: ") + rd_kafka_err2name(code) +
                                                 ": " + why),
                   ErrorClass::Fatal);
      return;
    }
    ErrorClass c = classify(code, why);
    if (c == ErrorClass::Ignore) return;
    self->record(make_error(code, why, {}, &self->security_), c);
  }

  static void rebalance_trampoline(rd_kafka_t* h, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                                   void* opaque) {
    static_cast<KafkaSource*>(opaque)->on_rebalance(h, err, parts);
  }

  void on_rebalance(rd_kafka_t* h, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts) {
    bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(h), "COOPERATIVE") == 0;
    auto tps = rk::to_vector(parts);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      assigned_once_ = true;
      OffsetMap starts;
      bool listener_failed = false;
      try {
        // Cooperative rebalances call back with empty lists; the pipeline
        // only hears about real changes.
        if (listener_ != nullptr && !tps.empty()) starts = listener_->on_assign(tps);
      } catch (const std::exception& ex) {
        listener_failed = true;
        record(Error(Disposition::Fatal, std::string("rebalance listener failed on assign: ") + ex.what()),
               ErrorClass::Fatal);
      }
      std::vector<TopicPartition> left_out;
      for (int i = 0; i < parts->cnt; ++i) {
        auto& e = parts->elems[i];
        auto it = starts.find(TopicPartition{e.topic, e.partition});
        // INVALID = the group's committed offset, else auto.offset.reset.
        e.offset = it != starts.end() ? it->second : RD_KAFKA_OFFSET_INVALID;
        if (it == starts.end()) left_out.push_back(TopicPartition{e.topic, e.partition});
      }
      start_left_out(parts, left_out);
      spdlog::info("Kafka source: assigned partitions={} protocol={}", fmt_list(parts),
                   cooperative ? "cooperative" : "eager");
      assign(h, parts, cooperative, true);
      // Without the pipeline's offsets nothing may be consumed; the Fatal
      // error above stops the pipeline.
      if (listener_failed) rd_kafka_pause_partitions(h, parts);
      if (listener_ != nullptr) listener_->on_rebalance();
    } else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
      bool lost = rd_kafka_assignment_lost(h) != 0;
      std::set<TopicPartition> gone(tps.begin(), tps.end());
      drop_pending(gone);
      spdlog::info("Kafka source: revoking partitions={} lost={}", fmt_list(parts), lost);
      try {
        if (listener_ != nullptr && !tps.empty()) listener_->on_revoke(tps, lost);
      } catch (const std::exception& ex) {
        record(Error(Disposition::Fatal, std::string("rebalance listener failed on revoke: ") + ex.what()),
               ErrorClass::Fatal);
      }
      assign(h, parts, cooperative, false);
      if (listener_ != nullptr) listener_->on_rebalance();
    } else {
      record(make_error(err, "rebalance"), ErrorClass::Retry);
      assign(h, nullptr, false, false);
    }
  }

  // librdkafka's own reset is "error" (see the constructor): a partition
  // without a start from the listener starts at the group's committed
  // offset, and one the group has none for at the configured reset.
  void start_left_out(rd_kafka_topic_partition_list_t* parts, const std::vector<TopicPartition>& left_out) {
    if (left_out.empty() || initial_offset_ == RD_KAFKA_OFFSET_INVALID) return;
    auto got = rk::read_committed(rk_, left_out, std::chrono::seconds(10), rk::PartitionErrors::Fail);
    const auto* group = std::get_if<GroupOffsetMap>(&got);
    if (group == nullptr) {
      record(Error(Disposition::Retry, std::string("reading the group's offsets of newly assigned partitions: ") +
                                           std::get<Error>(got).what()),
             ErrorClass::Retry);
      return;  // left at INVALID: a partition without a group offset fails loudly
    }
    for (int i = 0; i < parts->cnt; ++i) {
      auto& e = parts->elems[i];
      if (e.offset != RD_KAFKA_OFFSET_INVALID) continue;
      auto g = group->find(TopicPartition{e.topic, e.partition});
      e.offset = g != group->end() ? g->second.offset : initial_offset_;
    }
  }

  void assign(rd_kafka_t* h, rd_kafka_topic_partition_list_t* parts, bool cooperative, bool add) {
    if (cooperative) {
      rk::ErrorPtr e(add ? rd_kafka_incremental_assign(h, parts) : rd_kafka_incremental_unassign(h, parts));
      if (e) record(make_error(rd_kafka_error_code(e.get()), add ? "incremental assign" : "incremental unassign"), ErrorClass::Retry);
    } else {
      rd_kafka_resp_err_t err = rd_kafka_assign(h, add ? parts : nullptr);
      if (err) record(make_error(err, add ? "assign" : "unassign"), ErrorClass::Retry);
    }
  }

  // Records of revoked partitions fetched in this poll() but not yet returned
  // would reach the pipeline after it closed their epoch; the next owner
  // reads them from the committed offset instead.
  void drop_pending(const std::set<TopicPartition>& gone) {
    if (!in_poll_) return;
    auto keep = std::remove_if(pending_.begin(), pending_.end(), [&](rd_kafka_message_t* m) {
      if (gone.contains(TopicPartition{rd_kafka_topic_name(m->rkt), m->partition})) {
        rd_kafka_message_destroy(m);
        return true;
      }
      return false;
    });
    pending_.erase(keep, pending_.end());
  }

  void handle_close_event(rd_kafka_event_t* ev) {
    switch (rd_kafka_event_type(ev)) {
      case RD_KAFKA_EVENT_REBALANCE:
        on_rebalance(rk_, rd_kafka_event_error(ev), rd_kafka_event_topic_partition_list(ev));
        break;
      case RD_KAFKA_EVENT_ERROR: {
        auto code = rd_kafka_event_error(ev);
        const std::string why = rd_kafka_event_error_string(ev);
        ErrorClass c = classify(code, why);
        if (c != ErrorClass::Ignore) record(make_error(code, why, {}, &security_), c);
        break;
      }
      default:
        break;
    }
  }

  static std::string fmt_list(const rd_kafka_topic_partition_list_t* l) {
    std::string s;
    for (int i = 0; i < l->cnt; ++i) {
      s += (i ? "," : "") + to_string(TopicPartition{l->elems[i].topic, l->elems[i].partition});
      if (l->elems[i].offset >= 0) s += "@" + std::to_string(l->elems[i].offset);
    }
    return s;
  }

  MessageBatch make_batch(std::vector<rd_kafka_message_t*> msgs) {
    if (msgs.empty()) return {};
    std::vector<Message> out;
    out.reserve(msgs.size());
    auto headers = std::make_unique<std::vector<Header>>();
    std::vector<std::pair<size_t, size_t>> header_ranges;
    header_ranges.reserve(msgs.size());
    for (auto* m : msgs) {
      Message msg;
      msg.topic = rd_kafka_topic_name(m->rkt);
      msg.partition = m->partition;
      msg.offset = m->offset;
      if (m->key != nullptr) msg.key = std::string_view(static_cast<const char*>(m->key), m->key_len);
      if (m->payload != nullptr) msg.value = std::string_view(static_cast<const char*>(m->payload), m->len);
      rd_kafka_timestamp_type_t tst = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
      msg.timestamp_ms = rd_kafka_message_timestamp(m, &tst);
      msg.timestamp_type = tst == RD_KAFKA_TIMESTAMP_CREATE_TIME       ? TimestampType::CreateTime
                           : tst == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? TimestampType::LogAppendTime
                                                                        : TimestampType::None;
      size_t first = headers->size();
      rd_kafka_headers_t* hdrs = nullptr;
      if (read_headers_ && rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs != nullptr) {
        const char* name = nullptr;
        const void* val = nullptr;
        size_t size = 0;
        for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
          Header h;
          h.key = name;
          if (val != nullptr) h.value = std::string_view(static_cast<const char*>(val), size);
          headers->push_back(h);
        }
      }
      header_ranges.emplace_back(first, headers->size() - first);
      out.push_back(msg);
    }
    // Spans are set once the header vector stopped growing.
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].headers = std::span<const Header>(headers->data() + header_ranges[i].first, header_ranges[i].second);
    }
    return MessageBatch(std::move(out), std::move(headers), std::make_unique<RdMessages>(std::move(msgs), outstanding_));
  }

  std::vector<std::string> topics_;
  std::map<std::string, std::string> reader_props_;
  SecuritySettings security_;  // names the mechanism and the fix in security failures
  bool read_headers_ = true;
  rd_kafka_t* rk_ = nullptr;
  RebalanceListener* listener_ = nullptr;
  bool cooperative_configured_ = false;
  bool assigned_once_ = false;  // see close(): librdkafka#4312
  int64_t initial_offset_ = RD_KAFKA_OFFSET_BEGINNING;  // the configured auto.offset.reset
  bool skip_offset_gaps_ = false;
  std::vector<TopicPartition> gaps_skipped_;
  // Poll-thread state; callbacks run inside poll()/close() on that thread.
  // librdkafka before 2.1 parks a partition whose prefetch queue is over
  // queued.max.messages.kbytes and looks again only when its broker thread
  // wakes: on I/O, on an op, else after a fixed second (2.1 added
  // fetch.queue.backoff.ms). While catching up every partition is parked at
  // once, so a 48 MiB queue drained in ~0.2 s and the pipeline then idled
  // for the rest of the second (half the catch-up speed of 128 MiB). A
  // watermark query is an op on the broker thread of the partition's leader:
  // that thread wakes, sees the queue has room and fetches again.
  // Waking from poll() alone missed with large records (4.3 KB: the queue
  // holds ~11k, one full batch then small ones, and an empty poll blocks for
  // its timeout), so a thread of its own queries every 50 ms for as long as
  // a backlog is being read: until a second after the last half-full batch.
  // Each query wakes only the broker thread leading that partition, so the
  // waker takes the partitions of the last such batch in turn: with several
  // brokers each of their threads is woken within a few ticks.
  // The query waits behind the fetch in flight on that connection, which is
  // another reason it never runs in poll().
  void note_backlog(const std::vector<rd_kafka_message_t*>& batch) {
    if (!kParksForASecond) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_note_ < kWakeEvery) return;  // bounds the locking and the name copies
    last_note_ = now;
    std::vector<std::pair<std::string, int32_t>> tps;
    const rd_kafka_message_t* run = nullptr;  // records come in runs of one partition
    for (const rd_kafka_message_t* m : batch) {
      if (m->rkt == nullptr || (run != nullptr && run->rkt == m->rkt && run->partition == m->partition)) continue;
      run = m;
      std::pair<std::string, int32_t> tp{rd_kafka_topic_name(m->rkt), m->partition};
      if (std::find(tps.begin(), tps.end(), tp) == tps.end()) tps.push_back(std::move(tp));
    }
    if (tps.empty()) return;
    std::lock_guard lock(wake_mu_);
    if (wake_stop_) return;
    if (!waker_.joinable())
      waker_ = std::thread([this] {
        name_this_thread("kafka-waker");
        run_waker();
      });
    wake_tps_ = std::move(tps);
    backlog_until_ = now + kBacklogLinger;
    wake_cv_.notify_one();
  }
  void run_waker() {
    std::unique_lock lock(wake_mu_);
    for (size_t turn = 0;; ++turn) {
      wake_cv_.wait(lock, [&] { return wake_stop_ || std::chrono::steady_clock::now() < backlog_until_; });
      if (wake_stop_) return;
      const auto [topic, partition] = wake_tps_[turn % wake_tps_.size()];
      lock.unlock();
      int64_t lo = 0, hi = 0;
      // The answer is not needed; a failure only means no early wake-up.
      rd_kafka_query_watermark_offsets(rk_, topic.c_str(), partition, &lo, &hi, 1000);
      lock.lock();
      wake_cv_.wait_for(lock, kWakeEvery, [&] { return wake_stop_; });
    }
  }
  // Before rd_kafka_destroy(): the waker uses the handle.
  void stop_waker() {
    {
      std::lock_guard lock(wake_mu_);
      wake_stop_ = true;
    }
    wake_cv_.notify_one();
    if (waker_.joinable()) waker_.join();
  }
  static inline const bool kParksForASecond = rd_kafka_version() < 0x020100ff;
  static constexpr std::chrono::milliseconds kWakeEvery{50};
  static constexpr std::chrono::seconds kBacklogLinger{1};
  std::chrono::steady_clock::time_point last_note_{};
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  std::vector<std::pair<std::string, int32_t>> wake_tps_;  // non-empty once backlog_until_ is set
  std::chrono::steady_clock::time_point backlog_until_{};
  bool wake_stop_ = false;
  std::thread waker_;
  bool in_poll_ = false;
  std::vector<rd_kafka_message_t*> pending_;
  std::vector<Error> errors_;
  std::vector<Error> transient_;
  std::shared_ptr<std::atomic<int64_t>> outstanding_ = std::make_shared<std::atomic<int64_t>>(0);
};

}  // namespace

std::unique_ptr<Source> make_kafka_source(SourceConfig cfg) { return std::make_unique<KafkaSource>(std::move(cfg)); }

}  // namespace cdc2doris::kafka
