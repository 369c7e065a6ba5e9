// The real DorisClient: Boost.Beast over Asio, C++20 coroutines.
//
// Threads: ClientConfig::io_threads threads run one io_context owned by Core.
// Every LoadStream runs as two coroutines (body writer, answer reader) on its
// own strand; 2PC/metadata calls are coroutines on the io_context (each uses
// its connection sequentially, so no strand is needed). The caller's threads
// only touch StreamState under its mutex and post wake-ups to the strand.
//
// Shutdown: ~ClientImpl -> Core::shutdown(): fail every open stream with
// Shutdown (waking blocked writers), stop the io_context, join the threads.
// Coroutine frames still suspended are destroyed with the io_context, which
// breaks their futures; the blocking wrappers turn that into Shutdown.
#include <openssl/evp.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <set>
#include <spdlog/spdlog.h>

#include "core/doris/detail/core.hpp"

namespace cdc2doris::doris::detail {

namespace {

std::string base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

void validate(const ClientConfig& c) {
  if (c.fe_urls.empty()) throw std::invalid_argument("doris.fe_urls: at least one FE is required");
  if (c.user.empty()) throw std::invalid_argument("doris.user: required");
  if (c.buffer_bytes == 0) throw std::invalid_argument("doris.buffer_bytes: must be > 0");
  if (c.chunk_bytes == 0) throw std::invalid_argument("doris.chunk_bytes: must be > 0");
  if (c.io_threads < 1) throw std::invalid_argument("doris.io_threads: must be >= 1");
  if (c.retry.max_attempts < 1) throw std::invalid_argument("doris.retry.max_attempts: must be >= 1");
  if (c.gzip_level < 1 || c.gzip_level > 9) throw std::invalid_argument("doris.gzip_level: must be 1..9");
  if (c.route == Route::DirectBe)
    for (auto& b : c.backends)
      if (!split_host_port(b)) throw std::invalid_argument("doris.backends: not host:port: " + b);
}
}  // namespace

Core::Core(ClientConfig c) : cfg(std::move(c)), ioc(std::make_unique<net::io_context>(cfg.io_threads)) {
  validate(cfg);
  auth = "Basic " + base64(cfg.user + ":" + cfg.password);
  bool any_tls = false;
  for (auto& s : cfg.fe_urls) {
    auto u = parse_url(s);
    if (!u) throw std::invalid_argument("doris.fe_urls: not a URL: " + redact_url(s));
    fes.push_back(Endpoint{u->host, u->port, u->tls()});
    any_tls |= u->tls();
  }
  for (auto& b : cfg.backends) {
    auto hp = split_host_port(b);
    if (!hp) throw std::invalid_argument("doris.backends: not host:port: " + b);
    bes_.push_back(rewrite(Endpoint{hp->first, hp->second, false}));
  }
  // Built even without an https FE: a redirect or ErrorURL may still point
  // to https, and the context must not be created lazily from I/O threads.
  (void)any_tls;
  {
    tls_ctx.emplace(ssl::context::tls_client);
    tls_ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                         ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    if (!cfg.tls.ca_file.empty())
      tls_ctx->load_verify_file(cfg.tls.ca_file);  // throws with the OpenSSL reason
    else
      tls_ctx->set_default_verify_paths();
    tls_ctx->set_verify_mode(cfg.tls.verify_peer ? ssl::verify_peer : ssl::verify_none);
  }
  backoff.base = cfg.retry.base_backoff;
  backoff.cap = cfg.retry.max_backoff;
}

Core::~Core() {
  shutdown();
  {
    std::lock_guard lk(pool_m_);
    pool_.clear();
  }
  // Destroys the frames of coroutines that never completed while every other
  // member is still alive.
  ioc.reset();
}

void Core::start() {
  work_.emplace(ioc->get_executor());
  for (int i = 0; i < cfg.io_threads; ++i) threads_.emplace_back([this] { ioc->run(); });
}

void Core::shutdown() {
  if (stopping.exchange(true)) return;
  std::vector<std::shared_ptr<StreamState>> live;
  {
    std::lock_guard lk(streams_m_);
    for (auto& w : streams_)
      if (auto s = w.lock()) live.push_back(std::move(s));
    streams_.clear();
  }
  for (auto& s : live) s->abandon(DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down"), s);
  work_.reset();
  ioc->stop();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void Core::register_stream(const std::shared_ptr<StreamState>& s) {
  std::lock_guard lk(streams_m_);
  // Drop expired entries now and then so the registry does not grow with
  // every epoch's loads.
  if (streams_.size() > 64 && streams_.size() % 64 == 0)
    std::erase_if(streams_, [](auto& w) { return w.expired(); });
  streams_.push_back(s);
}

// ============================================================ LoadStreamImpl

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

  std::optional<DorisError> write(std::string_view rows) override {
    if (finished_) return stream_error("write after finish");
    if (auto e = current_error()) return e;
    start();
    raw_bytes_ += rows.size();
    if (gzip_) {
      if (!gz_) gz_ = std::make_unique<GzipEncoder>(core_->cfg.gzip_level);
      gz_->write(rows, cur_);
      while (cur_.size() >= chunk_) {
        // Compressed output arrives in bursts; queue it chunk by chunk.
        std::string rest = cur_.substr(chunk_);
        cur_.resize(chunk_);
        if (auto e = push()) return e;
        cur_ = std::move(rest);
      }
    } else {
      while (!rows.empty()) {
        size_t n = std::min(rows.size(), chunk_ - cur_.size());
        cur_.append(rows.data(), n);
        rows.remove_prefix(n);
        if (cur_.size() >= chunk_)
          if (auto e = push()) return e;
      }
    }
    st_->pending_bytes.store(cur_.size(), std::memory_order_relaxed);
    return std::nullopt;
  }

  std::optional<DorisError> write_from(std::string& rows) override {
    // A caller's chunk's worth of rows with nothing of ours pending becomes
    // the chunk itself. A chunk is then up to twice chunk_ bytes: push()
    // waits for room for it, so the buffer cap holds as for write().
    if (gzip_ || finished_ || !cur_.empty() || rows.size() < chunk_ || rows.size() > 2 * chunk_)
      return LoadStream::write_from(rows);
    if (auto e = current_error()) {
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

  std::variant<LoadResult, DorisError> finish() override {
    if (finished_) return stream_error("finish called twice");
    finished_ = true;
    if (auto e = current_error()) return std::move(*e);
    start();
    if (gz_) gz_->finish(cur_);
    gz_.reset();  // ~256 KiB of zlib state, not needed any more
    while (!cur_.empty()) {
      std::string rest = cur_.size() > chunk_ ? cur_.substr(chunk_) : std::string();
      if (cur_.size() > chunk_) cur_.resize(chunk_);
      if (auto e = push()) return std::move(*e);
      cur_ = std::move(rest);
    }
    st_->pending_bytes.store(0, std::memory_order_relaxed);
    std::unique_lock lk(st_->m);
    st_->finishing = true;
    st_->wake_io_locked(st_);
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
  std::optional<DorisError> current_error() {
    if (!st_->over.load(std::memory_order_acquire)) return std::nullopt;
    std::lock_guard lk(st_->m);
    if (st_->done && st_->error) return st_->error;
    return std::nullopt;
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
    std::variant<LoadResult, DorisError> out =
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
        if (auto* r = std::get_if<LoadResult>(&out))
          st->result = std::move(*r);
        else
          st->error = std::move(std::get<DorisError>(out));
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
  std::optional<DorisError> push() {
    std::unique_lock lk(st_->m);
    // Room for the chunk being queued AND the next one being filled: the
    // stream's memory (queued + in flight + pending) stays within cap.
    st_->cv.wait(lk, [&] {
      return st_->done || st_->queued == 0 || st_->queued + cur_.size() + chunk_ <= st_->cap;
    });
    if (st_->done) {
      cur_.clear();
      st_->pending_bytes.store(0, std::memory_order_relaxed);
      if (st_->error) return st_->error;
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
    st_->wake_io_locked(st_);
    return std::nullopt;
  }

  std::shared_ptr<Core> core_;
  std::shared_ptr<StreamState> st_;
  size_t chunk_;
  std::string cur_;
  bool gzip_ = false;
  std::unique_ptr<GzipEncoder> gz_;
  bool started_ = false;
  bool finished_ = false;
  uint64_t raw_bytes_ = 0;
};

// ============================================================ ClientImpl

template <class T>
T run_blocking(Core& core, awaitable<T> op, const std::string& db) {
  if (core.ioc->get_executor().running_in_this_thread())
    throw std::logic_error("doris client: blocking call from an I/O thread would deadlock");
  if (core.stopping) return DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down");
  try {
    return net::co_spawn(*core.ioc, std::move(op), net::use_future).get();
  } catch (const std::future_error&) {
    ErrorContext ctx;
    ctx.table = db;
    return DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down", std::move(ctx));
  } catch (const std::exception& e) {
    ErrorContext ctx;
    ctx.table = db;
    return DorisError(ErrorKind::ServerError, Disposition::Retry, std::string("doris client: ") + e.what(),
                      std::move(ctx));
  }
}

class ClientImpl final : public DorisClient {
 public:
  explicit ClientImpl(std::shared_ptr<Core> core) : core_(std::move(core)) {}
  ~ClientImpl() override { core_->shutdown(); }

  std::unique_ptr<LoadStream> open_load(LoadSpec spec) override {
    return std::make_unique<LoadStreamImpl>(core_, std::move(spec));
  }
  std::future<TxnResult> commit_async(const std::string& db, int64_t txn_id) override {
    return spawn_txn(Operation::Commit, db, txn_id, "");
  }
  std::future<TxnResult> abort_async(const std::string& db, int64_t txn_id) override {
    return spawn_txn(Operation::Abort, db, txn_id, "");
  }
  std::future<TxnResult> commit_by_label_async(const std::string& db, const std::string& label) override {
    return spawn_txn(Operation::Commit, db, std::nullopt, label);
  }
  std::future<TxnResult> abort_by_label_async(const std::string& db, const std::string& label) override {
    return spawn_txn(Operation::Abort, db, std::nullopt, label);
  }

  std::variant<LabelState, DorisError> probe_label(const LoadSpec& spec) override {
    return run_blocking(*core_, probe_entry(core_.get(), spec), spec.db);
  }

  std::variant<TableSchema, DorisError> schema(const std::string& db, const std::string& table) override {
    ClassifyContext cc;
    cc.db = db;
    cc.table = table;
    auto r = run_blocking(*core_, json_entry(core_.get(), http::verb::get, "/api/" + db + "/" + table + "/_schema", "", cc),
                          db);
    if (auto* e = std::get_if<DorisError>(&r)) return std::move(*e);
    TableSchema out;
    try {
      auto& data = std::get<json::value>(r).at("data").as_object();
      if (auto* k = data.if_contains("keysType"); k && k->is_string()) out.keys_type = std::string(k->get_string());
      for (auto& p : data.at("properties").as_array()) {
        auto& o = p.as_object();
        ColumnSchema c;
        auto s = [&](const char* key) {
          auto* v = o.if_contains(key);
          return v && v->is_string() ? std::string(v->get_string()) : std::string();
        };
        c.name = s("name");
        c.type = s("type");
        c.aggregation_type = s("aggregation_type");
        c.comment = s("comment");
        if (auto v = s("precision"); !v.empty()) c.precision = std::atoi(v.c_str());
        if (auto v = s("scale"); !v.empty()) c.scale = std::atoi(v.c_str());
        out.columns.push_back(std::move(c));
      }
    } catch (const std::exception& e) {
      ErrorContext ctx;
      ctx.table = db + "." + table;
      return DorisError(ErrorKind::ServerError, Disposition::Retry, std::string("schema: malformed answer: ") + e.what(),
                        std::move(ctx));
    }
    return out;
  }

  std::optional<DorisError> health() override {
    ClassifyContext cc;
    auto r = run_blocking(*core_, json_entry(core_.get(), http::verb::get, "/api/health", "", cc), "");
    if (auto* e = std::get_if<DorisError>(&r)) return std::move(*e);
    return std::nullopt;
  }

  std::variant<SqlResult, DorisError> sql(const std::string& db, const std::string& stmt) override {
    ClassifyContext cc;
    cc.db = db;
    json::object body{{"stmt", stmt}};
    auto r = run_blocking(
        *core_, json_entry(core_.get(), http::verb::post, "/api/query/default_cluster/" + db, json::serialize(body), cc), db);
    if (auto* e = std::get_if<DorisError>(&r)) return std::move(*e);
    SqlResult out;
    try {
      auto& data = std::get<json::value>(r).at("data").as_object();
      if (auto* meta = data.if_contains("meta"); meta && meta->is_array())
        for (auto& m : meta->as_array())
          if (auto* n = m.as_object().if_contains("name"); n && n->is_string())
            out.columns.emplace_back(n->get_string());
      if (auto* rows = data.if_contains("data"); rows && rows->is_array())
        for (auto& row : rows->as_array()) {
          std::vector<std::optional<std::string>> cells;
          for (auto& cell : row.as_array()) {
            if (cell.is_null())
              cells.emplace_back(std::nullopt);
            else if (cell.is_string())
              cells.emplace_back(std::string(cell.get_string()));
            else
              cells.emplace_back(json::serialize(cell));
          }
          out.rows.push_back(std::move(cells));
        }
    } catch (const std::exception& e) {
      ErrorContext ctx;
      ctx.table = db;
      return DorisError(ErrorKind::ServerError, Disposition::Retry, std::string("sql: malformed answer: ") + e.what(),
                        std::move(ctx));
    }
    return out;
  }

 private:
  // Raw Core*: see LoadStreamImpl::start().
  static awaitable<TxnResult> txn_entry(Core* core, Operation op, std::string db,
                                        std::optional<int64_t> txn_id, std::string label) {
    try {
      co_return co_await core->txn_op(op, std::move(db), txn_id, std::move(label));
    } catch (const std::exception& e) {
      co_return DorisError(ErrorKind::ServerError, Disposition::Retry, std::string("2pc: ") + e.what());
    }
  }
  static awaitable<std::variant<LabelState, DorisError>> probe_entry(Core* core, LoadSpec spec) {
    co_return co_await core->probe(std::move(spec));
  }
  static awaitable<std::variant<json::value, DorisError>> json_entry(Core* core, http::verb verb,
                                                                     std::string target, std::string body,
                                                                     ClassifyContext cc) {
    co_return co_await core->fe_json(verb, std::move(target), std::move(body), std::move(cc));
  }

  std::future<TxnResult> spawn_txn(Operation op, const std::string& db, std::optional<int64_t> txn_id,
                                   const std::string& label) {
    if (core_->stopping) {
      std::promise<TxnResult> p;
      p.set_value(DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down"));
      return p.get_future();
    }
    return net::co_spawn(*core_->ioc, txn_entry(core_.get(), op, db, txn_id, label), net::use_future);
  }

  std::shared_ptr<Core> core_;
};

}  // namespace

}  // namespace cdc2doris::doris::detail

namespace cdc2doris::doris {

std::unique_ptr<DorisClient> make_client(const ClientConfig& config) {
  auto core = std::make_shared<detail::Core>(config);
  core->start();
  return std::make_unique<detail::ClientImpl>(std::move(core));
}

}  // namespace cdc2doris::doris
