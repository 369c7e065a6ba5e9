#pragma once
// The Doris emulator's state machine, independent of HTTP: catalog, SQL,
// per-database label registry and transactions, stream-load ingestion,
// fault registry, write-ahead persistence.
//
// Thread safety: none. The server runs everything on one io_context thread,
// so the engine is only ever touched by that thread (and by unit tests and
// the benchmark, which are single-threaded too).
//
// Transaction states (reference §5):
//
//   PREPARE --(2PC body done)--> PRECOMMITTED --(commit)--> COMMITTED --> VISIBLE
//      |   \--(non-2PC body done)------------------------> COMMITTED --> VISIBLE
//      \--------------(abort / error / timeout)-----------> ABORTED
//   PRECOMMITTED --(abort / precommit timeout)-----------> ABORTED
//
// COMMITTED -> VISIBLE is immediate unless a publish-timeout fault delays it.
#include "tools/doris_emulator/values.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cdc2doris::emu {

int64_t now_ms();

// Process-wide malloc settings for the emulator and its benchmark: keep freed
// heap instead of trimming it back to the kernel after every load (each load
// frees the rows it replaced, and re-faulting those pages cost ~10% of ingest).
void keep_freed_heap();

struct Config {
  std::map<std::string, std::string> users{{"root", ""}};
  std::string data_dir;                   // empty: memory only
  int64_t precommit_timeout_s = 3600;     // stream_load_default_precommit_timeout_second
  int64_t label_retention_s = 43200;      // streaming_label_keep_max_second
  // Finished txns kept per database beyond which the oldest are forgotten
  // (label_num_threshold; <= 0: age only), and the period of the cleaner that
  // forgets them (transaction_clean_interval_second). Both FE Config.java;
  // rule in DatabaseTransactionMgr.unprotectedRemoveUselessTxns.
  int64_t label_num_threshold = 2000;
  int64_t txn_clean_interval_s = 30;
  // How long a heavy schema-change job runs once its earlier txns finished
  // (Doris: as long as rewriting the table's tablets takes).
  int64_t alter_job_ms = 2000;
  int64_t max_running_txns = 10000;       // max_running_txn_num_per_db (newest master)
  int64_t default_load_timeout_s = 259200;
  int64_t streaming_load_max_mb = 10240;
  int64_t streaming_load_json_max_mb = 100;
  bool count_only = false;
  std::vector<std::string> be_addrs;      // "127.0.0.1:port", for ErrorURL
  bool fsync = true;
};

struct Column {
  std::string name;
  ColType type;
  bool nullable = true;
  bool key = false;
  std::optional<std::string> def;  // canonical JSON token of DEFAULT; nullopt: none
  // DEFAULT CURRENT_TIMESTAMP / CURRENT_DATE: `def` holds the function's name
  // (what DESC shows), a load fills the load's time (load_rows.cpp).
  bool def_now = false;
  std::string comment;
  uint32_t id = 0;                 // stable across RENAME, used to migrate rows
};

enum class Model { Unique, Duplicate };

struct StoredRow {
  std::string line;
  std::string seq;
  bool deleted = false;  // tombstone kept only when the table has a sequence column
};

struct Table {
  int64_t id = 0;
  std::string db, name;
  Model model = Model::Duplicate;
  std::vector<Column> cols;
  int seq_col = -1;            // "function_column.sequence_col" property
  std::optional<ColType> hidden_seq;  // "function_column.sequence_type" property
  std::vector<std::pair<std::string, std::string>> props;
  uint64_t schema_version = 1;
  uint32_t next_col_id = 1;
  std::unordered_map<std::string, StoredRow> unique_rows;
  std::vector<std::string> dup_rows;
  int64_t count_only_rows = 0;

  int col_index(std::string_view name) const;  // case-insensitive, -1 if absent
  int64_t visible_rows() const;
};

struct Database {
  int64_t id = 0;
  std::string name;
  std::vector<std::pair<std::string, std::string>> props;  // CREATE DATABASE ... PROPERTIES
  std::map<std::string, std::unique_ptr<Table>> tables;
  std::unordered_map<std::string, std::vector<int64_t>> labels;
  // Ids of finished (VISIBLE/ABORTED) txns in the order they became final:
  // Doris' finalStatusTransactionStateDequeShort (every emulator txn is a
  // stream load, a "short" txn). The cleaner forgets from its front.
  std::deque<int64_t> finished;
};

