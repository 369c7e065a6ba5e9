#include "tests/doris_emulator/engine.hpp"

#include <boost/json.hpp>
#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

namespace cdc2doris::emu {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void keep_freed_heap() {
  ::mallopt(M_MMAP_THRESHOLD, 256 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// The C-locale isspace set, inline: trim runs for every line and value and
// std::isspace is an out-of-line locale lookup.
constexpr bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string header(const std::map<std::string, std::string>& h, const std::string& name) {
  auto it = h.find(name);
  return it == h.end() ? std::string() : it->second;
}

bool has_header(const std::map<std::string, std::string>& h, const std::string& name) { return h.count(name) != 0; }

bool base64_decode(std::string_view in, std::string* out) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint32_t buf = 0;
  int bits = 0;
  out->clear();
  for (char c : in) {
    if (c == '=') break;
    auto p = chars.find(c);
    if (p == std::string::npos) return false;
    buf = (buf << 6) | static_cast<uint32_t>(p);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return true;
}

// Splits "Basic base64(user:pw)"; user "u@cluster" loses the cluster part.
bool parse_basic(std::string_view authz, std::string* user, std::string* pw) {
  if (authz.substr(0, 6) != "Basic ") return false;
  std::string dec;
  if (!base64_decode(trim(authz.substr(6)), &dec)) return false;
  auto colon = dec.find(':');
  if (colon == std::string::npos) return false;
  *user = dec.substr(0, colon);
  *pw = dec.substr(colon + 1);
  auto at = user->find('@');
  if (at != std::string::npos) user->resize(at);
  return true;
}

bool label_ok(const std::string& l) {
  if (l.empty() || l.size() > 128) return false;
  for (char c : l)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':')) return false;
  return true;
}

std::string uuid() {
  static std::mt19937_64 rng{std::random_device{}()};
  char b[40];
  uint64_t a = rng(), c = rng();
  std::snprintf(b, sizeof b, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(c >> 48), static_cast<unsigned long long>(c & 0xffffffffffffULL));
  return b;
}

const std::string kFe = "TStatus: errCode = 2, detailMessage = ";

// ---- write-ahead log encoding --------------------------------------------
void put_u32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_i64(std::string* s, int64_t v) {
  auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}
void put_s(std::string* s, std::string_view v) {
  put_u32(s, static_cast<uint32_t>(v.size()));
  s->append(v);
}

struct Reader {
  std::string_view d;
  size_t p = 0;
  uint32_t u32() {
    if (p + 4 > d.size()) throw std::runtime_error("truncated wal record");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(d[p + i])) << (8 * i);
    p += 4;
    return v;
  }
  int64_t i64() {
    if (p + 8 > d.size()) throw std::runtime_error("truncated wal record");
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(d[p + i])) << (8 * i);
    p += 8;
    return static_cast<int64_t>(v);
  }
  std::string s() {
    uint32_t n = u32();
    if (p + n > d.size()) throw std::runtime_error("truncated wal record");
    std::string r(d.substr(p, n));
    p += n;
    return r;
  }
};

// ---- load replies ---------------------------------------------------------
struct LoadReply {
  int64_t txn_id = -1;
  std::string label, comment;
  bool two_pc = false;
  std::string status = "Fail", existing, message;
  int64_t total = 0, loaded = 0, filtered = 0, unselected = 0, bytes = 0;
  int64_t load_ms = 0, begin_ms = 0, put_ms = 0, read_ms = 0, write_ms = 0, receive_ms = 0, commit_ms = 0;
  std::string error_url;

  std::string render() const {
    PrettyObject o;
    o.num("TxnId", txn_id).str("Label", label).str("Comment", comment).str("TwoPhaseCommit", two_pc ? "true" : "false")
        .str("Status", status);
    if (status == "Label Already Exists") o.str("ExistingJobStatus", existing);
    o.str("Message", message)
        .num("NumberTotalRows", total)
        .num("NumberLoadedRows", loaded)
        .num("NumberFilteredRows", filtered)
        .num("NumberUnselectedRows", unselected)
        .num("LoadBytes", bytes)
        .num("LoadTimeMs", load_ms)
        .num("BeginTxnTimeMs", begin_ms)
        .num("StreamLoadPutTimeMs", put_ms)
        .num("ReadDataTimeMs", read_ms)
        .num("WriteDataTimeMs", write_ms)
        .num("ReceiveDataTimeMs", receive_ms)
        .num("CommitAndPublishTimeMs", commit_ms);
    if (!error_url.empty()) o.str("ErrorURL", error_url);
    return o.done(true);
  }
};

Reply fail_reply(const std::string& label, const std::string& comment, bool two_pc, const std::string& msg) {
  LoadReply r;
  r.label = label;
  r.comment = comment;
  r.two_pc = two_pc;
  r.message = msg;
  return Reply{r.render(), true};
}

std::string decode_sep(const std::string& s) {
  // "\x01" style hex separators as Doris accepts them.
  if (s.size() > 2 && s[0] == '\\' && (s[1] == 'x' || s[1] == 'X') && s.size() % 2 == 0) {
    std::string r;
    for (size_t i = 2; i + 1 < s.size() + 1; i += 2) {
      auto hx = s.substr(i, 2);
      char* end = nullptr;
      long v = std::strtol(hx.c_str(), &end, 16);
      if (*end) return s;
      r.push_back(static_cast<char>(v));
    }
    return r;
  }
  if (s == "\\t") return "\t";
  if (s == "\\n") return "\n";
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------
PrettyObject& PrettyObject::str(std::string_view k, std::string_view v) {
  key(k);
  append_json_string(&s_, v);
  return *this;
}
PrettyObject& PrettyObject::num(std::string_view k, int64_t v) {
  key(k);
  s_ += std::to_string(v);
  return *this;
}
void PrettyObject::key(std::string_view k) {
  s_ += s_.empty() ? "{\n    " : ",\n    ";
  append_json_string(&s_, k);
  s_ += ": ";
}
std::string PrettyObject::done(bool nl) const {
  std::string r = s_.empty() ? "{}" : s_ + "\n}";
  if (nl) r += "\n";
  return r;
}

std::string compact_string(std::string_view s) {
  std::string r;
  append_json_string(&r, s);
  return r;
}

const char* to_string(TxnState s) {
  switch (s) {
    case TxnState::Prepare: return "PREPARE";
    case TxnState::Precommitted: return "PRECOMMITTED";
    case TxnState::Committed: return "COMMITTED";
    case TxnState::Visible: return "VISIBLE";
    case TxnState::Aborted: return "ABORTED";
  }
  return "UNKNOWN";
}

int Table::col_index(std::string_view n) const {
  for (size_t i = 0; i < cols.size(); ++i)
    if (iequals(cols[i].name, n)) return static_cast<int>(i);
  return -1;
}

int64_t Table::visible_rows() const {
  if (model == Model::Duplicate) return static_cast<int64_t>(dup_rows.size()) + count_only_rows;
  int64_t n = count_only_rows;
  for (auto& [k, r] : unique_rows)
    if (!r.deleted) ++n;
  return n;
}

// ---------------------------------------------------------------------------
Engine::Engine(Config cfg) : cfg_(std::move(cfg)) {}

Engine::~Engine() {
  if (wal_fd_ >= 0) ::close(wal_fd_);
}

Engine::Auth Engine::check_auth(std::string_view authz, std::string* user_out) const {
  std::string user, pw;
  if (!parse_basic(authz, &user, &pw)) return Auth::Missing;
  if (user_out) *user_out = user;
  auto it = cfg_.users.find(user);
  if (it == cfg_.users.end() || it->second != pw) return Auth::Denied;
  return Auth::Ok;
}

std::string Engine::denied_text(std::string_view authz) const {
  std::string user, pw;
  if (!parse_basic(authz, &user, &pw)) return "Access denied for user 'null' (using password: NO)";
  return "Access denied for user '" + user + "' (using password: " + (pw.empty() ? "NO" : "YES") + ")";
}

Database* Engine::find_db(const std::string& name) {
  auto it = dbs_.find(name);
  return it == dbs_.end() ? nullptr : it->second.get();
}
const Database* Engine::find_db(const std::string& name) const {
  auto it = dbs_.find(name);
  return it == dbs_.end() ? nullptr : it->second.get();
}
Table* Engine::find_table(const std::string& db, const std::string& table) {
  auto* d = find_db(db);
  if (!d) return nullptr;
  auto it = d->tables.find(table);
  return it == d->tables.end() ? nullptr : it->second.get();
}
Txn* Engine::find_txn(int64_t id) {
  auto it = txns_.find(id);
  return it == txns_.end() ? nullptr : &it->second;
}

int64_t Engine::running_txns(const Database& db) const {
  int64_t n = 0;
  for (auto it = live_txns_.begin(); it != live_txns_.end();) {
    auto t = txns_.find(*it);
    if (t == txns_.end() || t->second.state == TxnState::Visible || t->second.state == TxnState::Aborted) {
      it = live_txns_.erase(it);
      continue;
    }
    if (t->second.db == db.name) ++n;
    ++it;
  }
  return n;
}

// ---- persistence -------------------------------------------------------------
void Engine::wal_write(const std::string& payload, bool sync) {
  if (wal_fd_ < 0 || replaying_) return;
  std::string rec;
  put_u32(&rec, static_cast<uint32_t>(payload.size()));
  put_u32(&rec, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(payload.data()),
                                            static_cast<uInt>(payload.size()))));
  rec += payload;
  const char* p = rec.data();
  size_t left = rec.size();
  while (left) {
    ssize_t w = ::write(wal_fd_, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("wal write failed: ") + std::strerror(errno));
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (sync && cfg_.fsync && ::fdatasync(wal_fd_) != 0)
    throw std::runtime_error(std::string("wal fdatasync failed: ") + std::strerror(errno));
}

void Engine::wal_stage(const Txn& t) {
  // Building the record copies every staged row: skip it when nothing is logged.
  if (wal_fd_ < 0 || replaying_) return;
  std::string r = "S";
  put_i64(&r, t.id);
  put_i64(&r, static_cast<int64_t>(t.schema_version));
  put_i64(&r, t.row_count);
  put_i64(&r, t.loaded);
  put_i64(&r, t.filtered);
  put_i64(&r, t.bytes);
  put_i64(&r, static_cast<int64_t>(t.rows.size()));
  for (auto& row : t.rows) {
    put_s(&r, row.key);
    put_s(&r, row.seq);
    put_s(&r, row.line);
    // Flag bits; logs written before partial updates only ever set bit 0.
    r.push_back(static_cast<char>((row.del ? 1 : 0) | (row.partial ? 2 : 0) | (row.seq_missing ? 4 : 0)));
  }
  wal_write(r, false);
}

