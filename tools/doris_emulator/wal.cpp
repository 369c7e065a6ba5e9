// Write-ahead persistence of the engine: append, fdatasync, replay on start.
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/engine_internal.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace cdc2doris::emu {
using namespace detail;

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
  // Committed txns are published, in commit order.
  publish_due(0, true);
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
        publishing_.push_back(t->id);  // in commit order; its 'V' follows unless it was still publishing
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
        note_final(*t);
      }
      break;
    }
    case 'F': forget_txn(r.i64()); break;
    case 'J':
    case 'K': replay_alter_job(type, rec); break;
    default: throw std::runtime_error("unknown wal record type");
  }
}

}  // namespace cdc2doris::emu
