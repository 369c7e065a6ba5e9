#include "tools/doris_emulator/launcher.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cdc2doris::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

std::string b64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string binary() {
  if (const char* e = std::getenv("DORIS_EMULATOR_BIN"); e && *e) return e;
  return CDC2DORIS_DORIS_EMULATOR_BIN;
}

int port_of(const std::string& hp) { return std::stoi(hp.substr(hp.rfind(':') + 1)); }

}  // namespace

Emulator::Emulator(EmulatorOptions opts) : opts_(std::move(opts)) { start(); }

Emulator::~Emulator() {
  try {
    stop();
  } catch (...) {
    // Destructors must not throw; the child has PDEATHSIG as a backstop.
  }
}

std::string Emulator::auth() const {
  std::string cred = opts_.users.empty() ? "root:" : opts_.users.front();
  return "Basic " + b64(cred);
}

void Emulator::start() {
  std::vector<std::string> args{binary()};
  auto add = [&](const std::string& a, const std::string& v) {
    args.push_back(a);
    args.push_back(v);
  };
  add("--fe-port", std::to_string(opts_.fe_port));
  add("--query-port", std::to_string(opts_.query_port));
  if (!opts_.be_ports.empty()) {
    std::string p;
    for (int x : opts_.be_ports) p += (p.empty() ? "" : ",") + std::to_string(x);
    add("--be-ports", p);
  } else {
    std::string p;
    for (int i = 0; i < opts_.be_count; ++i) p += (p.empty() ? "" : ",") + std::string("0");
    add("--be-ports", p);
  }
  for (auto& u : opts_.users) add("--user", u);
  if (!opts_.data_dir.empty()) add("--data-dir", opts_.data_dir);
  if (opts_.precommit_timeout_s) add("--precommit-timeout-s", std::to_string(opts_.precommit_timeout_s));
  if (opts_.label_retention_s) add("--label-retention-s", std::to_string(opts_.label_retention_s));
  if (opts_.max_running_txns) add("--max-running-txns", std::to_string(opts_.max_running_txns));
  if (opts_.label_num_threshold) add("--label-num-threshold", std::to_string(opts_.label_num_threshold));
  if (opts_.txn_clean_interval_s) add("--txn-clean-interval-s", std::to_string(opts_.txn_clean_interval_s));
  if (opts_.alter_job_ms >= 0) add("--alter-job-ms", std::to_string(opts_.alter_job_ms));
  if (opts_.count_only) args.push_back("--count-only");
  if (opts_.extra_fe_ports.empty())
    for (int i = 0; i < opts_.extra_fes; ++i) opts_.extra_fe_ports.push_back(0);
  if (!opts_.extra_fe_ports.empty()) {
    std::string ports;
    for (int p : opts_.extra_fe_ports) ports += (ports.empty() ? "" : ",") + std::to_string(p);
    add("--extra-fe-ports", ports);
  }
  if (!opts_.tls_cert.empty()) {
    add("--tls-cert", opts_.tls_cert);
    add("--tls-key", opts_.tls_key);
  }
  for (auto& a : opts_.extra_args) args.push_back(a);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // A signal before exec must end this child, not run the test's handlers
    // (Catch's report, the fixtures' cleanup) in a copy of the test.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(fds[1], 1);
    if (!opts_.stderr_file.empty()) {
      int fd = ::open(opts_.stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) ::dup2(fd, 2);
    }
    std::vector<char*> av;
    for (auto& a : args) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    ::execv(av[0], av.data());
    std::fprintf(stderr, "exec %s failed: %s\n", av[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  pid_ = pid;
  stdout_fd_ = fds[0];
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (line.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill_child(true);
      throw std::runtime_error("doris-emulator did not become ready within 30 s");
    }
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n <= 0) {
      kill_child(true);
      throw std::runtime_error("doris-emulator exited before becoming ready (" + binary() + ")");
    }
    line.append(buf, static_cast<size_t>(n));
  }
  line.resize(line.find('\n'));
  auto v = boost::json::parse(line).as_object();
  fe_ = std::string(v.at("fe").as_string());
  admin_ = std::string(v.at("admin").as_string());
  fes_.clear();
  for (auto& f : v.at("fes").as_array()) fes_.emplace_back(f.as_string());
  bes_.clear();
  for (auto& b : v.at("bes").as_array()) bes_.emplace_back(b.as_string());
  query_ = std::string(v.at("query").as_string());
  // Pin the ports so restart() comes back on the same addresses.
  opts_.fe_port = port_of(fe_);
  opts_.query_port = port_of(query_);
  opts_.be_ports.clear();
  for (auto& b : bes_) opts_.be_ports.push_back(port_of(b));
  opts_.extra_fe_ports.clear();
  for (size_t i = 1; i < fes_.size(); ++i) opts_.extra_fe_ports.push_back(port_of(fes_[i]));
}

void Emulator::set_fe_online(int i, bool online) {
  const auto idx = static_cast<size_t>(i);
  if (idx >= fes_.size()) throw std::runtime_error("no FE " + std::to_string(i));
  // Ask through a listener that stays up: the TLS admin address, else another FE.
  std::string via = admin_;
  if (via == fes_[idx]) {
    for (const auto& f : fes_)
      if (f != fes_[idx]) via = f;
    if (via == fes_[idx]) throw std::runtime_error("the only FE cannot be taken offline");
  }
  auto r = http("POST", via, "/_emulator/fes/" + std::to_string(i) + (online ? "/online" : "/offline"));
  if (r.status != 200) throw std::runtime_error("set_fe_online: " + r.body);
  if (!online && admin_ == fes_[idx]) admin_ = via;
}