void Engine::recover() {
  if (cfg_.data_dir.empty()) return;
  std::filesystem::create_directories(cfg_.data_dir);
  std::string path = cfg_.data_dir + "/wal.log";
  std::string data;
  {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd >= 0) {
      char buf[1 << 16];
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof buf)) > 0) data.append(buf, static_cast<size_t>(n));
      ::close(fd);
    }
  }
  size_t p = 0;
  replaying_ = true;
  while (p + 8 <= data.size()) {
    Reader hdr{std::string_view(data).substr(p, 8)};
    uint32_t len = hdr.u32(), crc = hdr.u32();
    if (p + 8 + len > data.size()) break;
    std::string_view payload(data.data() + p + 8, len);
    if (crc32(0, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size())) != crc) break;
    replay(payload);
    p += 8 + len;
  }
  replaying_ = false;
  // A torn tail (crash mid-write) is cut off so new records follow good ones.
  wal_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  if (wal_fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  if (::ftruncate(wal_fd_, static_cast<off_t>(p)) != 0 || ::lseek(wal_fd_, 0, SEEK_END) < 0)
    throw std::runtime_error("cannot truncate " + path + ": " + std::strerror(errno));
  // Loads that were streaming when the emulator died cannot finish: like a BE
  // whose load fragment failed, their txns are rolled back.
  for (auto& [id, t] : txns_) {
    if (t.state == TxnState::Prepare) abort_txn(t, "[CANCELLED]load cancelled because the emulator restarted");
    else if (t.state == TxnState::Committed) {
      t.visible_at_ms = 0;
      apply_visible(t);
    }
  }
}

void Engine::replay(std::string_view rec) {
  Reader r{rec, 1};
  char type = rec.empty() ? '?' : rec[0];
  switch (type) {
    case 'D': {
      std::string db = r.s(), stmt = r.s();
      std::string ignored;
      try {
        exec_sql_inner(db, stmt, &ignored, true);
      } catch (const std::exception&) {
        // Logged DDL succeeded once; a replay failure means the log is from
        // an incompatible build. Keep going with what can be restored.
      }
      break;
    }
    case 'B': {
      Txn t;
      t.id = r.i64();
      t.db = r.s();
      t.table = r.s();
      t.label = r.s();
      t.table_id = r.i64();
      t.two_pc = r.i64() != 0;
      t.begin_ms = r.i64();
      t.timeout_s = r.i64();
      t.be = static_cast<int>(r.i64());
      next_txn_id_ = std::max(next_txn_id_, t.id + 1);
      if (auto* d = find_db(t.db)) d->labels[t.label].push_back(t.id);
      live_txns_.insert(t.id);
      txns_[t.id] = std::move(t);
      break;
    }
    case 'S': {
      int64_t id = r.i64();
      auto* t = find_txn(id);
      Txn scratch;
      if (!t) t = &scratch;
      t->schema_version = static_cast<uint64_t>(r.i64());
      t->row_count = r.i64();
      t->loaded = r.i64();
      t->filtered = r.i64();
      t->bytes = r.i64();
      int64_t n = r.i64();
      t->rows.clear();
      t->rows.reserve(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        StagedRow row;
        row.key = r.s();
        row.seq = r.s();
        row.line = r.s();
        if (r.p >= rec.size()) throw std::runtime_error("truncated wal row");
        char flags = rec[r.p++];
        row.del = (flags & 1) != 0;
        row.partial = (flags & 2) != 0;
        row.seq_missing = (flags & 4) != 0;
        t->rows.push_back(std::move(row));
      }
      break;
    }
    case 'P': {
      if (auto* t = find_txn(r.i64())) {
        t->state = TxnState::Precommitted;
        t->precommit_ms = r.i64();
      }
      break;
    }
    case 'C': {
      if (auto* t = find_txn(r.i64())) {
        t->state = TxnState::Committed;
        r.i64();
        t->visible_at_ms = r.i64();
      }
      break;
    }
    case 'V': {
      if (auto* t = find_txn(r.i64())) {
        int64_t ms = r.i64();
        apply_visible(*t);
        t->finish_ms = ms;
      }
      break;
    }
    case 'A': {
      if (auto* t = find_txn(r.i64())) {
        t->state = TxnState::Aborted;
        t->finish_ms = r.i64();
        t->abort_reason = r.s();
        t->rows.clear();
      }
      break;
    }
    case 'F': forget_txn(r.i64()); break;
    default: throw std::runtime_error("unknown wal record type");
  }
}

// ---- transactions ------------------------------------------------------------
void Engine::abort_txn(Txn& t, const std::string& reason) {
  t.state = TxnState::Aborted;
  t.abort_reason = reason;
  t.finish_ms = now_ms();
  t.rows.clear();
  t.rows.shrink_to_fit();
  ++stats_.aborts;
  std::string r = "A";
  put_i64(&r, t.id);
  put_i64(&r, t.finish_ms);
  put_s(&r, reason);
  wal_write(r, true);
}

void Engine::precommit_or_commit(Txn& t, bool publish_timeout, int64_t visible_after_ms) {
  wal_stage(t);
  int64_t now = now_ms();
  if (t.two_pc) {
    t.state = TxnState::Precommitted;
    t.precommit_ms = now;
    ++stats_.precommits;
    std::string r = "P";
    put_i64(&r, t.id);
    put_i64(&r, now);
    wal_write(r, true);
    return;
  }
  t.state = TxnState::Committed;
  t.visible_at_ms = publish_timeout ? now + visible_after_ms : 0;
  ++stats_.commits;
  std::string r = "C";
  put_i64(&r, t.id);
  put_i64(&r, now);
  put_i64(&r, t.visible_at_ms);
  wal_write(r, !(t.visible_at_ms == 0));
  if (t.visible_at_ms == 0) apply_visible(t);
}

std::vector<std::pair<std::string_view, std::string_view>> split_row_line(std::string_view l) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  auto skip_string = [&](size_t i) {  // l[i] == '"'; returns the index after the closing quote
    for (++i; i < l.size() && l[i] != '"'; ++i)
      if (l[i] == '\\') ++i;
    return std::min(i + 1, l.size());
  };
  size_t p = 1;
  while (p < l.size() && l[p] == '"') {
    size_t name_end = skip_string(p);
    std::string_view name = l.substr(p, name_end - p);
    size_t v = name_end + 1, e = v;  // past ':'
    if (e < l.size() && l[e] == '"') {
      e = skip_string(e);
    } else if (e < l.size() && (l[e] == '{' || l[e] == '[')) {
      int depth = 0;
      for (; e < l.size(); ++e) {
        if (l[e] == '"') { e = skip_string(e) - 1; continue; }
        if (l[e] == '{' || l[e] == '[') ++depth;
        else if ((l[e] == '}' || l[e] == ']') && --depth == 0) { ++e; break; }
      }
    } else {
      while (e < l.size() && l[e] != ',' && l[e] != '}') ++e;
    }
    out.emplace_back(name, l.substr(v, e - v));
    p = e + 1;  // past ',' (or the final '}')
  }
  return out;
}

std::string Engine::merge_partial_line(const Table& tb, const std::string* stored, const std::string& partial) {
  auto given = split_row_line(partial);
  std::vector<std::pair<std::string_view, std::string_view>> old;
  if (stored) old = split_row_line(*stored);
  std::string out = "{", qname;
  for (size_t c = 0; c < tb.cols.size(); ++c) {
    const Column& col = tb.cols[c];
    qname.clear();
    append_json_string(&qname, col.name);
    if (c) out += ',';
    out += qname;
    out += ':';
    auto find = [&](const auto& parts) -> const std::string_view* {
      for (auto& [n, v] : parts)
        if (n == qname) return &v;
      return nullptr;
    };
    if (auto* v = find(given)) out += *v;
    else if (auto* o = find(old)) out += *o;
    else out += col.def ? *col.def : "null";
  }
  return out + "}";
}

void Engine::apply_visible(Txn& t) {
  t.state = TxnState::Visible;
  t.finish_ms = now_ms();
  Table* tb = nullptr;
  if (auto* d = find_db(t.db))
    for (auto& [n, tab] : d->tables)
      if (tab->id == t.table_id) tb = tab.get();
  if (tb) {
    if (tb->schema_version != t.schema_version && !t.rows.empty()) {
      // Rows staged before an ALTER were rendered with the old columns; the
      // schema history is not kept, so migrate by column id from what the
      // lines carry (see migrate_rows).
      migrate_rows(*tb, {}, t.rows);
    }
    if (cfg_.count_only) {
      tb->count_only_rows += t.row_count;
    } else if (tb->model == Model::Duplicate) {
      for (auto& r : t.rows) tb->dup_rows.push_back(std::move(r.line));
    } else {
      bool has_seq = tb->seq_col >= 0 || tb->hidden_seq.has_value();
      tb->unique_rows.reserve(tb->unique_rows.size() + t.rows.size());
      for (auto& r : t.rows) {
        auto it = tb->unique_rows.find(r.key);
        if (r.partial) {
          // Columns the load did not set keep their stored values (a new or
          // deleted key gets defaults/NULL); an unset sequence value is the
          // stored one, or the lowest possible for a new key.
          const StoredRow* old = it != tb->unique_rows.end() ? &it->second : nullptr;
          const bool live = old && !old->deleted;
          if (r.seq_missing) r.seq = old ? old->seq : std::string();
          if (!r.del) r.line = merge_partial_line(*tb, live ? &old->line : nullptr, r.line);
        }
        if (has_seq) {
          if (it != tb->unique_rows.end() && it->second.seq > r.seq) continue;
          if (it == tb->unique_rows.end()) it = tb->unique_rows.emplace(std::move(r.key), StoredRow{}).first;
          it->second.seq = std::move(r.seq);
          it->second.deleted = r.del;
          if (r.del) it->second.line.clear();
          else it->second.line = std::move(r.line);
        } else if (r.del) {
          if (it != tb->unique_rows.end()) tb->unique_rows.erase(it);
        } else if (it != tb->unique_rows.end()) {
          it->second.line = std::move(r.line);
        } else {
          tb->unique_rows.emplace(std::move(r.key), StoredRow{std::move(r.line), {}, false});
        }
      }
    }
  }
  t.rows.clear();
  t.rows.shrink_to_fit();
  std::string r = "V";
  put_i64(&r, t.id);
  put_i64(&r, t.finish_ms);
  wal_write(r, true);
}