// A heavy schema change (fe SchemaChangeJobV2): the ALTER returns at once,
// the table keeps its shape until the job finishes (alter_job.cpp).
struct AlterJob {
  int64_t id = 0;
  std::string cur_db, stmt;  // replayed through the SQL engine when it finishes
  std::string db, table;
  int64_t table_id = 0;
  int64_t create_ms = 0, running_ms = 0, finish_ms = 0;
  int64_t watershed_txn_id = 0;  // txns of the table begun before must finish first
  uint64_t schema_version = 0;   // the table's version once finished
  std::string state = "WAITING_TXN", msg;
};

enum class TxnState { Prepare, Precommitted, Committed, Visible, Aborted };
const char* to_string(TxnState s);

struct StagedRow {
  std::string key, seq, line;
  bool del = false;
  // Partial-column update: `line` holds only the columns the load sets; the
  // others are taken from the stored row when the txn becomes visible.
  bool partial = false;
  bool seq_missing = false;  // partial row without a sequence value: reuse the stored one
};

// Splits a row line as the emulator renders it ({"a":tok,"b":tok}) into
// (quoted column name, value token) pairs.
std::vector<std::pair<std::string_view, std::string_view>> split_row_line(std::string_view line);

struct Txn {
  int64_t id = 0;
  std::string db, table, label;
  int64_t table_id = 0;
  bool two_pc = false;
  TxnState state = TxnState::Prepare;
  int64_t begin_ms = 0, precommit_ms = 0, finish_ms = 0, visible_at_ms = 0;
  int64_t timeout_s = 0;
  std::string abort_reason;
  std::vector<StagedRow> rows;
  int64_t row_count = 0;  // rows staged (also valid in count-only mode)
  int64_t loaded = 0, filtered = 0, bytes = 0;
  uint64_t schema_version = 0;
  int be = -1;
};

struct Fault {
  int64_t id = 0;
  std::string type;
  std::string db, table;
  int be = -1;
  int64_t remaining = 1;  // -1: until deleted
  std::string status, message, phase;
  int64_t bytes = 0, ms = 0, visible_after_ms = 1000;
  bool apply = false;  // fail_commit: commit first, then answer with the failure
  bool reset = false;  // fail_commit, fail_query: reset the connection instead of answering
  // fail_query / delay_query: statements containing `match` (case-insensitive;
  // empty: every statement); fail_query answers HTTP `http_status` with a
  // ResponseBody of `code` and `message`, or `message` alone when `raw`.
  std::string match;
  int64_t http_status = 200, code = 500;
  bool raw = false;
  int64_t online_at_ms = 0;  // be_offline set by be_restart: when the BE is back
  std::string to_json() const;
};

struct Stats {
  int64_t loads = 0, loads_ok = 0, loads_failed = 0, commits = 0, aborts = 0, bytes = 0, rows = 0,
          requests = 0, precommits = 0;
};

// Result of an operation that produces an HTTP JSON reply.
struct Reply {
  std::string body;
  bool close = false;  // ask the server to close the connection afterwards
  bool reset = false;  // injected fault: reset the connection instead of replying
};

class Engine;

// One stream load after the header phase passed: body bytes are fed as they
// arrive, finish() decides the outcome.
class Load {
 public:
  virtual ~Load() = default;
  // Returns false when the load must stop (e.g. body too large); the reply is
  // then available from finish().
  virtual bool feed(const char* data, size_t n) = 0;
  virtual Reply finish() = 0;
  // The client went away or the connection was reset: abort the txn.
  virtual void cancel(const std::string& reason) = 0;
  virtual int64_t txn_id() const = 0;
  virtual int64_t received() const = 0;
};

struct LoadRequest {
  std::string db, table;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string authorization;
  std::optional<int64_t> content_length;
  bool chunked = false;
  int be = 0;
};

class Engine {
 public:
  explicit Engine(Config cfg);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const Config& config() const { return cfg_; }
  void set_be_addrs(std::vector<std::string> a) { cfg_.be_addrs = std::move(a); }
  // The GLOBAL time_zone variable (SET GLOBAL time_zone = ...): a stream load
  // without a `timezone` header converts in it (the FE plans the load with
  // the session zone, which starts as the global one).
  const std::string& global_time_zone() const { return global_tz_; }
  void set_global_time_zone(std::string tz) { global_tz_ = std::move(tz); }

  // Replays the write-ahead log in data_dir (no-op without one).
  void recover();

  // --- auth -----------------------------------------------------------
  enum class Auth { Ok, Missing, Denied };
  Auth check_auth(std::string_view authorization, std::string* user = nullptr) const;
  std::string denied_text(std::string_view authorization) const;

