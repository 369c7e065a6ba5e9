#pragma once
// Doris Stream Load client (issue 5): the public, abstract interface the
// pipeline codes against, plus the factory for the real Beast implementation.
//
// Thread safety
//   DorisClient: every method may be called from any thread, concurrently,
//   EXCEPT from the client's own I/O threads (the blocking calls would
//   deadlock; this is asserted). The client owns its I/O thread(s); destroying
//   it closes every connection, fails every in-flight operation with
//   ErrorKind::Shutdown and joins the threads.
//   LoadStream: single producer. write()/finish()/cancel() must come from one
//   thread at a time (the pipeline thread); buffered_bytes() from any thread.
//   A LoadStream may outlive its client: its calls then fail with Shutdown.
//
// Errors
//   Every failure is a DorisError: the shared cdc2doris::Error (disposition +
//   context: db.table, label, txn id, endpoint, HTTP status, Doris Status and
//   Message) plus a machine-readable ErrorKind and, for some kinds, details
//   (the existing label's state, the first lines of the ErrorURL log). The
//   disposition is set once, by classify() (classify.hpp), never re-derived.
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/result.hpp"
#include "core/common/retry.hpp"

namespace cdc2doris::doris {

// ---------------------------------------------------------------- config

struct TlsConfig {
  // Used for every https:// endpoint: FEs, and BEs when Doris runs with
  // enable_https (an https FE redirects to https on the BE, RestBaseController.getRedirectUrL).
  std::string ca_file;             // PEM bundle; empty: system default paths
  bool verify_peer = true;         // false: accept any certificate (testing only)
  bool verify_hostname = true;     // check the certificate's name against the host
};

struct Timeouts {
  std::chrono::milliseconds connect{5'000};
  // One HTTP request/response (2PC, metadata, probe, error log) end to end.
  std::chrono::milliseconds request{30'000};
  // Waiting for "100 Continue" or the early final answer after the load's headers.
  std::chrono::milliseconds expect_continue{30'000};
  // A single body write making no progress (peer stopped reading).
  std::chrono::milliseconds idle{60'000};
  // From the end of the load body until Doris' final JSON answer (pre-commit).
  std::chrono::milliseconds response{300'000};
  // Idle keep-alive connections (2PC/metadata) older than this are not reused.
  std::chrono::milliseconds keepalive_idle{20'000};
};

enum class Route {
  ViaFe,     // PUT to an FE, follow its 307 to a BE (auto-redirect)
  DirectBe,  // PUT straight to a BE: from `backends`, else discovered from the FEs
};

struct ClientConfig {
  // "http://host:8030" / "https://host:8443" / "host:port" (http). At least one.
  std::vector<std::string> fe_urls;
  std::string user;
  std::string password;  // never logged, never put in an error
  Route route = Route::ViaFe;
  // Route::DirectBe: static BE list "host:port". Empty: discover via
  // GET /api/backends?is_alive=true on the FEs, refreshed every discovery_interval.
  std::vector<std::string> backends;
  std::chrono::milliseconds discovery_interval{30'000};
  // BE address as Doris reports it ("host:port" or "host") -> address the daemon
  // can reach ("host:port" or "host"). Applied to redirect targets, discovered
  // BEs, ErrorURLs. Exact "host:port" keys win over "host" keys.
  std::map<std::string, std::string> address_rewrite;
  // A BE/FE that failed at connect/transport level is skipped for this long.
  std::chrono::milliseconds endpoint_quarantine{10'000};
  TlsConfig tls;
  Timeouts timeouts;
  // Attempts (1 = no retry) and backoff for idempotent operations (2PC,
  // metadata, probe) and for opening a load before any body byte was sent.
  RetryPolicy retry{Backoff{std::chrono::milliseconds(100), std::chrono::milliseconds(5'000)}, 4};
  // Bytes one LoadStream may hold before write() blocks (backpressure). The
  // body travels in chunks of min(chunk_bytes, buffer_bytes).
  size_t buffer_bytes = 1 << 20;
  size_t chunk_bytes = 64 << 10;
  bool gzip = false;  // compress_type: gz, body deflated with zlib
  int gzip_level = 1;
  int io_threads = 1;
  // Lines of the ErrorURL log copied into a data-quality error.
  int error_log_lines = 10;
  // Sent as the "timeout" header when the LoadSpec does not set one (seconds; 0 = none).
  int load_timeout_s = 0;
  int max_redirects = 3;
};

// ---------------------------------------------------------------- errors

enum class ErrorKind {
  Transport,         // connect/reset/EOF/TLS failure           (Retry)
  Timeout,           // connect/read/idle/100-continue timeout  (Retry)
  ServerError,       // 5xx, unparsable answer, unknown failure (Retry)
  NoBackend,         // FE: no backend available                (Retry)
  TxnLimit,          // current running txns ... larger than limit (Retry)
  TooManyVersions,   // TOO_MANY_VERSION / E-235 / E-238        (Retry)
  TxnNotPrecommitted,// commit of a txn still PREPARE           (Retry)
  LabelExists,       // label already used; see existing_label  (Retry if RUNNING/PRECOMMITTED, Fail if FINISHED)
  DataQuality,       // too many filtered rows; see error_log   (Fail)
  TxnGone,           // unused as an error: commit maps it to TxnOutcome::NotFoundOrAborted
  LabelNotRunning,   // commit by label: no PRECOMMITTED txn (finished or aborted: probe to tell) (Fail)
  AlreadyCommitted,  // abort of a COMMITTED/VISIBLE txn       (Fail)
  BodyTooLarge,      // body size exceeds the BE limit         (Fail)
  Auth,              // unauthorized / access denied           (Fatal)
  UnknownTable,      // unknown database / table               (Fatal)
  BadRequest,        // invalid label, bad header, 404 path    (Fatal)
  Cancelled,         // LoadStream::cancel() was called        (Fail)
  Shutdown,          // the client is being destroyed          (Fail)
};
const char* to_string(ErrorKind k);

struct LabelState {
  enum State { Unused, Running, Precommitted, Finished };
  State state = Unused;
  std::optional<int64_t> txn_id;
};
const char* to_string(LabelState::State s);

class DorisError : public Error {
 public:
  DorisError(ErrorKind kind, Disposition d, std::string message, ErrorContext ctx = {})
      : Error(d, std::move(message), std::move(ctx)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

  std::optional<LabelState> existing_label;  // kind == LabelExists
  std::string error_url;                     // set when Doris reported one (redacted of userinfo)
  std::vector<std::string> error_log;        // kind == DataQuality: first lines of error_url

 private:
  ErrorKind kind_;
};

// `e` with `lines` (the first lines of its ErrorURL log: column, value,
// reason) as error_log and quoted in the message, so every copy of the error
// (the log, /status, the fatal stop) says what Doris rejected and why.
DorisError with_error_log(const DorisError& e, std::vector<std::string> lines);

// What every call returns: its value (nothing for DorisResult<void>) or the error.
template <class T>
using DorisResult = Result<T, DorisError>;

// ---------------------------------------------------------------- loads

struct LoadSpec {
  std::string db;
  std::string table;
  std::string label;  // must match ^[-_A-Za-z0-9:]{1,128}$ (see label.hpp)
  bool two_phase_commit = true;
  // UNIQUE KEY table: rows carry __DORIS_DELETE_SIGN__ (hidden_columns header).
  bool unique_key = false;
  std::string sequence_col;  // non-empty: function_column.sequence_col
  // Fixed-column partial update: partial_columns:true + columns (key columns
  // included; __DORIS_DELETE_SIGN__ is appended on unique_key tables).
  std::vector<std::string> partial_columns;
  bool flexible_partial_update = false;  // unique_key_update_mode: UPDATE_FLEXIBLE_COLUMNS
  std::optional<int> timeout_s;          // "timeout" header; default ClientConfig::load_timeout_s
  std::optional<bool> gzip;              // default ClientConfig::gzip
  // Extra per-table headers (e.g. max_filter_ratio, strict_mode). They override
  // the defaults above, except label/two_phase_commit/Expect/framing/auth.
  std::map<std::string, std::string> headers;
};

struct LoadResult {
  int64_t txn_id = -1;
  std::string label;
  std::string status;          // "Success" or "Publish Timeout"
  std::string message;
  bool publish_timeout = false;
  int64_t total_rows = 0;
  int64_t loaded_rows = 0;
  int64_t filtered_rows = 0;   // > 0 only within max_filter_ratio; see error_url
  int64_t unselected_rows = 0;
  int64_t load_bytes = 0;      // as reported by Doris (uncompressed)
  int64_t load_time_ms = 0;
  std::string error_url;
  std::string endpoint;        // BE "host:port" that ran the load
  uint64_t body_bytes = 0;     // bytes of body written (after gzip)
  uint64_t raw_bytes = 0;      // bytes passed to write()
};

// One streaming chunked PUT /api/{db}/{table}/_stream_load, opened lazily on
// the first write() (or at finish() if nothing was written).
class LoadStream {
 public:
  virtual ~LoadStream();  // an unfinished stream is cancelled
  // Appends rows (newline-separated JSON). Blocks while the buffer is full.
  // Returns the stream's error once it has failed (e.g. the BE answered early,
  // the connection broke); further writes keep returning it.
  virtual DorisResult<void> write(std::string_view rows) = 0;
  // write(rows), after which `rows` is empty. A stream may take the caller's
  // buffer as a body chunk instead of copying it, and hand back one of its
  // own (empty, any capacity): rows gathered by the caller are then copied
  // once, not twice. On an error the rows are dropped like write()'s.
  virtual DorisResult<void> write_from(std::string& rows);
  // Sends what is buffered and the body's end without waiting for Doris'
  // answer, so that ending many loads costs one round trip, not one each:
  // end_body() on all of them, then finish() on each. Returns the stream's
  // error if it has one already. (The default leaves it all to finish().)
  virtual DorisResult<void> end_body();
  // Ends the body (if end_body() did not) and waits for Doris' answer: with
  // 2PC the txn is PRECOMMITTED.
  virtual DorisResult<LoadResult> finish() = 0;
  // Abandons the load (closes the connection). The caller aborts the txn by label.
  virtual void cancel() = 0;
  virtual size_t buffered_bytes() const = 0;
  virtual const LoadSpec& spec() const = 0;
};

// ---------------------------------------------------------------- client

enum class TxnOutcome {
  Done,               // this call committed/aborted it
  AlreadyDone,        // commit: already committed/visible; abort: already aborted
  NotFoundOrAborted,  // commit: unknown txn (its label may tell; else its outcome is unknown);
                      // abort: unknown txn/label (nothing to abort)
  Aborted,            // commit: the txn is known and ABORTED (never visible) -> the coordinator replays
};
const char* to_string(TxnOutcome o);

using TxnResult = DorisResult<TxnOutcome>;

struct ColumnSchema {
  std::string name, type, aggregation_type, comment;
  std::optional<int> precision, scale;
};
struct TableSchema {
  std::string keys_type;  // DUP_KEYS | UNIQUE_KEYS | AGG_KEYS
  std::vector<ColumnSchema> columns;
};
struct SqlResult {
  std::vector<std::string> columns;  // empty for DDL (exec_status)
  // Cells: strings unquoted, other JSON values serialised, SQL NULL = nullopt.
  std::vector<std::vector<std::optional<std::string>>> rows;
};

class DorisClient {
 public:
  virtual ~DorisClient();

  virtual std::unique_ptr<LoadStream> open_load(LoadSpec spec) = 0;

  // 2PC via /api/{db}/_stream_load_2pc through any healthy FE, retried with
  // backoff across FEs. Async variants run concurrently on the I/O thread(s);
  // the blocking ones are .get() of them.
  virtual std::future<TxnResult> commit_async(const std::string& db, int64_t txn_id) = 0;
  virtual std::future<TxnResult> abort_async(const std::string& db, int64_t txn_id) = 0;
  virtual std::future<TxnResult> commit_by_label_async(const std::string& db, const std::string& label) = 0;
  virtual std::future<TxnResult> abort_by_label_async(const std::string& db, const std::string& label) = 0;
  // Blocking forms; a client destroyed meanwhile yields ErrorKind::Shutdown.
  TxnResult commit(const std::string& db, int64_t txn_id);
  TxnResult abort(const std::string& db, int64_t txn_id);
  TxnResult commit_by_label(const std::string& db, const std::string& label);
  TxnResult abort_by_label(const std::string& db, const std::string& label);

  // Reference §3.4: an empty 2PC load with spec.label. Label Already Exists ->
  // its state and txn id; otherwise the probe began a fresh txn, which is
  // aborted here before returning Unused.
  virtual DorisResult<LabelState> probe_label(const LoadSpec& spec) = 0;

  // GET /api/{db}/{table}/_schema
  virtual DorisResult<TableSchema> schema(const std::string& db, const std::string& table) = 0;
  // POST /api/query/default_cluster/{db} {"stmt": ...}
  virtual DorisResult<SqlResult> sql(const std::string& db, const std::string& stmt) = 0;

  // Whether an FE answers (readiness): GET /api/health in the Beast client.
  // The default asks for the database list, which any FE answers too.
  virtual DorisResult<void> health();
};

// Validates the config (throws std::invalid_argument naming the bad field),
// builds the TLS context and starts the I/O thread(s).
std::unique_ptr<DorisClient> make_client(const ClientConfig& config);

}  // namespace cdc2doris::doris