void Engine::forget_txn(int64_t id) {
  auto it = txns_.find(id);
  if (it == txns_.end()) return;
  if (auto* d = find_db(it->second.db)) {
    auto lit = d->labels.find(it->second.label);
    if (lit != d->labels.end()) {
      auto& v = lit->second;
      v.erase(std::remove(v.begin(), v.end(), id), v.end());
      if (v.empty()) d->labels.erase(lit);
    }
  }
  txns_.erase(it);
  std::string r = "F";
  put_i64(&r, id);
  wal_write(r, false);
}

void Engine::tick(int64_t now) {
  // Running txns: timeouts and publish.
  const std::vector<int64_t> live(live_txns_.begin(), live_txns_.end());
  for (int64_t id : live) {
    auto it = txns_.find(id);
    if (it == txns_.end()) {
      live_txns_.erase(id);
      continue;
    }
    Txn& t = it->second;
    switch (t.state) {
      case TxnState::Prepare:
        if (now - t.begin_ms > t.timeout_s * 1000) abort_txn(t, "timeout by txn manager");
        break;
      case TxnState::Precommitted:
        if (now - t.precommit_ms > cfg_.precommit_timeout_s * 1000) abort_txn(t, "timeout by txn manager");
        break;
      case TxnState::Committed:
        if (t.visible_at_ms && t.visible_at_ms <= now) apply_visible(t);
        break;
      case TxnState::Visible:
      case TxnState::Aborted:
        break;
    }
    if (t.state == TxnState::Visible || t.state == TxnState::Aborted) live_txns_.erase(id);
  }
  // Label retention: a full scan, but at most once a second.
  if (now - last_retention_scan_ms_ < 1000 && last_retention_scan_ms_ != 0) return;
  last_retention_scan_ms_ = now;
  std::vector<int64_t> forget;
  for (auto& [id, t] : txns_)
    if ((t.state == TxnState::Visible || t.state == TxnState::Aborted) &&
        now - t.finish_ms > cfg_.label_retention_s * 1000)
      forget.push_back(id);
  for (auto id : forget) forget_txn(id);
}

// ---- error logs ----------------------------------------------------------------
std::string Engine::add_error_log(const std::string& text, int be) {
  char name[128];
  ++error_log_seq_;
  std::snprintf(name, sizeof name, "__shard_%d/error_log_insert_stmt_%llx_%llx_%llx", static_cast<int>(error_log_seq_ % 8),
                static_cast<unsigned long long>(now_ms()), static_cast<unsigned long long>(error_log_seq_),
                static_cast<unsigned long long>(std::random_device{}()));
  error_logs_[name] = text;
  error_log_order_.push_back(name);
  // Bounded: error logs are diagnostics, not data.
  if (error_log_order_.size() > 1000) {
    error_logs_.erase(error_log_order_.front());
    error_log_order_.erase(error_log_order_.begin());
  }
  std::string host = be >= 0 && be < static_cast<int>(cfg_.be_addrs.size()) ? cfg_.be_addrs[static_cast<size_t>(be)]
                                                                            : std::string("127.0.0.1:8040");
  return "http://" + host + "/api/_load_error_log?file=" + name;
}

std::optional<std::string> Engine::error_log(const std::string& file) const {
  auto it = error_logs_.find(file);
  if (it == error_logs_.end()) return std::nullopt;
  return it->second;
}

// ---------------------------------------------------------------------------
// Stream load body processing.
class LoadImpl : public Load {
 public:
  LoadImpl(Engine& e, Txn& txn, const Table& tb, LoadReply base) : e_(e), reply_(std::move(base)) {
    txn_id_ = txn.id;
    table_id_ = tb.id;
    db_ = tb.db;
    table_ = tb.name;
    cols_ = tb.cols;
    schema_version_ = tb.schema_version;
    unique_ = tb.model == Model::Unique;
    seq_col_ = tb.seq_col;
    hidden_seq_ = tb.hidden_seq;
    count_only_ = e.config().count_only;
    be_ = txn.be;
    start_ms_ = now_ms();
  }
  ~LoadImpl() override {
    if (zs_init_) inflateEnd(&zs_);
  }