  // --- users and privileges (privileges.cpp) ----------------------------
  // Bits in fe Privilege.java order (NODE_PRIV = bit 0 ... USAGE_PRIV = 8).
  enum Priv : uint32_t {
    kNodePriv = 1u << 0, kAdminPriv = 1u << 1, kGrantPriv = 1u << 2, kSelectPriv = 1u << 3, kLoadPriv = 1u << 4,
    kAlterPriv = 1u << 5, kCreatePriv = 1u << 6, kDropPriv = 1u << 7, kUsagePriv = 1u << 8,
  };
  // Whether `user` holds any bit of `want` (or ADMIN_PRIV) on db.table
  // (table empty: on the database), through *.*, db.* or db.table grants
  // (fe Auth.checkTblPriv: global, then db, then table privileges).
  bool has_priv(const std::string& user, const std::string& db, const std::string& table, uint32_t want) const;
  // The user SQL statements run as until the guard is destroyed (the HTTP
  // query API's Basic-auth user, a MySQL session's login). Without a guard,
  // statements run unchecked (tests, WAL replay, alter jobs).
  class ActingAs {
   public:
    ActingAs(Engine& e, std::string user, std::string host);
    ~ActingAs();
    ActingAs(const ActingAs&) = delete;
    ActingAs& operator=(const ActingAs&) = delete;

   private:
    Engine& e_;
    std::string prev_user_, prev_host_;
  };

  // --- SQL over HTTP ----------------------------------------------------
  // Returns the JSON body of POST /api/query/{ns}/{db}.
  std::string query(const std::string& db, const std::string& stmt, bool streaming);
  // Throws std::runtime_error with the Doris-style text on failure.
  void execute_sql(const std::string& db, const std::string& stmt);

  // --- stream load --------------------------------------------------------
  // Header phase. Either a Load to feed, or the final reply (no 100-continue).
  std::unique_ptr<Load> start_load(const LoadRequest& req, Reply* early);
  // PUT /api/{db}/_stream_load_2pc on a BE.
  Reply txn_2pc(const std::string& db, const std::map<std::string, std::string>& headers,
                const std::string& authorization, int be);

  // --- time-driven work: timeouts, label expiry, delayed publish -----------
  void tick(int64_t now);

  // --- inspection -------------------------------------------------------
  std::string tables_json() const;
  // nullopt: no such table
  std::optional<std::string> rows_jsonl(const std::string& db, const std::string& table) const;
  std::optional<std::pair<std::string, int64_t>> checksum(const std::string& db, const std::string& table) const;
  std::string txns_json(const std::string& db) const;
  std::string stats_json() const;
  std::string schema_json(const std::string& db, const std::string& table) const;
  const std::vector<AlterJob>& alter_jobs() const { return alter_jobs_; }
  std::optional<std::string> error_log(const std::string& file) const;
  Stats& stats() { return stats_; }

  // --- faults -------------------------------------------------------------
  // Adds a fault (or performs an immediate action); returns the JSON reply.
  // Throws std::invalid_argument on a malformed request.
  std::string add_fault(const std::string& json_body);
  std::string faults_json() const;
  bool delete_fault(int64_t id);
  void clear_faults();
  // Consumes one use of the first matching fault of `type`.
  std::optional<Fault> take_fault(const std::string& type, const std::string& db, const std::string& table, int be);
  // The same for a statement of the HTTP query API on `db` (fail_query, delay_query).
  std::optional<Fault> take_query_fault(const std::string& type, const std::string& db, const std::string& stmt);
  // Peeks without consuming (BE offline state is a fault with remaining -1).
  bool be_offline(int be) const;
  // Called by the server when a fault toggles a BE's listener.
  std::function<void(int be, bool online)> on_be_state;

  // Read-only views for the MySQL query port (query_exec.cpp).
  const std::map<std::string, std::unique_ptr<Database>>& databases() const { return dbs_; }
  const std::map<int64_t, Txn>& transactions() const { return txns_; }

