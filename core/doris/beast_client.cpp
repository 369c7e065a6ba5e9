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
#include <boost/asio/use_future.hpp>

#include "core/common/thread_name.hpp"
#include "core/doris/detail/core.hpp"
#include "core/doris/tls_context.hpp"

namespace cdc2doris::doris::detail {

namespace {

std::string base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// Named as the configuration file names them (config/keys.cpp), so a
// message from here points at the key to fix; the two options without a key
// are said to be internal.
void validate(const ClientConfig& c) {
  if (c.fe_urls.empty()) throw std::invalid_argument("doris.fe: at least one FE is required");
  if (c.user.empty()) throw std::invalid_argument("doris.user: required");
  if (c.buffer_bytes == 0) throw std::invalid_argument("doris.buffer_bytes: must be > 0");
  if (c.chunk_bytes == 0) throw std::invalid_argument("ClientConfig::chunk_bytes (internal, no key): must be > 0");
  if (c.io_threads < 1) throw std::invalid_argument("doris.io_threads: must be >= 1");
  if (c.retry.max_attempts < 1) throw std::invalid_argument("doris.max_attempts: must be >= 1");
  if (c.gzip_level < 1 || c.gzip_level > 9)
    throw std::invalid_argument("ClientConfig::gzip_level (internal, no key): must be 1..9");
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
    if (!u) throw std::invalid_argument("doris.fe: not a URL: " + redact_url(s));
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
  tls_ctx.emplace(make_client_tls(ClientTlsFiles{cfg.tls.ca_file, {}, {}}, cfg.tls.verify_peer, "doris.tls"));
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
  for (int i = 0; i < cfg.io_threads; ++i) threads_.emplace_back([this] {
      name_this_thread("doris-io");
      ioc->run();
    });
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

// ============================================================ ClientImpl

namespace {

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
    return open_load_stream(core_, std::move(spec));
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

  DorisResult<LabelState> probe_label(const LoadSpec& spec) override {
    return run_blocking(*core_, probe_entry(core_.get(), spec), spec.db);
  }

  DorisResult<TableSchema> schema(const std::string& db, const std::string& table) override {
    ClassifyContext cc;
    cc.db = db;
    cc.table = table;
    auto r = run_blocking(*core_, json_entry(core_.get(), http::verb::get, "/api/" + db + "/" + table + "/_schema", "", cc),
                          db);
    if (!r) return std::move(r.error());
    TableSchema out;
    try {
      auto& data = r->at("data").as_object();
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

  DorisResult<void> health() override {
    ClassifyContext cc;
    auto r = run_blocking(*core_, json_entry(core_.get(), http::verb::get, "/api/health", "", cc), "");
    if (!r) return std::move(r.error());
    return {};
  }

  DorisResult<SqlResult> sql(const std::string& db, const std::string& stmt) override {
    ClassifyContext cc;
    cc.db = db;
    json::object body{{"stmt", stmt}};
    auto r = run_blocking(
        *core_, json_entry(core_.get(), http::verb::post, "/api/query/default_cluster/" + db, json::serialize(body), cc), db);
    if (!r) return std::move(r.error());
    SqlResult out;
    try {
      auto& data = r->at("data").as_object();
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
  static awaitable<DorisResult<LabelState>> probe_entry(Core* core, LoadSpec spec) {
    co_return co_await core->probe(std::move(spec));
  }
  static awaitable<DorisResult<json::value>> json_entry(Core* core, http::verb verb,
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