  // Plan from headers; returns an error message (full "[CODE]..." text) or "".
  std::string plan(const std::map<std::string, std::string>& h) {
    std::string fmt = lower(header(h, "format"));
    if (fmt.empty() || fmt == "csv") fmt_ = Fmt::Csv;
    else if (fmt == "csv_with_names") { fmt_ = Fmt::Csv; skip_lines_ = 1; }
    else if (fmt == "csv_with_names_and_types") { fmt_ = Fmt::Csv; skip_lines_ = 2; }
    else fmt_ = Fmt::Json;
    std::string rjbl = lower(header(h, "read_json_by_line")), soa = lower(header(h, "strip_outer_array"));
    strip_outer_ = soa == "true";
    by_line_ = rjbl == "true" || (rjbl.empty() && soa.empty());
    if (fmt_ == Fmt::Csv) {
      if (has_header(h, "column_separator")) col_sep_ = decode_sep(header(h, "column_separator"));
      if (has_header(h, "line_delimiter")) line_delim_ = decode_sep(header(h, "line_delimiter"));
      if (col_sep_.empty()) col_sep_ = "\t";
      if (line_delim_.empty()) line_delim_ = "\n";
      std::string enc = header(h, "enclose"), esc = header(h, "escape");
      if (enc.size() > 1) return "[INVALID_ARGUMENT]enclose must be single-char, actually is " + enc;
      if (esc.size() > 1) return "[INVALID_ARGUMENT]escape must be single-char, actually is " + esc;
      enclose_ = enc.empty() ? 0 : enc[0];
      escape_ = esc.empty() ? 0 : esc[0];
      trim_dq_ = lower(header(h, "trim_double_quotes")) == "true";
      if (has_header(h, "skip_lines")) skip_lines_ = std::atoll(header(h, "skip_lines").c_str());
    } else {
      line_delim_ = "\n";
    }
    std::string strict = lower(header(h, "strict_mode"));
    if (!strict.empty() && strict != "true" && strict != "false")
      return "[INVALID_ARGUMENT]Invalid strict mode format. Must be bool type";
    strict_ = strict == "true";
    if (has_header(h, "max_filter_ratio")) {
      try {
        max_filter_ratio_ = std::stod(header(h, "max_filter_ratio"));
      } catch (const std::exception&) {
        return "[INVALID_ARGUMENT]Invalid max_filter_ratio: " + header(h, "max_filter_ratio");
      }
    }
    std::string mt = header(h, "merge_type");
    std::string mtu = lower(mt);
    bool has_delete = has_header(h, "delete");
    if (mtu.empty() || mtu == "append") merge_ = Merge::Append;
    else if (mtu == "delete") merge_ = Merge::Delete;
    else if (mtu == "merge") merge_ = Merge::MergeOn;
    else return "[INVALID_ARGUMENT]Invalid merge type " + mt;
    if (merge_ == Merge::MergeOn && !has_delete)
      return "[ANALYSIS_ERROR]" + kFe + "Excepted DELETE ON clause when merge type is MERGE.";
    if (merge_ != Merge::MergeOn && has_delete)
      return "[ANALYSIS_ERROR]" + kFe + "Not support DELETE ON clause when merge type is not MERGE.";
    if (merge_ != Merge::Append && !unique_)
      return "[ANALYSIS_ERROR]" + kFe + "load by MERGE or DELETE is only supported in unique tables.";
    // Partial updates: the BE's checks (stream_load.cpp), in its order.
    std::string ukum = header(h, "unique_key_update_mode");
    if (!ukum.empty()) {
      std::string u = lower(ukum);
      if (u == "update_flexible_columns") {
        if (fmt_ != Fmt::Json)
          return "[INVALID_ARGUMENT]flexible partial update only support json format as input file currently";
        if (lower(header(h, "fuzzy_parse")) == "true")
          return "[INVALID_ARGUMENT]Don't support flexible partial update when 'fuzzy_parse' is enabled";
        for (const char* forbidden : {"columns", "jsonpaths", "hidden_columns", "function_column.sequence_col",
                                      "merge_type", "where"})
          if (!header(h, forbidden).empty())
            return std::string("[INVALID_ARGUMENT]Don't support flexible partial update when '") + forbidden +
                   "' is specified";
        partial_ = Partial::Flexible;
      } else if (u == "update_fixed_columns") {
        partial_ = Partial::Fixed;
      } else if (u != "upsert") {
        return "[INVALID_ARGUMENT]Invalid unique_key_partial_mode " + ukum +
               ", must be one of 'UPSERT', 'UPDATE_FIXED_COLUMNS' or 'UPDATE_FLEXIBLE_COLUMNS'";
      }
    } else if (lower(header(h, "partial_columns")) == "true") {
      partial_ = Partial::Fixed;
    }
    if (std::string nk = header(h, "partial_update_new_key_behavior"); !nk.empty()) {
      for (auto& c : nk) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (nk != "APPEND" && nk != "ERROR")
        return "[INVALID_ARGUMENT]Invalid partial_update_new_key_behavior " + nk + ", must be one of {'APPEND', 'ERROR'}";
      new_key_error_ = nk == "ERROR";
    }
    // FE planner: only merge-on-write UNIQUE tables (every UNIQUE table here);
    // fixed columns without a `columns` list is a plain upsert.
    if (partial_ != Partial::None && !unique_)
      return "[ANALYSIS_ERROR]" + kFe + "Only unique key merge on write support partial update";
    if (partial_ == Partial::Fixed && trim(header(h, "columns")).empty()) partial_ = Partial::None;
    for (const char* unsupported : {"where", "jsonpaths", "json_root"})
      if (has_header(h, unsupported))
        return std::string("[NOT_IMPLEMENTED_ERROR]header '") + unsupported + "' is not supported by the emulator";

    // Sources: the names the data carries, in order (CSV is positional).
    std::string columns = header(h, "columns");
    std::vector<std::pair<std::string, std::string>> mappings;  // target = source
    if (!columns.empty()) {
      std::string_view cs = columns;
      while (!cs.empty()) {
        // split on commas outside parentheses
        int depth = 0;
        size_t i = 0;
        for (; i < cs.size(); ++i) {
          if (cs[i] == '(') ++depth;
          else if (cs[i] == ')') --depth;
          else if (cs[i] == ',' && depth == 0) break;
        }
        std::string item(trim(cs.substr(0, i)));
        cs.remove_prefix(i < cs.size() ? i + 1 : i);
        auto strip = [](std::string s) {
          s = std::string(trim(s));
          if (s.size() >= 2 && s.front() == '`' && s.back() == '`') s = s.substr(1, s.size() - 2);
          return s;
        };
        auto eq = item.find('=');
        if (eq == std::string::npos) {
          src_names_.push_back(strip(item));
        } else {
          std::string target = strip(item.substr(0, eq)), source = strip(item.substr(eq + 1));
          bool ident = !source.empty();
          for (char c : source)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) ident = false;
          if (!ident)
            return "[NOT_IMPLEMENTED_ERROR]column expression '" + item +
                   "' is not supported by the emulator (only col or col=other_col)";
          mappings.emplace_back(target, source);
        }
      }
    } else {
      for (auto& c : cols_) src_names_.push_back(c.name);
      // Flexible rows may carry the delete sign and the hidden sequence column.
      if (partial_ == Partial::Flexible) {
        src_names_.push_back("__DORIS_DELETE_SIGN__");
        if (hidden_seq_) src_names_.push_back("__DORIS_SEQUENCE_COL__");
      }
      std::string hidden = header(h, "hidden_columns");
      std::string_view hs = hidden;
      while (!hs.empty()) {
        auto c = hs.find(',');
        std::string n(trim(hs.substr(0, c)));
        if (!n.empty()) src_names_.push_back(n);
        if (c == std::string_view::npos) break;
        hs.remove_prefix(c + 1);
      }
    }
    col_src_.assign(cols_.size(), -1);
    for (size_t i = 0; i < src_names_.size(); ++i) {
      const std::string& n = src_names_[i];
      if (iequals(n, "__DORIS_DELETE_SIGN__")) del_src_ = static_cast<int>(i);
      else if (iequals(n, "__DORIS_SEQUENCE_COL__")) seq_src_ = static_cast<int>(i);
      else {
        for (size_t c = 0; c < cols_.size(); ++c)
          if (iequals(cols_[c].name, n)) col_src_[c] = static_cast<int>(i);
      }
    }
    auto src_index = [&](const std::string& n) {
      for (size_t i = 0; i < src_names_.size(); ++i)
        if (iequals(src_names_[i], n)) return static_cast<int>(i);
      return -1;
    };
    for (auto& [target, source] : mappings) {
      int s = src_index(source);
      if (s < 0) return "[ANALYSIS_ERROR]" + kFe + "Unknown column '" + source + "' in 'table list'";
      if (iequals(target, "__DORIS_DELETE_SIGN__")) del_src_ = s;
      else if (iequals(target, "__DORIS_SEQUENCE_COL__")) seq_src_ = s;
      else {
        bool found = false;
        for (size_t c = 0; c < cols_.size(); ++c)
          if (iequals(cols_[c].name, target)) { col_src_[c] = s; found = true; }
        if (!found) return "[ANALYSIS_ERROR]" + kFe + "Unknown column '" + target + "' in '" + table_ + "'";
      }
    }
    if (partial_ == Partial::Fixed) {
      if (seq_src_ >= 0)  // only `columns` can have named it at this point
        return "[ANALYSIS_ERROR]" + kFe +
               "Partial update should not include invisible column except delete sign column: __DORIS_SEQUENCE_COL__";
      for (size_t c = 0; c < cols_.size(); ++c)
        if (cols_[c].key && col_src_[c] < 0)
          return "[ANALYSIS_ERROR]" + kFe + "Partial update should include all key columns, missing: " + cols_[c].name;
    }
    if (hidden_seq_) {
      std::string seq_src = header(h, "function_column.sequence_col");
      // A partial update may leave the sequence out: the stored value is kept.
      if (seq_src.empty() && seq_src_ < 0 && partial_ == Partial::None)
        return "[ANALYSIS_ERROR]" + kFe + "Table " + table_ + " has sequence column, need to specify the sequence column";
      if (!seq_src.empty()) {
        seq_src_ = src_index(seq_src);
        if (seq_src_ < 0) {
          // The sequence source may be a table column the data carries.
          int c = -1;
          for (size_t i = 0; i < cols_.size(); ++i)
            if (iequals(cols_[i].name, seq_src)) c = static_cast<int>(i);
          if (c < 0 || col_src_[static_cast<size_t>(c)] < 0)
            return "[ANALYSIS_ERROR]" + kFe + "Unknown column '" + seq_src + "' in 'table list'";
          seq_src_ = col_src_[static_cast<size_t>(c)];
        }
      }
    }
    // Columns a partial update leaves out come from the stored row (new keys
    // are checked per row in finish()).
    for (size_t c = 0; c < cols_.size() && partial_ == Partial::None; ++c)
      if (col_src_[c] < 0 && !cols_[c].nullable && !cols_[c].def)
        return "[ANALYSIS_ERROR]" + kFe + "Column has no default value. column: " + cols_[c].name;
    if (merge_ == Merge::MergeOn) {
      // Only "<col> = <literal>" predicates are understood.
      std::string pred = header(h, "delete");
      auto eq = pred.find('=');
      if (eq == std::string::npos)
        return "[NOT_IMPLEMENTED_ERROR]delete predicate '" + pred + "' is not supported by the emulator (use col=value)";
      std::string lhs(trim(std::string_view(pred).substr(0, eq))), rhs(trim(std::string_view(pred).substr(eq + 1)));
      if (!lhs.empty() && lhs.back() == '!') { merge_neq_ = true; lhs = std::string(trim(lhs.substr(0, lhs.size() - 1))); }
      if (rhs.size() >= 2 && (rhs.front() == '\'' || rhs.front() == '"')) rhs = rhs.substr(1, rhs.size() - 2);
      merge_src_ = src_index(lhs);
      if (merge_src_ < 0) return "[ANALYSIS_ERROR]" + kFe + "Unknown column '" + lhs + "' in 'table list'";
      merge_value_ = rhs;
    }
    for (auto& c : cols_) {
      std::string p;
      append_json_string(&p, c.name);
      p += ':';
      prefixes_.push_back(std::move(p));
    }
    vals_.resize(src_names_.size());
    present_.resize(src_names_.size());
    return "";
  }

  void set_limits(int64_t limit, bool json_whole, bool gz, bool deflate) {
    limit_ = limit;
    json_whole_ = json_whole;
    if (gz || deflate) {
      std::memset(&zs_, 0, sizeof zs_);
      // 16+MAX_WBITS: gzip wrapper; MAX_WBITS: zlib wrapper ("deflate").
      inflateInit2(&zs_, gz ? 16 + MAX_WBITS : MAX_WBITS);
      zs_init_ = true;
    }
  }

  bool feed(const char* data, size_t n) override {
    if (failed_) return false;
    received_ += static_cast<int64_t>(n);
    if (received_ > limit_) {
      fail_ = std::string(json_whole_ ? "[EXCEEDED_LIMIT]json body size " : "[EXCEEDED_LIMIT]body size ") +
              std::to_string(received_) + " exceeds the limit " + std::to_string(limit_);
      failed_ = true;
      return false;
    }
    if (!zs_init_) {
      consume(data, n);
      return true;
    }
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    zs_.avail_in = static_cast<uInt>(n);
    zbuf_.resize(1 << 18);
    while (zs_.avail_in > 0) {
      zs_.next_out = reinterpret_cast<Bytef*>(zbuf_.data());
      zs_.avail_out = static_cast<uInt>(zbuf_.size());
      int rc = inflate(&zs_, Z_NO_FLUSH);
      size_t produced = zbuf_.size() - zs_.avail_out;
      if (produced) consume(zbuf_.data(), produced);
      if (rc == Z_STREAM_END) {
        // Concatenated gzip members are legal; keep decoding.
        if (zs_.avail_in == 0) { zdone_ = true; break; }
        inflateReset(&zs_);
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail_ = std::string("[INTERNAL_ERROR]failed to decompress gzip data: ") + (zs_.msg ? zs_.msg : "inflate error");
        failed_ = true;
        return false;
      }
      if (rc == Z_BUF_ERROR && produced == 0) break;
    }
    return true;
  }

  void cancel(const std::string& reason) override {
    if (auto* t = e_.find_txn(txn_id_); t && t->state == TxnState::Prepare) e_.abort_txn(*t, reason);
    ++e_.stats().loads_failed;
  }

  int64_t txn_id() const override { return txn_id_; }
  int64_t received() const override { return received_; }

  Reply finish() override {
    int64_t read_done = now_ms();
    if (!failed_ && zs_init_ && received_ > 0 && !zdone_) {
      fail_ = "[INTERNAL_ERROR]failed to decompress gzip data: truncated stream";
      failed_ = true;
    }
    if (!failed_) {
      if (json_whole_) process_whole_json();
      else if (!pending_.empty()) {
        process_line(pending_);
        pending_.clear();
      }
    }
    if (!failed_ && partial_ != Partial::None && !count_only_)
      if (auto* d = e_.find_db(db_))
        for (auto& [n, tab] : d->tables)
          if (tab->id == table_id_) check_new_keys(*tab);
    auto& st = e_.stats();
    st.bytes += received_;
    reply_.bytes = received_;
    reply_.total = loaded_ + filtered_;
    reply_.filtered = filtered_;
    reply_.loaded = loaded_;
    reply_.read_ms = read_done - start_ms_;
    reply_.receive_ms = read_done - start_ms_;
    if (!errlog_.empty()) reply_.error_url = e_.add_error_log(errlog_, be_);
    Txn* t = e_.find_txn(txn_id_);
    auto fail = [&](const std::string& msg, const std::string& status = "Fail") {
      reply_.status = status;
      reply_.message = msg;
      reply_.loaded = 0;
      if (t && t->state == TxnState::Prepare) e_.abort_txn(*t, msg);
      ++st.loads_failed;
      reply_.load_ms = now_ms() - start_ms_;
      return Reply{reply_.render(), true};
    };
    if (!t || t->state != TxnState::Prepare) {
      std::string why = !t ? "transaction [" + std::to_string(txn_id_) + "] not found"
                           : "transaction [" + std::to_string(txn_id_) + "] is already aborted. abort reason: " +
                                 t->abort_reason;
      return fail("[ANALYSIS_ERROR]" + kFe + why);
    }
    if (failed_) return fail(fail_);
    if (auto f = e_.take_fault("fail_load", db_, table_, be_); f) return fail(f->message, f->status);
    if (auto f = e_.take_fault("too_many_versions", db_, table_, be_); f)
      return fail("[E-235]failed to init rowset builder. version count: 2001, exceed limit: 2000, tablet: " +
                  std::to_string(table_id_ * 10 + 1) +
                  ". Please reduce the frequency of loading data or adjust the max_tablet_version_num or "
                  "time_series_max_tablet_version_num in be.conf to a larger value.");
    if (filtered_ > 0 &&
        static_cast<double>(filtered_) / static_cast<double>(filtered_ + loaded_) > max_filter_ratio_ + 1e-12)
      return fail("[DATA_QUALITY_ERROR]too many filtered rows");
    Table* tb = nullptr;
    if (auto* d = e_.find_db(db_))
      for (auto& [n, tab] : d->tables)
        if (tab->id == table_id_) tb = tab.get();
    if (!tb) return fail("[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=" + table_);
    if (tb->schema_version != schema_version_) e_.migrate_rows(*tb, cols_, rows_);
    t->rows = std::move(rows_);
    t->row_count = loaded_;
    t->loaded = loaded_;
    t->filtered = filtered_;
    t->bytes = received_;
    t->schema_version = tb->schema_version;
    int64_t write_done = now_ms();
    reply_.write_ms = write_done - read_done;
    bool publish_timeout = false;
    int64_t visible_after = 0;
    if (!t->two_pc) {
      if (auto f = e_.take_fault("publish_timeout", db_, table_, be_); f) {
        publish_timeout = true;
        visible_after = f->visible_after_ms;
      }
    }
    e_.precommit_or_commit(*t, publish_timeout, visible_after);
    reply_.commit_ms = t->two_pc ? 0 : now_ms() - write_done;
    ++st.loads_ok;
    st.rows += loaded_;
    if (publish_timeout) {
      reply_.status = "Publish Timeout";
      reply_.message = "[PUBLISH_TIMEOUT]TStatus: transaction commit successfully, BUT data will be visible later";
    } else {
      reply_.status = "Success";
      reply_.message = "OK";
    }
    reply_.load_ms = now_ms() - start_ms_;
    return Reply{reply_.render(), false};
  }

 private:
  enum class Fmt { Csv, Json };
  enum class Merge { Append, Delete, MergeOn };

  void consume(const char* data, size_t n) {
    if (json_whole_) {
      pending_.append(data, n);
      return;
    }
    if (line_delim_.size() != 1) {
      pending_.append(data, n);
      size_t pos = 0, idx;
      while ((idx = pending_.find(line_delim_, pos)) != std::string::npos) {
        process_line(std::string_view(pending_).substr(pos, idx - pos));
        pos = idx + line_delim_.size();
      }
      pending_.erase(0, pos);
      return;
    }
    char d = line_delim_[0];
    const char* p = data;
    const char* end = data + n;
    if (!pending_.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(p, d, static_cast<size_t>(end - p)));
      if (!nl) {
        pending_.append(p, end);
        return;
      }
      pending_.append(p, nl);
      process_line(pending_);
      pending_.clear();
      p = nl + 1;
    }
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, d, static_cast<size_t>(end - p)));
      if (!nl) {
        pending_.assign(p, end);
        return;
      }
      process_line(std::string_view(p, static_cast<size_t>(nl - p)), end);
      p = nl + 1;
    }
  }

  // readable_end: how far past the line the caller's buffer may be read;
  // lines with SIMDJSON_PADDING bytes behind them are parsed in place.
  void process_line(std::string_view line, const char* readable_end = nullptr) {
    if (!line.empty() && line.back() == '\r' && line_delim_ == "\n") line.remove_suffix(1);
    if (skip_lines_ > 0) {
      --skip_lines_;
      return;
    }
    if (fmt_ == Fmt::Json) {
      std::string_view t = trim(line);
      if (t.empty()) return;
      if (count_only_ && t.front() == '{') {
        ++loaded_;
        return;
      }
      parse_json_text(t, readable_end);
    } else {
      if (line.empty()) return;
      if (count_only_) {
        ++loaded_;
        return;
      }
      parse_csv(line);
    }
  }

  void process_whole_json() {
    std::string_view t = trim(pending_);
    if (t.empty()) return;
    parse_json_text(t);
    pending_.clear();
  }

  void filter(std::string_view reason, std::string_view src) {
    ++filtered_;
    if (errlog_lines_ < 1000) {
      ++errlog_lines_;
      errlog_ += "Reason: ";
      errlog_ += reason;
      errlog_ += ". src line [";
      errlog_ += src.substr(0, 4096);
      errlog_ += "]; \n";
    }
  }

  void parse_json_text(std::string_view text, const char* readable_end = nullptr) {
    const char* buf = text.data();
    size_t cap = readable_end ? static_cast<size_t>(readable_end - text.data()) : 0;
    if (cap < text.size() + simdjson::SIMDJSON_PADDING) {
      linebuf_.assign(text);
      linebuf_.reserve(text.size() + simdjson::SIMDJSON_PADDING);
      buf = linebuf_.data();
      cap = linebuf_.capacity();
    }
    simdjson::ondemand::document doc;
    auto err = parser_.iterate(buf, text.size(), cap).get(doc);
    if (err) {
      filter(std::string("Parse json data for JsonDoc failed. error info: ") + simdjson::error_message(err), text);
      return;
    }
    simdjson::ondemand::json_type type;
    if (doc.type().get(type)) {
      filter("Parse json data for JsonDoc failed. invalid document", text);
      return;
    }
    if (type == simdjson::ondemand::json_type::array) {
      if (!strip_outer_) {
        filter("JSON data is array-object, `strip_outer_array` must be TRUE.", text);
        return;
      }
      simdjson::ondemand::array arr;
      if (doc.get_array().get(arr)) {
        filter("Parse json data for JsonDoc failed. invalid array", text);
        return;
      }
      for (auto elem : arr) {
        simdjson::ondemand::object obj;
        if (elem.get_object().get(obj)) {
          filter("Parse json data failed: array element is not an object", text);
          return;
        }
        if (count_only_) {
          ++loaded_;
          continue;
        }
        if (!read_object(obj, text)) return;
      }
      return;
    }
    if (type != simdjson::ondemand::json_type::object) {
      filter("Parse json data failed: not a JSON object", text);
      return;
    }
    if (strip_outer_ && !by_line_) {
      filter("JSON data is not an array-object, `strip_outer_array` must be FALSE.", text);
      return;
    }
    simdjson::ondemand::object obj;
    if (doc.get_object().get(obj)) {
      filter("Parse json data failed: not a JSON object", text);
      return;
    }
    if (count_only_) {
      ++loaded_;
      return;
    }
    read_object(obj, text);
  }

  // Returns false when the JSON itself is broken (caller stops the line).
  bool read_object(simdjson::ondemand::object& obj, std::string_view text) {
    std::fill(present_.begin(), present_.end(), 0);
    next_src_ = 0;
    for (auto field : obj) {
      std::string_view k;
      if (field.unescaped_key().get(k)) {
        filter("Parse json data failed: bad key", text);
        return false;
      }
      // Writers usually emit the keys in column order: try the slot after the
      // previous key first, then search.
      int si = -1;
      if (next_src_ < src_names_.size() && src_names_[next_src_] == k) si = static_cast<int>(next_src_);
      else
        for (size_t i = 0; i < src_names_.size(); ++i)
          if (src_names_[i].size() == k.size() && src_names_[i] == k) { si = static_cast<int>(i); break; }
      if (si < 0)
        for (size_t i = 0; i < src_names_.size(); ++i)
          if (iequals(src_names_[i], k)) { si = static_cast<int>(i); break; }
      next_src_ = si < 0 ? 0 : static_cast<size_t>(si) + 1;
      auto v = field.value();
      simdjson::ondemand::json_type jt;
      if (v.type().get(jt)) {
        filter("Parse json data failed: bad value", text);
        return false;
      }
      if (si < 0) {
        // Unknown keys are ignored, but the value must still be valid JSON.
        if (jt == simdjson::ondemand::json_type::object || jt == simdjson::ondemand::json_type::array) {
          std::string_view raw;
          if (raw_container(v, jt, &raw)) {
            filter("Parse json data failed: bad value", text);
            return false;
          }
        } else {
          std::string_view raw = v.raw_json_token();
          (void)raw;
        }
        continue;
      }
      InValue& iv = vals_[static_cast<size_t>(si)];
      present_[static_cast<size_t>(si)] = 1;
      simdjson::error_code err = simdjson::SUCCESS;
      switch (jt) {
        case simdjson::ondemand::json_type::null:
          iv.tag = InValue::Null;
          v.is_null();
          break;
        case simdjson::ondemand::json_type::string: {
          iv.tag = InValue::Str;
          // Without a backslash the unescaped text is the raw text between
          // the quotes: use it in place instead of unescaping into a copy.
          std::string_view tok = v.raw_json_token();
          while (!tok.empty() && tok.back() != '"') tok.remove_suffix(1);
          if (tok.size() >= 2 && !std::memchr(tok.data() + 1, '\\', tok.size() - 2)) {
            iv.text = tok.substr(1, tok.size() - 2);
            break;
          }
          err = v.get_string().get(iv.text);
          break;
        }
        case simdjson::ondemand::json_type::number:
          iv.tag = InValue::Num;
          iv.text = trim(std::string_view(v.raw_json_token()));
          break;
        case simdjson::ondemand::json_type::boolean:
          iv.tag = InValue::Bool;
          err = v.get_bool().get(iv.b);
          break;
        case simdjson::ondemand::json_type::object:
        case simdjson::ondemand::json_type::array:
          iv.tag = InValue::Raw;
          err = raw_container(v, jt, &iv.text);
          break;
      }
      if (err) {
        filter(std::string("Parse json data failed: ") + simdjson::error_message(err), text);
        return false;
      }
    }
    build_row(text);
    return true;
  }

  template <class V>
  static simdjson::error_code raw_container(V& v, simdjson::ondemand::json_type jt, std::string_view* out) {
    if (jt == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object o;
      if (auto e = v.get_object().get(o)) return e;
      return o.raw_json().get(*out);
    }
    simdjson::ondemand::array a;
    if (auto e = v.get_array().get(a)) return e;
    return a.raw_json().get(*out);
  }

  void parse_csv(std::string_view line) {
    std::fill(present_.begin(), present_.end(), 0);
    fields_.clear();
    csv_store_.clear();
    size_t p = 0;
    const std::string& sep = col_sep_;
    while (true) {
      if (enclose_ && p < line.size() && line[p] == enclose_) {
        std::string f;
        size_t i = p + 1;
        bool closed = false;
        for (; i < line.size(); ++i) {
          char c = line[i];
          if (escape_ && c == escape_ && i + 1 < line.size()) { f.push_back(line[++i]); continue; }
          if (c == enclose_) { closed = true; ++i; break; }
          f.push_back(c);
        }
        if (!closed) { filter("unclosed enclose character", line); return; }
        csv_store_.push_back(std::move(f));
        fields_.push_back({csv_store_.size() - 1, true});
        if (i >= line.size()) break;
        if (line.compare(i, sep.size(), sep) != 0) { filter("unexpected characters after enclosed field", line); return; }
        p = i + sep.size();
        continue;
      }
      size_t idx = line.find(sep, p);
      std::string_view f = line.substr(p, idx == std::string_view::npos ? std::string_view::npos : idx - p);
      csv_store_.emplace_back(f);
      fields_.push_back({csv_store_.size() - 1, false});
      if (idx == std::string_view::npos) break;
      p = idx + sep.size();
    }
    if (fields_.size() != src_names_.size()) {
      filter("actual column number in csv file is " + std::string(fields_.size() < src_names_.size() ? "less" : "more") +
                 " than schema column number.actual number: " + std::to_string(fields_.size()) +
                 ", column separator: [" + col_sep_ + "], line delimiter: [" +
                 (line_delim_ == "\n" ? std::string("\\n") : line_delim_) +
                 "], schema column number: " + std::to_string(src_names_.size()),
             line);
      return;
    }
    for (size_t i = 0; i < fields_.size(); ++i) {
      std::string_view f = csv_store_[fields_[i].first];
      InValue& iv = vals_[i];
      present_[i] = 1;
      if (!fields_[i].second && f == "\\N") {
        iv.tag = InValue::Null;
        continue;
      }
      if (trim_dq_ && f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
      iv.tag = InValue::Str;
      iv.text = f;
    }
    build_row(line);
  }

  void build_row(std::string_view src) {
    StagedRow r;
    std::string& line = r.line;
    line.reserve(src.size() + 16);
    line.push_back('{');
    std::string why;
    for (size_t c = 0; c < cols_.size(); ++c) {
      const Column& col = cols_[c];
      int si = col_src_[c];
      if (partial_ != Partial::None) {
        // Fixed: the columns named in `columns`; flexible: the keys this row has.
        bool given = si >= 0 && (partial_ == Partial::Fixed || present_[static_cast<size_t>(si)]);
        if (!given) {
          if (col.key) {
            filter("column_name[" + col.name + "], key column missing in a flexible partial update row", src);
            return;
          }
          if (static_cast<int>(c) == seq_col_) r.seq_missing = true;
          continue;
        }
      }
      if (line.size() > 1) line.push_back(',');
      line += prefixes_[c];
      std::string* kp = (unique_ && col.key) ? &r.key : (static_cast<int>(c) == seq_col_ ? &r.seq : nullptr);
      InValue dv;
      const InValue* v = (si >= 0 && present_[static_cast<size_t>(si)]) ? &vals_[static_cast<size_t>(si)] : nullptr;
      if (!v) {
        if (col.def && *col.def != "null") {
          dv.tag = col.def->front() == '"' ? InValue::Str : InValue::Num;
          dv.text = dv.tag == InValue::Str ? std::string_view(*col.def).substr(1, col.def->size() - 2)
                                           : std::string_view(*col.def);
          v = &dv;
        } else {
          dv.tag = InValue::Null;
          v = &dv;
        }
      }
      if (v->tag == InValue::Null) {
        if (!col.nullable) {
          filter("column_name[" + col.name + "], null value for not null column", src);
          return;
        }
        line += "null";
        if (kp) encode_null(kp);
        continue;
      }
      size_t mark = line.size(), kmark = kp ? kp->size() : 0;
      if (kp) encode_not_null(kp);
      why.clear();
      if (!convert(col.type, *v, &line, kp, &why)) {
        line.resize(mark);
        if (kp) kp->resize(kmark);
        bool too_long = why.rfind("the length", 0) == 0;
        if (strict_ || too_long || !col.nullable) {
          filter("column_name[" + col.name + "], the value is incorrect: " + why + ", src value is " +
                     std::string(v->text.substr(0, 256)),
                 src);
          return;
        }
        line += "null";
        if (kp) encode_null(kp);
      }
    }
    line.push_back('}');
    if (hidden_seq_) {
      const InValue* v = seq_src_ >= 0 && present_[static_cast<size_t>(seq_src_)] ? &vals_[static_cast<size_t>(seq_src_)] : nullptr;
      if (partial_ != Partial::None && (seq_src_ < 0 || (partial_ == Partial::Flexible && !v))) r.seq_missing = true;
      else if (!v || v->tag == InValue::Null) encode_null(&r.seq);
      else {
        std::string scratch;
        encode_not_null(&r.seq);
        if (!convert(*hidden_seq_, *v, &scratch, &r.seq, &why)) {
          filter("column_name[__DORIS_SEQUENCE_COL__], the value is incorrect: " + why, src);
          return;
        }
      }
    }
    if (merge_ == Merge::Delete) r.del = true;
    else if (merge_ == Merge::MergeOn) {
      const InValue& mv = vals_[static_cast<size_t>(merge_src_)];
      bool eq = present_[static_cast<size_t>(merge_src_)] && mv.tag != InValue::Null &&
                (mv.tag == InValue::Bool ? (mv.b ? "true" : "false") == merge_value_ : mv.text == merge_value_);
      r.del = merge_neq_ ? !eq : eq;
    } else if (del_src_ >= 0 && present_[static_cast<size_t>(del_src_)]) {
      const InValue& dv = vals_[static_cast<size_t>(del_src_)];
      if (dv.tag == InValue::Bool) r.del = dv.b;
      else if (dv.tag != InValue::Null) {
        std::string_view t = trim(dv.text);
        if (t == "1" || iequals(t, "true")) r.del = true;
        else if (t == "0" || iequals(t, "false") || t.empty()) r.del = false;
        else {
          filter("column_name[__DORIS_DELETE_SIGN__], the value is incorrect, src value is " + std::string(t), src);
          return;
        }
      }
    }
    r.partial = partial_ != Partial::None;
    ++loaded_;
    rows_.push_back(std::move(r));
  }

  // Partial update rows whose key the table does not have (nor an earlier row
  // of this load): ERROR fails the load; APPEND needs a value for every
  // NOT NULL column without a default that the row leaves out.
  void check_new_keys(const Table& tb) {
    std::unordered_set<std::string> added;
    size_t out = 0;
    for (size_t i = 0; i < rows_.size(); ++i) {
      StagedRow& r = rows_[i];
      auto it = tb.unique_rows.find(r.key);
      bool exists = (it != tb.unique_rows.end() && !it->second.deleted) || added.count(r.key);
      if (r.del) {
        added.erase(r.key);
      } else if (!exists) {
        auto parts = split_row_line(r.line);
        auto has = [&](size_t c) {
          std::string_view q(prefixes_[c].data(), prefixes_[c].size() - 1);  // without ':'
          for (auto& [n, v] : parts)
            if (n == q) return true;
          return false;
        };
        if (new_key_error_) {
          std::string key;
          for (size_t c = 0; c < cols_.size(); ++c) {
            if (!cols_[c].key) continue;
            std::string_view v;
            for (auto& [n, tok] : parts)
              if (n == std::string_view(prefixes_[c].data(), prefixes_[c].size() - 1)) v = tok;
            if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
            if (!key.empty()) key += ", ";
            key += v;
          }
          fail_ = "[E-7003]Can't append new rows in partial update when partial_update_new_key_behavior is ERROR. "
                  "Row with key=[" + key + "] is not in table.";
          failed_ = true;
          return;
        }
        int missing = -1;
        for (size_t c = 0; c < cols_.size() && missing < 0; ++c)
          if (!cols_[c].nullable && !cols_[c].def && !has(c)) missing = static_cast<int>(c);
        if (missing >= 0) {
          filter("the unmentioned column `" + cols_[static_cast<size_t>(missing)].name +
                     "` should have default value or be nullable for newly inserted rows in non-strict mode partial update",
                 r.line);
          --loaded_;
          continue;
        }
        added.insert(r.key);
      }
      if (out != i) rows_[out] = std::move(r);
      ++out;
    }
    rows_.resize(out);
  }

  Engine& e_;
  LoadReply reply_;
  int64_t txn_id_ = 0, table_id_ = 0;
  std::string db_, table_;
  std::vector<Column> cols_;
  uint64_t schema_version_ = 0;
  bool unique_ = false;
  int seq_col_ = -1;
  std::optional<ColType> hidden_seq_;
  bool count_only_ = false;
  int be_ = 0;
  int64_t start_ms_ = 0;

  Fmt fmt_ = Fmt::Csv;
  bool by_line_ = true, strip_outer_ = false, json_whole_ = false;
  std::string col_sep_ = "\t", line_delim_ = "\n";
  char enclose_ = 0, escape_ = 0;
  bool trim_dq_ = false;
  int64_t skip_lines_ = 0;
  bool strict_ = false;
  double max_filter_ratio_ = 0;
  Merge merge_ = Merge::Append;
  enum class Partial { None, Fixed, Flexible } partial_ = Partial::None;
  bool new_key_error_ = false;  // partial_update_new_key_behavior: ERROR
  int merge_src_ = -1;
  std::string merge_value_;
  bool merge_neq_ = false;

  std::vector<std::string> src_names_;
  std::vector<int> col_src_;
  int del_src_ = -1, seq_src_ = -1;
  std::vector<std::string> prefixes_;
  std::vector<InValue> vals_;
  std::vector<char> present_;
  size_t next_src_ = 0;
  std::vector<std::pair<size_t, bool>> fields_;
  std::vector<std::string> csv_store_;

  int64_t limit_ = INT64_MAX;
  z_stream zs_{};
  bool zs_init_ = false, zdone_ = false;
  std::string zbuf_;
  int64_t received_ = 0;
  std::string pending_, linebuf_;
  simdjson::ondemand::parser parser_;
  std::vector<StagedRow> rows_;
  int64_t loaded_ = 0, filtered_ = 0;
  std::string errlog_;
  int64_t errlog_lines_ = 0;
  bool failed_ = false;
  std::string fail_;
};