  // --- internal, used by loads and SQL ---------------------------------------
  Database* find_db(const std::string& name);
  const Database* find_db(const std::string& name) const;
  Table* find_table(const std::string& db, const std::string& table);
  Txn* find_txn(int64_t id);
  void abort_txn(Txn& t, const std::string& reason);
  void precommit_or_commit(Txn& t, bool publish_timeout, int64_t visible_after_ms);
  std::string add_error_log(const std::string& text, int be);
  int64_t running_txns(const Database& db) const;
  void wal_stage(const Txn& t);
  void migrate_rows(Table& t, const std::vector<Column>& old_cols, std::vector<StagedRow>& rows);
  // Full row line for a partial-update row: its columns over the stored row's
  // (nullptr: a new key, so defaults/NULL for the columns it does not set).
  static std::string merge_partial_line(const Table& t, const std::string* stored, const std::string& partial);
  // Sequence key of a full row line (the mapped column's value; NULL for a hidden sequence column).
  static std::string seq_of_line(const Table& t, const std::string& line);
  // `line` (a partial row line without column `col`) with that column's token from `from`.
  static std::string with_column_of(const Table& t, int col, const std::string& from, const std::string& line);

 private:
  friend class LoadImpl;
  void apply_visible(Txn& t);
  void forget_txn(int64_t id);
  void note_final(const Txn& t);
  // COMMITTED -> VISIBLE: at once, or queued behind a delayed publish.
  void publish(Txn& t, int64_t visible_at_ms);
  void publish_due(int64_t now, bool all);
  // alter_job.cpp
  static bool light_schema_change(const Table& t);
  const AlterJob* running_alter_job(const Table& t) const;
  void start_alter_job(const Table& t, const std::string& cur_db, const std::string& stmt);
  void advance_alter_jobs(int64_t now);
  void replay_alter_job(char type, std::string_view rec);
  std::vector<std::vector<std::string>> show_alter_rows(const std::string& db) const;
  void remove_useless_txns(Database& db, int64_t now);
  void wal_write(const std::string& rec, bool sync);
  void replay(std::string_view rec);
  void exec_sql_inner(const std::string& db, const std::string& stmt, std::string* result_json, bool replaying);
  // privileges.cpp: CREATE/DROP USER, GRANT, REVOKE, SHOW GRANTS (false: not
  // one of them), and the privilege a DDL statement needs from sql_user_.
  bool exec_account_sql(const std::string& stmt, std::string* result_json);
  void check_ddl_priv(const std::string& cur_db, const std::string& stmt) const;
  Reply two_pc_error(const std::string& status, const std::string& msg) const;

  Config cfg_;
  // Users given at start (--user) hold every privilege, like Doris' root
  // (operator role) and admin (admin role); users made by CREATE USER hold
  // what GRANT gave them: user -> "*.*" | "db.*" | "db.tbl" -> Priv bits.
  std::set<std::string> superusers_;
  std::map<std::string, std::map<std::string, uint32_t>> grants_;
  std::string sql_user_, sql_host_;  // empty user: unchecked
  std::string global_tz_ = "Asia/Shanghai";  // fe TimeUtils.DEFAULT_TIME_ZONE
  std::map<std::string, std::unique_ptr<Database>> dbs_;
  std::map<int64_t, Txn> txns_;
  // Ids of txns that may still be running (PREPARE/PRECOMMITTED/COMMITTED).
  // States only move forward, so a txn found final is dropped for good; this
  // keeps the running-txn count and the housekeeping tick proportional to the
  // live txns instead of every txn ever begun (which made them quadratic).
  mutable std::set<int64_t> live_txns_;
  int64_t last_clean_ms_ = 0;
  // COMMITTED txns waiting for a delayed publish, in commit order: Doris
  // publishes a partition's versions in order, so a later commit of the same
  // table becomes visible only after the delayed one.
  std::deque<int64_t> publishing_;
  std::vector<AlterJob> alter_jobs_;
  int64_t next_job_id_ = 30001;
  bool applying_job_ = false;  // a finishing job's ALTER runs as an immediate one
  int64_t next_txn_id_ = 1001;
  int64_t next_db_id_ = 10001;
  int64_t next_table_id_ = 20001;
  std::vector<Fault> faults_;
  std::optional<Fault> take_first(const std::function<bool(const Fault&)>& matches);
  int64_t next_fault_id_ = 1;
  std::map<std::string, std::string> error_logs_;
  std::vector<std::string> error_log_order_;
  uint64_t error_log_seq_ = 0;
  Stats stats_;
  int wal_fd_ = -1;
  bool replaying_ = false;
};

// rapidjson-PrettyWriter-style JSON object writer (4-space indent), used for
// every BE reply so field order and layout match Doris.
class PrettyObject {
 public:
  PrettyObject& str(std::string_view k, std::string_view v);
  PrettyObject& num(std::string_view k, int64_t v);
  std::string done(bool trailing_newline) const;

 private:
  void key(std::string_view k);
  std::string s_;
};

std::string compact_string(std::string_view s);  // JSON-quoted

}  // namespace cdc2doris::emu
