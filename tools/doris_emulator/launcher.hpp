#pragma once
// Starts a doris-emulator child process for tests, the demo and benchmarks.
//
//   cdc2doris::test::Emulator emu;                      // root, empty password, 1 BE
//   emu.sql("", "CREATE DATABASE d");
//   emu.sql("d", "CREATE TABLE t (id INT, v STRING) UNIQUE KEY(id) "
//                "DISTRIBUTED BY HASH(id) BUCKETS 1");
//   auto r = emu.stream_load("d", "t", "{\"id\":1,\"v\":\"a\"}\n",
//                            {{"format", "json"}, {"two_phase_commit", "true"}});
//   ... emu.rows("d", "t"), emu.checksum("d", "t"), emu.fault(R"({"type":"fail_commit"})")
//
// The binary path is baked in at build time (CDC2DORIS_DORIS_EMULATOR_BIN);
// the environment variable DORIS_EMULATOR_BIN overrides it. The child gets
// PR_SET_PDEATHSIG(SIGKILL), so it never outlives the process that started it.
//
// Lifecycle: the constructor returns once the emulator printed its ready line
// (throws std::runtime_error after 30 s or if it exits). The destructor stops
// it (SIGTERM, then SIGKILL). restart() keeps ports and data_dir.
//
// Thread safety: one Emulator object must be used from one thread at a time;
// http() opens a fresh connection per call, so separate objects or threads
// talking to the same emulator process are fine.
#include <cstdint>
#include <map>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace cdc2doris::test {

struct EmulatorOptions {
  int be_count = 1;
  std::vector<std::string> users;   // "name:password"; empty: root with empty password
  std::string data_dir;             // empty: in-memory (restart() then loses everything)
  int precommit_timeout_s = 0;      // 0: emulator default (3600)
  int label_retention_s = 0;        // 0: emulator default (43200)
  int max_running_txns = 0;         // 0: emulator default (10000)
  int label_num_threshold = 0;      // 0: emulator default (2000); -1: forget by age only
  int txn_clean_interval_s = 0;     // 0: emulator default (30)
  int alter_job_ms = -1;            // heavy schema-change job duration; -1: emulator default (2000)
  bool count_only = false;
  std::vector<std::string> extra_args;
  int fe_port = 0;                  // 0: a free port
  std::vector<int> be_ports;        // empty: free ports
  int query_port = 0;               // MySQL-protocol query port; 0: a free port
  std::string stderr_file;          // empty: inherit the caller's stderr
  // PEM files: FE and BE ports serve HTTPS only; sql(), query() and the
  // inspection calls then go to the plain loopback admin address.
  std::string tls_cert, tls_key;
  int extra_fes = 0;                // more FE listeners over the same engine (follower FEs)
  std::vector<int> extra_fe_ports;  // empty: free ports (pinned after the first start)
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class Emulator {
 public:
  explicit Emulator(EmulatorOptions opts = {});
  ~Emulator();
  Emulator(const Emulator&) = delete;
  Emulator& operator=(const Emulator&) = delete;

  std::string fe() const { return fe_; }                 // "127.0.0.1:port"
  std::string admin() const { return admin_; }           // plain HTTP FE session (== fe() without TLS)
  std::vector<std::string> fes() const { return fes_; }  // fe() first, then the extra FEs
  // Closes FE i's port and connections, as a killed FE process (the engine,
  // the BEs and the other FEs go on), or opens it again. Admin calls move to
  // another FE while the one they used is down.
  void set_fe_online(int i, bool online);
  std::vector<std::string> bes() const { return bes_; }  // "127.0.0.1:port" each
  std::string query_addr() const { return query_; }       // MySQL protocol, "127.0.0.1:port"
  int query_port() const;
  pid_t pid() const { return pid_; }
  bool running();

  // One blocking HTTP/1.1 request on a fresh connection. Sets Content-Length
  // (even 0 for PUT/POST), never follows redirects, never sends Expect unless
  // given in headers. Throws std::runtime_error on connection errors.
  HttpResponse http(const std::string& method, const std::string& host_port, const std::string& target,
                    const std::map<std::string, std::string>& headers = {}, const std::string& body = "");

  // SQL over FE HTTP; throws std::runtime_error with the error body on failure.
  void sql(const std::string& db, const std::string& stmt);
  // Same, returning the raw JSON reply (for SHOW / DESC).
  std::string query(const std::string& db, const std::string& stmt);

  // Stream load sent straight to BE `be` with the root/first user's credentials.
  HttpResponse stream_load(const std::string& db, const std::string& table, const std::string& body,
                           std::map<std::string, std::string> headers = {}, int be = 0);
  // 2PC commit/abort by txn id on BE `be`.
  HttpResponse txn(const std::string& db, const std::string& op, int64_t txn_id, int be = 0);

  // Inspection API.
  std::vector<std::string> rows(const std::string& db, const std::string& table);  // JSON lines
  std::pair<std::string, int64_t> checksum(const std::string& db, const std::string& table);
  std::string txns(const std::string& db = "");  // raw JSON {"txns":[...]}
  std::string stats();                           // raw JSON
  // POST /_emulator/faults; returns the reply body (contains "id").
  std::string fault(const std::string& json_body);
  void clear_faults();

  // Basic auth header value for the first configured user.
  std::string auth() const;

  // Stops the child and starts it again on the same ports and data_dir.
  // crash=true: SIGKILL (like kill -9); false: SIGTERM and wait.
  void restart(bool crash = true);
  void stop();  // SIGTERM, wait up to 10 s, then SIGKILL

 private:
  void start();
  void kill_child(bool crash);

  EmulatorOptions opts_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string fe_, admin_, query_;
  std::vector<std::string> fes_;
  std::vector<std::string> bes_;
};

}  // namespace cdc2doris::test