std::unique_ptr<Load> Engine::start_load(const LoadRequest& req, Reply* early) {
  const auto& h = req.headers;
  ++stats_.loads;
  int64_t t0 = now_ms();
  bool two_pc = header(h, "two_phase_commit") == "true";
  std::string label = header(h, "label");
  if (!has_header(h, "label")) label = uuid();
  std::string comment = header(h, "comment");
  auto fail = [&](const std::string& msg) {
    ++stats_.loads_failed;
    *early = fail_reply(label, comment, two_pc, msg);
    return nullptr;
  };
  std::string gc = lower(header(h, "group_commit"));
  if (has_header(h, "group_commit") && gc != "async_mode" && gc != "sync_mode" && gc != "off_mode")
    return fail("[INVALID_ARGUMENT]group_commit can only be [async_mode, sync_mode, off_mode]");
  std::string user, pw;
  if (!parse_basic(req.authorization, &user, &pw)) return fail("[NOT_AUTHORIZED]no valid Basic authorization");
  std::string fmt = lower(header(h, "format"));
  static const std::vector<std::string> known{"", "csv", "json", "csv_with_names", "csv_with_names_and_types",
                                              "parquet", "orc", "arrow", "hive_text"};
  if (std::find(known.begin(), known.end(), fmt) == known.end())
    return fail("[INVALID_ARGUMENT]unknown data format, format=" + header(h, "format"));
  if (fmt == "parquet" || fmt == "orc" || fmt == "arrow" || fmt == "hive_text")
    return fail("[NOT_IMPLEMENTED_ERROR]format " + fmt + " is not supported by the emulator");
  std::string ct = lower(header(h, "compress_type"));
  bool gz = ct == "gz" || ct == "gzip", deflate = ct == "deflate";
  if (!ct.empty() && !gz && !deflate) {
    static const std::vector<std::string> doris_ct{"lzo", "bz2", "lz4", "lzop", "lz4frame", "zstd", "snappy", "plain"};
    if (ct == "plain") gz = false;
    else if (std::find(doris_ct.begin(), doris_ct.end(), ct) != doris_ct.end())
      return fail("[NOT_IMPLEMENTED_ERROR]compress_type " + ct + " is not supported by the emulator");
    else return fail("[INVALID_ARGUMENT]unknown compress type, compress_type=" + header(h, "compress_type"));
  }
  if (req.content_length && req.chunked)
    return fail("[INVALID_ARGUMENT]please do not set both content_length and transfer-encoding");
  if (!req.content_length && !req.chunked)
    return fail(
        "[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set content_length or "
        "transfer-encoding=chunked");
  std::string rjbl = lower(header(h, "read_json_by_line")), soa = lower(header(h, "strip_outer_array"));
  bool json_whole = fmt == "json" && !(rjbl == "true" || (rjbl.empty() && soa.empty()));
  int64_t limit = (json_whole ? cfg_.streaming_load_json_max_mb : cfg_.streaming_load_max_mb) * 1024 * 1024;
  if (req.content_length && *req.content_length > limit)
    return fail(std::string(json_whole ? "[EXCEEDED_LIMIT]json body size " : "[EXCEEDED_LIMIT]body size ") +
                std::to_string(*req.content_length) + " exceeds the limit " + std::to_string(limit));
  int64_t timeout_s = cfg_.default_load_timeout_s;
  if (has_header(h, "timeout")) {
    try {
      size_t used = 0;
      timeout_s = std::stoll(header(h, "timeout"), &used);
      if (used != header(h, "timeout").size()) throw std::invalid_argument("trailing characters");
    } catch (const std::exception& e) {
      return fail("[INVALID_ARGUMENT]Invalid timeout format, " + std::string(e.what()));
    }
  }
  if (has_header(h, "partitions") && has_header(h, "temporary_partitions"))
    return fail("[INVALID_ARGUMENT]Can not specify both partitions and temporary partitions");
  if (auto f = take_fault("fail_load_header", req.db, req.table, req.be); f) {
    ++stats_.loads_failed;
    LoadReply r;
    r.label = label;
    r.comment = comment;
    r.two_pc = two_pc;
    r.status = f->status;
    r.message = f->message;
    *early = Reply{r.render(), true};
    return nullptr;
  }
  // --- begin txn on the "FE" ---
  auto it = cfg_.users.find(user);
  if (it == cfg_.users.end() || it->second != pw) return fail("[ANALYSIS_ERROR]" + kFe + denied_text(req.authorization));
  Database* db = find_db(req.db);
  if (!db) return fail("[NOT_FOUND]TStatus: errCode = 7, detailMessage = unknown database, database=" + req.db);
  auto tit = db->tables.find(req.table);
  if (tit == db->tables.end())
    return fail("[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=" + req.table);
  Table& tb = *tit->second;
  if (!label_ok(label))
    return fail("[ANALYSIS_ERROR]" + kFe + "Label format error. regex: ^[-_A-Za-z0-9:]{1,128}$, label: " + label);
  if (auto lit = db->labels.find(label); lit != db->labels.end()) {
    for (int64_t id : lit->second) {
      Txn* t = find_txn(id);
      if (!t || t->state == TxnState::Aborted) continue;
      ++stats_.loads_failed;
      LoadReply r;
      r.label = label;
      r.comment = comment;
      r.two_pc = two_pc;
      r.status = "Label Already Exists";
      r.existing = t->state == TxnState::Prepare ? "RUNNING"
                   : t->state == TxnState::Precommitted ? "PRECOMMITTED" : "FINISHED";
      r.message = "[LABEL_ALREADY_EXISTS]" + kFe + "Label [" + label + "] has already been used, relate to txn [" +
                  std::to_string(id) + "]";
      *early = Reply{r.render(), true};
      return nullptr;
    }
  }
  int64_t running = running_txns(*db);
  if (take_fault("running_txn_limit", req.db, req.table, req.be) || running >= cfg_.max_running_txns)
    return fail("[ANALYSIS_ERROR]" + kFe + "current running txns on db " + std::to_string(db->id) + " is " +
                std::to_string(running) + ", larger than limit " + std::to_string(cfg_.max_running_txns));
  Txn txn;
  txn.id = next_txn_id_++;
  txn.db = req.db;
  txn.table = req.table;
  txn.table_id = tb.id;
  txn.label = label;
  txn.two_pc = two_pc;
  txn.begin_ms = now_ms();
  txn.timeout_s = timeout_s;
  txn.be = req.be;
  txn.schema_version = tb.schema_version;
  {
    std::string r = "B";
    put_i64(&r, txn.id);
    put_s(&r, txn.db);
    put_s(&r, txn.table);
    put_s(&r, txn.label);
    put_i64(&r, txn.table_id);
    put_i64(&r, txn.two_pc ? 1 : 0);
    put_i64(&r, txn.begin_ms);
    put_i64(&r, txn.timeout_s);
    put_i64(&r, txn.be);
    wal_write(r, false);
  }
  db->labels[label].push_back(txn.id);
  live_txns_.insert(txn.id);
  Txn& t = txns_[txn.id] = std::move(txn);
  LoadReply base;
  base.txn_id = t.id;
  base.label = label;
  base.comment = comment;
  base.two_pc = two_pc;
  base.begin_ms = now_ms() - t0;
  auto load = std::make_unique<LoadImpl>(*this, t, tb, base);
  std::string err = load->plan(h);
  if (!err.empty()) {
    abort_txn(t, err);
    ++stats_.loads_failed;
    base.message = err;
    *early = Reply{base.render(), true};
    return nullptr;
  }
  load->set_limits(limit, json_whole, gz, deflate);
  return load;
}

