// The caller's side of a Stream Load: rows are cut into chunks (gzipped if
// asked), queued on the StreamState with backpressure at buffer_bytes, and
// carried to Doris by Core::do_load on the stream's strand.
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "core/doris/detail/core.hpp"

namespace cdc2doris::doris::detail {

namespace {

class LoadStreamImpl final : public LoadStream {
 public:
  LoadStreamImpl(std::shared_ptr<Core> core, LoadSpec spec) : core_(std::move(core)) {
    size_t cap = core_->cfg.buffer_bytes;
    chunk_ = std::min(core_->cfg.chunk_bytes, cap);
    st_ = std::make_shared<StreamState>(std::move(spec), net::make_strand(*core_->ioc), cap, chunk_);
    if (st_->spec.gzip.value_or(core_->cfg.gzip)) gzip_ = true;
    core_->register_stream(st_);
    if (core_->stopping)
      st_->abandon(DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down"), st_);
  }
  ~LoadStreamImpl() override {
    bool over;
    {
      std::lock_guard lk(st_->m);
      over = st_->done;
    }
    if (started_ && !over) cancel();
  }

  DorisResult<void> write(std::string_view rows) override {
    if (finished_ || body_ended_) return stream_error("write after the body ended");
    if (auto e = current_error(); !e) return e;
    start();
    raw_bytes_ += rows.size();
    if (gzip_) {
      if (!gz_) gz_ = std::make_unique<GzipEncoder>(core_->cfg.gzip_level);
      gz_->write(rows, cur_);
      while (cur_.size() >= chunk_) {
        // Compressed output arrives in bursts; queue it chunk by chunk.
        std::string rest = cur_.substr(chunk_);
        cur_.resize(chunk_);
        if (auto e = push(); !e) return e;
        cur_ = std::move(rest);
      }
    } else {
      while (!rows.empty()) {
        size_t n = std::min(rows.size(), chunk_ - cur_.size());
        cur_.append(rows.data(), n);
        rows.remove_prefix(n);
        if (cur_.size() >= chunk_)
          if (auto e = push(); !e) return e;
      }
    }
    st_->pending_bytes.store(cur_.size(), std::memory_order_relaxed);
    return {};
  }

  DorisResult<void> write_from(std::string& rows) override {
    // A caller's chunk's worth of rows with nothing of ours pending becomes
    // the chunk itself. A chunk is then up to twice chunk_ bytes: push()
    // waits for room for it, so the buffer cap holds as for write().
    if (gzip_ || finished_ || body_ended_ || !cur_.empty() || rows.size() < chunk_ || rows.size() > 2 * chunk_)
      return LoadStream::write_from(rows);
    if (auto e = current_error(); !e) {
      rows.clear();
      return e;
    }
    start();
    raw_bytes_ += rows.size();
    cur_.swap(rows);  // `rows` gets cur_'s buffer: empty, maybe a recycled one
    auto err = push();
    st_->pending_bytes.store(cur_.size(), std::memory_order_relaxed);
    return err;
  }

  DorisResult<void> end_body() override {
    if (finished_) return stream_error("end_body after finish");
    if (body_ended_) return current_error();
    body_ended_ = true;
    if (auto e = current_error(); !e) return e;
    start();
    if (gz_) gz_->finish(cur_);
    gz_.reset();  // ~256 KiB of zlib state, not needed any more
    while (!cur_.empty()) {
      std::string rest = cur_.size() > chunk_ ? cur_.substr(chunk_) : std::string();
      if (cur_.size() > chunk_) cur_.resize(chunk_);
      if (auto e = push(); !e) return e;
      cur_ = std::move(rest);
    }
    st_->pending_bytes.store(0, std::memory_order_relaxed);
    std::unique_lock lk(st_->m);
    st_->finishing = true;
    StreamState::wake_io_and_unlock(lk, st_);
    return {};
  }

  DorisResult<LoadResult> finish() override {
    if (finished_) return stream_error("finish called twice");
    auto err = end_body();
    finished_ = true;
    if (!err) return std::move(err.error());
    std::unique_lock lk(st_->m);
    st_->cv.wait(lk, [&] { return st_->done; });
    if (st_->error) return *st_->error;
    LoadResult r = *st_->result;
    r.raw_bytes = raw_bytes_;
    return r;
  }

  void cancel() override {
    st_->abandon(load_error(ErrorKind::Cancelled, Disposition::Fail, "stream load cancelled", st_->spec, ""), st_);
  }

  size_t buffered_bytes() const override {
    return st_->queued_bytes.load(std::memory_order_relaxed) + st_->pending_bytes.load(std::memory_order_relaxed);
  }
  const LoadSpec& spec() const override { return st_->spec; }

 private:
  DorisError stream_error(const char* what) {
    return load_error(ErrorKind::BadRequest, Disposition::Fatal, std::string("stream load: ") + what, st_->spec, "");
  }
  DorisResult<void> current_error() {
    if (!st_->over.load(std::memory_order_acquire)) return {};
    std::lock_guard lk(st_->m);
    if (st_->done && st_->error) return *st_->error;
    return {};
  }
  void start() {
    if (started_) return;
    started_ = true;
    if (core_->stopping) return;  // abandoned with Shutdown already
    // The frame gets a raw Core*: a shared_ptr in a suspended frame would keep
    // Core (and the io_context that owns the frame) alive forever if the
    // client is destroyed mid-load. Frames only run on I/O threads, which
    // Core::shutdown() joins before Core can be destroyed.
    net::co_spawn(st_->strand, run(core_.get(), st_), net::detached);
  }
  static awaitable<void> run(Core* core, std::shared_ptr<StreamState> st) {
    DorisResult<LoadResult> out =
        load_error(ErrorKind::ServerError, Disposition::Retry, "stream load: internal error", st->spec, "");
    try {
      out = co_await core->do_load(st);
    } catch (const std::exception& e) {
      out = load_error(ErrorKind::ServerError, Disposition::Retry, std::string("stream load: ") + e.what(), st->spec,
                       "");
    }
    {
      std::lock_guard lk(st->m);
      if (!st->done) {
        st->done = true;
        st->over = true;
        if (out)
          st->result = std::move(*out);
        else
          st->error = std::move(out.error());
      }
      st->queue.clear();
      st->spare.clear();
      st->queued = 0;
      st->queued_bytes = 0;
    }
    st->cv.notify_all();
    st->conn.reset();
  }
  // Queues cur_, blocking while the buffer is full (backpressure).
  //
  // A sleeping I/O coroutine is woken once a quarter of the buffer is queued,
  // not per chunk: each wake is a post and a reactor interrupt, and on a busy
  // machine the woken I/O thread preempts this (the pipeline's) thread. Rows
  // reach Doris no later for it where it counts: the body's end and a full
  // buffer always wake it (issue 18).
  DorisResult<void> push() {
    std::unique_lock lk(st_->m);
    // Room for the chunk being queued AND the next one being filled: the
    // stream's memory (queued + in flight + pending) stays within cap.
    auto room = [&] { return st_->done || st_->queued == 0 || st_->queued + cur_.size() + chunk_ <= st_->cap; };
    if (!room()) {
      StreamState::wake_io_and_unlock(lk, st_);
      lk.lock();
      st_->cv.wait(lk, room);
    }
    if (st_->done) {
      cur_.clear();
      st_->pending_bytes.store(0, std::memory_order_relaxed);
      if (st_->error) return *st_->error;
      return stream_error("stream already finished");
    }
    st_->queued += cur_.size();
    st_->queued_bytes.store(st_->queued, std::memory_order_relaxed);
    st_->queue.push_back(std::move(cur_));
    cur_ = std::string();
    if (!st_->spare.empty()) {
      cur_ = std::move(st_->spare.back());
      st_->spare.pop_back();
    }
    if (st_->queued >= wake_at()) StreamState::wake_io_and_unlock(lk, st_);
    return {};
  }
  size_t wake_at() const { return std::max(chunk_, st_->cap / 4); }

  std::shared_ptr<Core> core_;
  std::shared_ptr<StreamState> st_;
  size_t chunk_;
  std::string cur_;
  bool gzip_ = false;
  std::unique_ptr<GzipEncoder> gz_;
  bool started_ = false;
  bool body_ended_ = false;
  bool finished_ = false;
  uint64_t raw_bytes_ = 0;
};

}  // namespace

std::unique_ptr<LoadStream> open_load_stream(std::shared_ptr<Core> core, LoadSpec spec) {
  return std::make_unique<LoadStreamImpl>(std::move(core), std::move(spec));
}

}  // namespace cdc2doris::doris::detail