int Emulator::query_port() const { return port_of(query_); }

bool Emulator::running() {
  if (pid_ <= 0) return false;
  int st;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void Emulator::kill_child(bool crash) {
  if (pid_ > 0) {
    ::kill(pid_, crash ? SIGKILL : SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int st;
    for (;;) {
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_ || (r < 0 && errno == ECHILD)) break;
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        break;
      }
      ::usleep(5000);
    }
    pid_ = -1;
  }
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
}

void Emulator::stop() { kill_child(false); }

void Emulator::restart(bool crash) {
  kill_child(crash);
  start();
}

HttpResponse Emulator::http(const std::string& method, const std::string& host_port, const std::string& target,
                            const std::map<std::string, std::string>& headers, const std::string& body) {
  asio::io_context ioc;
  asio::ip::tcp::socket sock(ioc);
  auto colon = host_port.rfind(':');
  asio::ip::tcp::endpoint ep(asio::ip::make_address(host_port.substr(0, colon)),
                             static_cast<unsigned short>(std::stoi(host_port.substr(colon + 1))));
  boost::system::error_code ec;
  sock.connect(ep, ec);
  if (ec) throw std::runtime_error("connect " + host_port + " failed: " + ec.message());
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, host_port);
  for (auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  if (method == "PUT" || method == "POST") req.set(http::field::content_length, std::to_string(body.size()));
  http::write(sock, req, ec);
  if (ec) throw std::runtime_error(method + " " + host_port + target + " write failed: " + ec.message());
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  http::read(sock, buf, parser, ec);
  if (ec) throw std::runtime_error(method + " " + host_port + target + " read failed: " + ec.message());
  auto& res = parser.get();
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  for (auto& f : res) {
    std::string n(f.name_string());
    for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[n] = std::string(f.value());
  }
  out.body = std::move(res.body());
  return out;
}

std::string Emulator::query(const std::string& db, const std::string& stmt) {
  boost::json::object o{{"stmt", stmt}};
  auto r = http("POST", admin_, "/api/query/default_cluster/" + (db.empty() ? std::string("information_schema") : db),
                {{"Authorization", auth()}, {"Content-Type", "application/json"}}, boost::json::serialize(o));
  return r.body;
}

void Emulator::sql(const std::string& db, const std::string& stmt) {
  std::string body = query(db, stmt);
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("code") || v.as_object().at("code").to_number<int64_t>() != 0)
    throw std::runtime_error("SQL failed: " + stmt + ": " + body);
}

HttpResponse Emulator::stream_load(const std::string& db, const std::string& table, const std::string& body,
                                   std::map<std::string, std::string> headers, int be) {
  if (!headers.count("Authorization")) headers["Authorization"] = auth();
  return http("PUT", bes_.at(static_cast<size_t>(be)), "/api/" + db + "/" + table + "/_stream_load", headers, body);
}

HttpResponse Emulator::txn(const std::string& db, const std::string& op, int64_t txn_id, int be) {
  return http("PUT", bes_.at(static_cast<size_t>(be)), "/api/" + db + "/_stream_load_2pc",
              {{"Authorization", auth()}, {"txn_id", std::to_string(txn_id)}, {"txn_operation", op}});
}

std::vector<std::string> Emulator::rows(const std::string& db, const std::string& table) {
  auto r = http("GET", admin_, "/_emulator/tables/" + db + "/" + table + "/rows");
  if (r.status != 200) throw std::runtime_error("rows " + db + "." + table + ": " + r.body);
  std::vector<std::string> out;
  size_t p = 0;
  while (p < r.body.size()) {
    auto nl = r.body.find('\n', p);
    if (nl == std::string::npos) nl = r.body.size();
    if (nl > p) out.push_back(r.body.substr(p, nl - p));
    p = nl + 1;
  }
  return out;
}

std::pair<std::string, int64_t> Emulator::checksum(const std::string& db, const std::string& table) {
  auto r = http("GET", admin_, "/_emulator/tables/" + db + "/" + table + "/checksum");
  if (r.status != 200) throw std::runtime_error("checksum " + db + "." + table + ": " + r.body);
  auto v = boost::json::parse(r.body).as_object();
  return {std::string(v.at("checksum").as_string()), v.at("rows").as_int64()};
}

std::string Emulator::txns(const std::string& db) {
  return http("GET", admin_, "/_emulator/txns" + (db.empty() ? std::string() : "?db=" + db)).body;
}

std::string Emulator::stats() { return http("GET", admin_, "/_emulator/stats").body; }

std::string Emulator::fault(const std::string& json_body) {
  auto r = http("POST", admin_, "/_emulator/faults", {{"Content-Type", "application/json"}}, json_body);
  if (r.status != 200) throw std::runtime_error("fault " + json_body + " rejected: " + r.body);
  return r.body;
}

void Emulator::clear_faults() { http("DELETE", admin_, "/_emulator/faults"); }

}  // namespace cdc2doris::test