// ---- 2PC -------------------------------------------------------------------------
Reply Engine::two_pc_error(const std::string& status, const std::string& msg) const {
  PrettyObject o;
  o.str("status", status).str("msg", msg);
  return Reply{o.done(false), false};
}

Reply Engine::txn_2pc(const std::string& dbname, const std::map<std::string, std::string>& h,
                      const std::string& authorization, int be) {
  ++stats_.requests;
  std::string op = header(h, "txn_operation");
  std::string id_s = header(h, "txn_id");
  std::string label = header(h, "label");
  std::optional<int64_t> id;
  if (!id_s.empty()) {
    try {
      id = std::stoll(id_s);  // same parser as the BE, so "12abc" is 12 there too
    } catch (const std::exception& e) {
      return two_pc_error("INTERNAL_ERROR", "convert txn_id [" + id_s + "] failed, reason=" + e.what());
    }
  }
  if (op != "commit" && op != "abort")
    return two_pc_error("INTERNAL_ERROR", "transaction operation should be 'commit' or 'abort'");
  if (!id && label.empty()) return two_pc_error("INVALID_ARGUMENT", "No transaction id or label selected.");
  if (check_auth(authorization) != Auth::Ok) return two_pc_error("ANALYSIS_ERROR", kFe + denied_text(authorization));
  Database* db = find_db(dbname);
  if (!db) return two_pc_error("ANALYSIS_ERROR", kFe + "unknown database, database=" + dbname);
  Txn* t = nullptr;
  if (id) {
    t = find_txn(*id);
    if (t && t->db != dbname) t = nullptr;
    if (!t) return two_pc_error("ANALYSIS_ERROR", kFe + "transaction [" + std::to_string(*id) + "] not found");
  } else {
    auto lit = db->labels.find(label);
    if (lit == db->labels.end() || lit->second.empty())
      return two_pc_error("ANALYSIS_ERROR", kFe + "transaction not found, label=" + label);
    for (int64_t tid : lit->second) {
      Txn* c = find_txn(tid);
      if (c && (c->state == TxnState::Precommitted || (op == "abort" && c->state == TxnState::Prepare))) t = c;
    }
    if (!t) return two_pc_error("ANALYSIS_ERROR", kFe + "running transaction not found, label=" + label);
  }
  std::string tx = "transaction [" + std::to_string(t->id) + "] ";
  std::optional<Fault> injected;
  if (op == "commit") injected = take_fault("fail_commit", t->db, t->table, be);
  auto injected_reply = [&]() {
    Reply r = two_pc_error(injected->status, injected->message);
    r.reset = injected->reset;
    return r;
  };
  if (injected && !injected->apply) return injected_reply();
  if (op == "commit") {
    switch (t->state) {
      case TxnState::Precommitted: break;
      case TxnState::Committed: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already committed, not pre-committed.");
      case TxnState::Visible: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already visible, not pre-committed.");
      case TxnState::Aborted:
        return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already aborted. abort reason: " + t->abort_reason);
      case TxnState::Prepare: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is prepare, not pre-committed.");
    }
    Table* tb = nullptr;
    for (auto& [n, tab] : db->tables)
      if (tab->id == t->table_id) tb = tab.get();
    if (!tb) return two_pc_error("ANALYSIS_ERROR", kFe + "table not found, tableName=" + t->table);
    t->state = TxnState::Committed;
    t->visible_at_ms = 0;
    ++stats_.commits;
    std::string r = "C";
    put_i64(&r, t->id);
    put_i64(&r, now_ms());
    put_i64(&r, 0);
    wal_write(r, false);
    apply_visible(*t);
  } else {
    switch (t->state) {
      case TxnState::Prepare:
      case TxnState::Precommitted: abort_txn(*t, "User Abort"); break;
      case TxnState::Aborted:
        return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already aborted, abort reason: " + t->abort_reason);
      case TxnState::Committed: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already COMMITTED, could not abort.");
      case TxnState::Visible: return two_pc_error("ANALYSIS_ERROR", kFe + tx + "is already VISIBLE, could not abort.");
    }
  }
  if (injected) return injected_reply();
  std::string msg;
  if (!label.empty()) msg += "label [" + label + "] ";
  if (id) msg += "transaction [" + std::to_string(*id) + "] ";
  msg += op + " successfully.";
  return two_pc_error("Success", msg);
}

// ---- inspection ----------------------------------------------------------------------
std::string Engine::tables_json() const {
  boost::json::array arr;
  for (auto& [dn, d] : dbs_)
    for (auto& [tn, t] : d->tables)
      arr.push_back(boost::json::object{{"db", dn},
                                        {"table", tn},
                                        {"model", t->model == Model::Unique ? "UNIQUE" : "DUPLICATE"},
                                        {"rows", t->visible_rows()}});
  return boost::json::serialize(boost::json::object{{"tables", arr}});
}

std::optional<std::string> Engine::rows_jsonl(const std::string& db, const std::string& table) const {
  const Database* d = find_db(db);
  if (!d) return std::nullopt;
  auto it = d->tables.find(table);
  if (it == d->tables.end()) return std::nullopt;
  const Table& t = *it->second;
  std::string out;
  if (t.model == Model::Duplicate) {
    for (auto& l : t.dup_rows) { out += l; out += '\n'; }
    return out;
  }
  std::vector<const std::pair<const std::string, StoredRow>*> v;
  v.reserve(t.unique_rows.size());
  for (auto& kv : t.unique_rows)
    if (!kv.second.deleted) v.push_back(&kv);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (auto* kv : v) { out += kv->second.line; out += '\n'; }
  return out;
}

std::optional<std::pair<std::string, int64_t>> Engine::checksum(const std::string& db, const std::string& table) const {
  auto rows = rows_jsonl(db, table);
  if (!rows) return std::nullopt;
  // Order-independent: the sum of per-row FNV-1a hashes, so a DUPLICATE table
  // loaded in a different order still compares equal.
  uint64_t sum = 0;
  int64_t n = 0;
  std::string_view s = *rows;
  while (!s.empty()) {
    auto nl = s.find('\n');
    std::string_view line = s.substr(0, nl);
    uint64_t hsh = 1469598103934665603ULL;
    for (unsigned char c : line) { hsh ^= c; hsh *= 1099511628211ULL; }
    sum += hsh;
    ++n;
    s.remove_prefix(nl == std::string_view::npos ? s.size() : nl + 1);
  }
  const Table* t = find_db(db)->tables.at(table).get();
  n += t->count_only_rows;
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(sum));
  return std::make_pair(std::string(b), n);
}

std::string Engine::txns_json(const std::string& db) const {
  boost::json::array arr;
  for (auto& [id, t] : txns_) {
    if (!db.empty() && t.db != db) continue;
    arr.push_back(boost::json::object{{"txn_id", id},
                                      {"db", t.db},
                                      {"table", t.table},
                                      {"label", t.label},
                                      {"state", to_string(t.state)},
                                      {"two_phase_commit", t.two_pc},
                                      {"rows", t.loaded},
                                      {"filtered", t.filtered},
                                      {"bytes", t.bytes},
                                      {"abort_reason", t.abort_reason}});
  }
  return boost::json::serialize(boost::json::object{{"txns", arr}});
}

std::string Engine::stats_json() const {
  int64_t running = 0;
  for (auto& [id, t] : txns_)
    if (t.state == TxnState::Prepare || t.state == TxnState::Precommitted || t.state == TxnState::Committed) ++running;
  return boost::json::serialize(boost::json::object{{"loads", stats_.loads},
                                                    {"loads_ok", stats_.loads_ok},
                                                    {"loads_failed", stats_.loads_failed},
                                                    {"precommits", stats_.precommits},
                                                    {"commits", stats_.commits},
                                                    {"aborts", stats_.aborts},
                                                    {"bytes", stats_.bytes},
                                                    {"rows", stats_.rows},
                                                    {"txn_requests", stats_.requests},
                                                    {"running_txns", running}});
}

// ---- faults --------------------------------------------------------------------------
std::string Fault::to_json() const {
  boost::json::object o{{"id", id}, {"type", type}, {"remaining", remaining}};
  if (!db.empty()) o["db"] = db;
  if (!table.empty()) o["table"] = table;
  if (be >= 0) o["be"] = be;
  if (!status.empty()) o["status"] = status;
  if (!message.empty()) o["message"] = message;
  if (bytes) o["bytes"] = bytes;
  if (ms) o["ms"] = ms;
  if (type == "publish_timeout") o["visible_after_ms"] = visible_after_ms;
  if (apply) o["apply"] = true;
  if (reset) o["reset"] = true;
  return boost::json::serialize(o);
}

std::string Engine::add_fault(const std::string& body) {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) throw std::invalid_argument("fault body must be a JSON object: " + body);
  auto& o = v.as_object();
  auto s = [&](const char* k, std::string def = "") {
    auto* p = o.if_contains(k);
    if (!p) return def;
    if (!p->is_string()) throw std::invalid_argument(std::string("field '") + k + "' must be a string");
    return std::string(p->as_string());
  };
  auto i = [&](const char* k, int64_t def) -> int64_t {
    auto* p = o.if_contains(k);
    if (!p) return def;
    if (!p->is_int64()) throw std::invalid_argument(std::string("field '") + k + "' must be an integer");
    return p->as_int64();
  };
  auto b = [&](const char* k) {
    auto* p = o.if_contains(k);
    return p && p->is_bool() && p->as_bool();
  };
  Fault f;
  f.type = s("type");
  f.db = s("db");
  f.table = s("table");
  f.be = static_cast<int>(i("be", -1));
  f.remaining = i("count", 1);
  f.bytes = i("bytes", 0);
  f.ms = i("ms", 0);
  f.visible_after_ms = i("visible_after_ms", 1000);
  f.apply = b("apply");
  f.reset = b("reset");
  f.phase = s("phase", "body");
  if (f.remaining == 0) throw std::invalid_argument("count must be positive or -1");
  int64_t affected = 0;
  if (f.type == "fail_load") {
    f.status = s("status", "Fail");
    f.message = s("message", "[INTERNAL_ERROR]injected failure");
    if (f.phase == "header") f.type = "fail_load_header";
    else if (f.phase != "body") throw std::invalid_argument("phase must be 'header' or 'body'");
  } else if (f.type == "fail_commit") {
    f.status = s("status", "ANALYSIS_ERROR");
    f.message = s("message", kFe + "injected commit failure");
  } else if (f.type == "reset_after_bytes" || f.type == "delay_response" || f.type == "delay_continue" ||
             f.type == "delay_commit" || f.type == "publish_timeout" || f.type == "too_many_versions" ||
             f.type == "running_txn_limit") {
  } else if (f.type == "be_offline" || f.type == "be_online") {
    if (f.be < 0 || f.be >= static_cast<int>(cfg_.be_addrs.size()))
      throw std::invalid_argument("be must be a BE index 0.." + std::to_string(cfg_.be_addrs.size() - 1));
    faults_.erase(std::remove_if(faults_.begin(), faults_.end(),
                                 [&](const Fault& x) { return x.type == "be_offline" && x.be == f.be; }),
                  faults_.end());
    if (f.type == "be_offline") {
      f.remaining = -1;
      f.id = next_fault_id_++;
      faults_.push_back(f);
    }
    if (on_be_state) on_be_state(f.be, f.type == "be_online");
    return f.type == "be_offline" ? f.to_json() : boost::json::serialize(boost::json::object{{"be", f.be}, {"online", true}});
  } else if (f.type == "expire_precommitted") {
    for (auto& [id, t] : txns_)
      if (t.state == TxnState::Precommitted && (f.db.empty() || t.db == f.db) && (f.table.empty() || t.table == f.table)) {
        abort_txn(t, "timeout by txn manager");
        ++affected;
      }
    return boost::json::serialize(boost::json::object{{"type", f.type}, {"aborted", affected}});
  } else if (f.type == "drop_labels") {
    std::vector<int64_t> ids;
    for (auto& [id, t] : txns_)
      if ((t.state == TxnState::Visible || t.state == TxnState::Aborted) && (f.db.empty() || t.db == f.db))
        ids.push_back(id);
    for (auto id : ids) forget_txn(id);
    return boost::json::serialize(boost::json::object{{"type", f.type}, {"dropped", static_cast<int64_t>(ids.size())}});
  } else {
    throw std::invalid_argument("unknown fault type '" + f.type + "'");
  }
  f.id = next_fault_id_++;
  faults_.push_back(f);
  return f.to_json();
}

std::string Engine::faults_json() const {
  std::string r = "{\"faults\":[";
  for (size_t i = 0; i < faults_.size(); ++i) r += (i ? "," : "") + faults_[i].to_json();
  return r + "]}";
}

bool Engine::delete_fault(int64_t id) {
  for (auto it = faults_.begin(); it != faults_.end(); ++it)
    if (it->id == id) {
      if (it->type == "be_offline" && on_be_state) on_be_state(it->be, true);
      faults_.erase(it);
      return true;
    }
  return false;
}

void Engine::clear_faults() {
  for (auto& f : faults_)
    if (f.type == "be_offline" && on_be_state) on_be_state(f.be, true);
  faults_.clear();
}

std::optional<Fault> Engine::take_fault(const std::string& type, const std::string& db, const std::string& table, int be) {
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->type != type) continue;
    if (!it->db.empty() && it->db != db) continue;
    if (!it->table.empty() && it->table != table) continue;
    if (it->be >= 0 && it->be != be) continue;
    Fault f = *it;
    if (it->remaining > 0 && --it->remaining == 0) faults_.erase(it);
    return f;
  }
  return std::nullopt;
}

bool Engine::be_offline(int be) const {
  for (auto& f : faults_)
    if (f.type == "be_offline" && f.be == be) return true;
  return false;
}

}  // namespace cdc2doris::emu
