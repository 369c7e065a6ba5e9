#include "state/rocksdb_store.hpp"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <tuple>

#include "state/codec.hpp"
#include "state/detail.hpp"
#include "state/dir_lock.hpp"

namespace cdc2doris::state {

namespace {

using codec::DecodeError;
using codec::Reader;
using Kind = StateError::Kind;

// Key prefixes; docs/state.md is the reference.
constexpr std::string_view kFormatKey = "m/format";
constexpr std::string_view kEpochPrefix = "e/";
constexpr std::string_view kTxnPrefix = "x/";
constexpr std::string_view kOffsetPrefix = "o/";
constexpr std::string_view kLabelPrefixPrefix = "p/";
constexpr std::string_view kTablePrefix = "t/";
constexpr std::string_view kDdlPrefix = "s/";  // schema changes (ddl_record.cpp)
// Every value starts with its own version byte so one record type can change
// without a format bump of the whole store.
constexpr uint8_t kValueVersion = 1;
// Txn values of format 2 (several loads per table and epoch): the key also
// holds the part. Format-1 txn keys and values (one per table, part 0) are
// still read and marked as they are, so a state written by the previous
// version recovers.
constexpr uint8_t kTxnValueVersion = 2;

std::string epoch_key(uint64_t epoch) {
  std::string k(kEpochPrefix);
  codec::put_be64(k, epoch);
  return k;
}
std::string txn_key_prefix(uint64_t epoch) {
  std::string k(kTxnPrefix);
  codec::put_be64(k, epoch);
  return k;
}
// Format 2: x/ epoch, str db, str table, be32 part.
std::string txn_key(uint64_t epoch, std::string_view db, std::string_view table, uint32_t part) {
  std::string k = txn_key_prefix(epoch);
  codec::put_str(k, db);
  codec::put_str(k, table);
  codec::put_be32(k, part);
  return k;
}
// Format 1: x/ epoch, str db, table (the rest of the key).
std::string txn_key_v1(uint64_t epoch, std::string_view db, std::string_view table) {
  std::string k = txn_key_prefix(epoch);
  codec::put_str(k, db);
  k.append(table);
  return k;
}
std::string offset_key(std::string_view topic, int32_t partition) {
  std::string k(kOffsetPrefix);
  codec::put_str(k, topic);
  codec::put_be32(k, static_cast<uint32_t>(partition));
  return k;
}
std::string prefix_key(std::string_view prefix) {
  std::string k(kLabelPrefixPrefix);
  k.append(prefix);
  return k;
}
std::string table_key(std::string_view db, std::string_view table) {
  std::string k(kTablePrefix);
  codec::put_str(k, db);
  k.append(table);
  return k;
}

// The epoch header: everything but the txns, which have their own keys so
// that mark_txn_committed rewrites one small value.
std::string encode_header(const EpochRecord& r) {
  std::string v;
  codec::put_u8(v, kValueVersion);
  codec::put_str(v, r.label_prefix);
  codec::put_u8(v, static_cast<uint8_t>(r.state));
  codec::put_be64(v, static_cast<uint64_t>(r.created_unix_ms));
  codec::put_varint(v, r.txns.size());  // lets a reader notice a lost txn key
  codec::put_varint(v, r.partitions.size());
  for (const auto& p : r.partitions) {
    codec::put_str(v, p.topic);
    codec::put_be32(v, static_cast<uint32_t>(p.partition));
    codec::put_be64(v, static_cast<uint64_t>(p.start_offset));
    codec::put_be64(v, static_cast<uint64_t>(p.end_offset));
  }
  return v;
}

void expect_version(Reader& r) {
  uint8_t v = r.u8();
  if (v != kValueVersion) throw DecodeError("unknown value version " + std::to_string(v));
}

EpochState decode_state(uint8_t s) {
  if (s < 1 || s > 3) throw DecodeError("bad epoch state " + std::to_string(s));
  return static_cast<EpochState>(s);
}

// Decodes a header into rec; returns the txn count it announces.
uint64_t decode_header(std::string_view v, EpochRecord& rec) {
  Reader r(v);
  expect_version(r);
  rec.label_prefix = std::string(r.str());
  rec.state = decode_state(r.u8());
  rec.created_unix_ms = r.i64();
  uint64_t ntx = r.varint();
  uint64_t np = r.varint();
  rec.partitions.clear();
  for (uint64_t i = 0; i < np; ++i) {
    PartitionRange p;
    p.topic = std::string(r.str());
    p.partition = static_cast<int32_t>(r.be32());
    p.start_offset = r.i64();
    p.end_offset = r.i64();
    rec.partitions.push_back(std::move(p));
  }
  r.expect_done();
  return ntx;
}

// The value layout is the same in both versions; the version byte tells how
// the key is laid out.
std::string encode_txn(const TableTxn& t, uint8_t version = kTxnValueVersion) {
  std::string v;
  codec::put_u8(v, version);
  codec::put_str(v, t.label);
  codec::put_be64(v, static_cast<uint64_t>(t.txn_id));
  codec::put_u8(v, t.committed ? 1 : 0);
  return v;
}

// Returns the value version too, so a mark rewrites a format-1 txn as format 1.
TableTxn decode_txn(std::string_view key_rest, std::string_view v, uint8_t* version = nullptr) {
  TableTxn t;
  Reader r(v);
  const uint8_t ver = r.u8();
  if (version) *version = ver;
  Reader k(key_rest);
  t.db = std::string(k.str());
  if (ver == kValueVersion) {
    t.table = std::string(k.rest());
  } else if (ver == kTxnValueVersion) {
    t.table = std::string(k.str());
    t.part = k.be32();
    k.expect_done();
  } else {
    throw DecodeError("unknown txn value version " + std::to_string(ver));
  }
  t.label = std::string(r.str());
  t.txn_id = r.i64();
  uint8_t c = r.u8();
  if (c > 1) throw DecodeError("bad committed flag");
  t.committed = c == 1;
  r.expect_done();
  return t;
}

std::string encode_offset(const CommittedOffset& o) {
  std::string v;
  codec::put_u8(v, kValueVersion);
  codec::put_be64(v, static_cast<uint64_t>(o.offset));
  codec::put_be64(v, o.epoch);
  return v;
}
CommittedOffset decode_offset(std::string_view v) {
  Reader r(v);
  expect_version(r);
  CommittedOffset o;
  o.offset = r.i64();
  o.epoch = r.be64();
  r.expect_done();
  return o;
}

std::string encode_prefix_use(const LabelPrefixUse& p) {
  std::string v;
  codec::put_u8(v, kValueVersion);
  codec::put_be64(v, p.first_epoch);
  codec::put_be64(v, p.last_epoch);
  return v;
}
LabelPrefixUse decode_prefix_use(std::string_view prefix, std::string_view v) {
  Reader r(v);
  expect_version(r);
  LabelPrefixUse p;
  p.prefix = std::string(prefix);
  p.first_epoch = r.be64();
  p.last_epoch = r.be64();
  r.expect_done();
  return p;
}

std::string encode_u64(uint64_t e) {
  std::string v;
  codec::put_u8(v, kValueVersion);
  codec::put_be64(v, e);
  return v;
}
uint64_t decode_u64(std::string_view v) {
  Reader r(v);
  expect_version(r);
  uint64_t e = r.be64();
  r.expect_done();
  return e;
}

std::string printable(std::string_view key) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

bool starts_with(const rocksdb::Slice& s, std::string_view p) {
  return s.size() >= p.size() && std::string_view(s.data(), p.size()) == p;
}

}  // namespace

class RocksCheckpointStore::Impl {
 public:
  Impl(const RocksStoreOptions& opts) : path_(opts.path), retain_(std::max<size_t>(opts.retain_epochs, 1)) {
    lock_ = std::make_unique<DirLock>(path_);
    refuse_headless_db();
    rocksdb::Options o;
    o.create_if_missing = true;
    o.paranoid_checks = true;
    // Small footprint (§9): the state is a few KB per epoch times retention.
    o.write_buffer_size = 1 << 20;
    o.max_write_buffer_number = 2;
    o.max_total_wal_size = 8 << 20;
    o.target_file_size_base = 4 << 20;
    o.max_bytes_for_level_base = 16 << 20;
    o.max_background_jobs = 2;
    o.max_open_files = 64;
    o.keep_log_file_num = 2;
    o.max_log_file_size = 1 << 20;
    o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
    o.compression = rocksdb::kNoCompression;
    // A torn WAL tail after a crash is expected; older records must survive.
    o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    rocksdb::BlockBasedTableOptions t;
    t.block_cache = rocksdb::NewLRUCache(1 << 20);
    t.cache_index_and_filter_blocks = true;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));

    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, path_.string(), &raw);
    if (!s.ok()) throw open_error(s);
    db_.reset(raw);
    if (opts.verify_on_open) {
      s = db_->VerifyChecksum();
      if (!s.ok()) throw status_error(s, "checksum verification");
    }
    check_format();
  }

  ~Impl() { close_noexcept(); }

  void close() {
    if (!db_) return;
    // mark_txn_committed writes are not fsync'd individually; sync them on a
    // clean close so a power loss after shutdown cannot lose them.
    rocksdb::Status s = db_->FlushWAL(true);
    rocksdb::Status c = db_->Close();
    db_.reset();
    lock_.reset();
    if (!s.ok()) throw status_error(s, "WAL sync at close");
    if (!c.ok()) throw status_error(c, "close");
  }

  void close_noexcept() {
    try {
      close();
    } catch (const std::exception& e) {
      spdlog::error("Closing the state store failed: path={} error={}", path_.string(), e.what());
    }
  }

  rocksdb::DB& db() {
    if (!db_) throw StateError(Kind::Io, "state store " + path_.string() + " is closed");
    return *db_;
  }

  // --- reads ---

  std::optional<std::string> get_raw(std::string_view key) {
    std::string v;
    rocksdb::Status s = db().Get(rocksdb::ReadOptions(), rocksdb::Slice(key.data(), key.size()), &v);
    if (s.IsNotFound()) return std::nullopt;
    if (!s.ok()) throw status_error(s, "read of key " + printable(key));
    return v;
  }

  template <class F>
  decltype(auto) decoding(std::string_view key, F&& f) {
    try {
      return f();
    } catch (const DecodeError& e) {
      throw StateError(Kind::Corrupt, "state store " + path_.string() + " is corrupt: key " + printable(key) +
                                          " cannot be decoded (" + e.what() + ")" + kCorruptAdvice);
    }
  }

  // Calls f(key, value) for every key with the prefix, in key order.
  template <class F>
  void scan(std::string_view prefix, F&& f) {
    std::unique_ptr<rocksdb::Iterator> it(db().NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size())); it->Valid() && starts_with(it->key(), prefix);
         it->Next()) {
      f(std::string_view(it->key().data(), it->key().size()), std::string_view(it->value().data(), it->value().size()));
    }
    if (!it->status().ok()) throw status_error(it->status(), "scan of " + printable(prefix));
  }

  std::optional<EpochRecord> read_epoch(uint64_t epoch) {
    std::string hk = epoch_key(epoch);
    auto hv = get_raw(hk);
    if (!hv) return std::nullopt;
    EpochRecord rec;
    rec.epoch = epoch;
    uint64_t ntx = decoding(hk, [&] { return decode_header(*hv, rec); });
    std::string tp = txn_key_prefix(epoch);
    scan(tp, [&](std::string_view k, std::string_view v) {
      rec.txns.push_back(decoding(k, [&] { return decode_txn(k.substr(tp.size()), v); }));
    });
    // Format-2 keys order tables by length first; the contract is (db, table, part).
    std::sort(rec.txns.begin(), rec.txns.end(), [](const TableTxn& a, const TableTxn& b) {
      return std::tie(a.db, a.table, a.part) < std::tie(b.db, b.table, b.part);
    });
    if (rec.txns.size() != ntx) {
      throw StateError(Kind::Corrupt, "state store " + path_.string() + " is corrupt: epoch " +
                                          std::to_string(epoch) + " announces " + std::to_string(ntx) +
                                          " table txns but has " + std::to_string(rec.txns.size()) + kCorruptAdvice);
    }
    return rec;
  }

  std::optional<EpochState> read_state(uint64_t epoch) {
    std::string hk = epoch_key(epoch);
    auto hv = get_raw(hk);
    if (!hv) return std::nullopt;
    EpochRecord rec;
    decoding(hk, [&] { return decode_header(*hv, rec); });
    return rec.state;
  }

  std::map<uint64_t, EpochState> epoch_states() {
    std::map<uint64_t, EpochState> out;
    scan(kEpochPrefix, [&](std::string_view k, std::string_view v) {
      decoding(k, [&] {
        Reader kr(k.substr(kEpochPrefix.size()));
        uint64_t e = kr.be64();
        kr.expect_done();
        EpochRecord rec;
        decode_header(v, rec);
        out[e] = rec.state;
      });
    });
    return out;
  }

  std::optional<uint64_t> latest_epoch() {
    std::unique_ptr<rocksdb::Iterator> it(db().NewIterator(rocksdb::ReadOptions()));
    std::string last = epoch_key(std::numeric_limits<uint64_t>::max());
    it->SeekForPrev(last);
    if (!it->status().ok()) throw status_error(it->status(), "seek to the latest epoch");
    if (!it->Valid() || !starts_with(it->key(), kEpochPrefix)) return std::nullopt;
    std::string_view k(it->key().data(), it->key().size());
    return decoding(k, [&] {
      Reader kr(k.substr(kEpochPrefix.size()));
      uint64_t e = kr.be64();
      kr.expect_done();
      return e;
    });
  }

  // --- writes ---

  void write(rocksdb::WriteBatch& b, bool sync, const char* what) {
    rocksdb::WriteOptions w;
    w.sync = sync;
    rocksdb::Status s = db().Write(w, &b);
    if (!s.ok()) throw status_error(s, what);
  }

  void delete_epoch(rocksdb::WriteBatch& b, uint64_t epoch) {
    b.Delete(epoch_key(epoch));
    scan(txn_key_prefix(epoch), [&](std::string_view k, std::string_view) { b.Delete(rocksdb::Slice(k.data(), k.size())); });
  }

  // Committed offsets and retention, added to the batch that commits `rec`.
  void add_commit(rocksdb::WriteBatch& b, const EpochRecord& rec) {
    for (const auto& p : rec.partitions) {
      std::string k = offset_key(p.topic, p.partition);
      auto cur = get_raw(k);
      if (cur) {
        CommittedOffset c = decoding(k, [&] { return decode_offset(*cur); });
        if (c.epoch > rec.epoch) continue;  // never move a partition backwards
      }
      b.Put(k, encode_offset(CommittedOffset{p.end_offset, rec.epoch}));
    }
  }

  void add_retention(rocksdb::WriteBatch& b, uint64_t epoch, EpochState state) {
    auto states = epoch_states();
    states[epoch] = state;
    for (uint64_t e : detail::to_prune(states, retain_, [](const auto& kv) { return kv.second; })) {
      delete_epoch(b, e);
    }
  }

  void put_epoch(const EpochRecord& rec) {
    if (auto cur = read_state(rec.epoch)) {
      detail::check_transition(rec.epoch, *cur, rec.state);
    }
    rocksdb::WriteBatch b;
    // A replay may drop tables; remove the old txn keys before writing.
    scan(txn_key_prefix(rec.epoch), [&](std::string_view k, std::string_view) { b.Delete(rocksdb::Slice(k.data(), k.size())); });
    b.Put(epoch_key(rec.epoch), encode_header(rec));
    for (const auto& t : rec.txns) {
      b.Put(txn_key(rec.epoch, t.db, t.table, t.part), encode_txn(t));
      std::string tk = table_key(t.db, t.table);
      auto cur = get_raw(tk);
      uint64_t prev = cur ? decoding(tk, [&] { return decode_u64(*cur); }) : 0;
      if (!cur || prev < rec.epoch) b.Put(tk, encode_u64(rec.epoch));
    }
    std::string pk = prefix_key(rec.label_prefix);
    LabelPrefixUse use{rec.label_prefix, rec.epoch, rec.epoch};
    if (auto cur = get_raw(pk)) {
      LabelPrefixUse old = decoding(pk, [&] { return decode_prefix_use(rec.label_prefix, *cur); });
      use.first_epoch = std::min(old.first_epoch, rec.epoch);
      use.last_epoch = std::max(old.last_epoch, rec.epoch);
    }
    b.Put(pk, encode_prefix_use(use));
    if (rec.state == EpochState::Committed) add_commit(b, rec);
    if (rec.state != EpochState::Precommitted) add_retention(b, rec.epoch, rec.state);
    write(b, true, "put_epoch");
  }

  void set_state(uint64_t epoch, EpochState state) {
    auto rec = read_epoch(epoch);
    if (!rec) throw StateError(Kind::NotFound, "set_state: no epoch " + std::to_string(epoch) + " in " + path_.string());
    detail::check_transition(epoch, rec->state, state);
    if (rec->state == state) return;
    rec->state = state;
    rocksdb::WriteBatch b;
    b.Put(epoch_key(epoch), encode_header(*rec));
    if (state == EpochState::Committed) add_commit(b, *rec);
    add_retention(b, epoch, state);
    write(b, true, "set_state");
  }

  void mark_txn_committed(uint64_t epoch, const std::string& db, const std::string& table, uint32_t part) {
    if (!get_raw(epoch_key(epoch))) {
      throw StateError(Kind::NotFound, "mark_txn_committed: no epoch " + std::to_string(epoch) + " in " + path_.string());
    }
    std::string k = txn_key(epoch, db, table, part);
    auto v = get_raw(k);
    if (!v && part == 0) {  // written by format 1
      k = txn_key_v1(epoch, db, table);
      v = get_raw(k);
    }
    if (!v) {
      throw StateError(Kind::NotFound, "mark_txn_committed: epoch " + std::to_string(epoch) + " has no table " + db +
                                           "." + table + " part " + std::to_string(part));
    }
    uint8_t version = 0;
    TableTxn t = decoding(k, [&] { return decode_txn(k.substr(txn_key_prefix(epoch).size()), *v, &version); });
    if (t.committed) return;
    t.committed = true;
    rocksdb::WriteBatch b;
    b.Put(k, encode_txn(t, version));
    write(b, false, "mark_txn_committed");
  }

  void reset() {
    rocksdb::WriteBatch b;
    for (std::string_view p : {kEpochPrefix, kTxnPrefix, kOffsetPrefix, kLabelPrefixPrefix, kTablePrefix, kDdlPrefix}) {
      scan(p, [&](std::string_view k, std::string_view) { b.Delete(rocksdb::Slice(k.data(), k.size())); });
    }
    write(b, true, "reset");
  }

  std::map<TopicPartition, CommittedOffset> committed_offsets() {
    std::map<TopicPartition, CommittedOffset> out;
    scan(kOffsetPrefix, [&](std::string_view k, std::string_view v) {
      decoding(k, [&] {
        Reader kr(k.substr(kOffsetPrefix.size()));
        TopicPartition tp;
        tp.topic = std::string(kr.str());
        tp.partition = static_cast<int32_t>(kr.be32());
        kr.expect_done();
        out[tp] = decode_offset(v);
      });
    });
    return out;
  }

  std::vector<LabelPrefixUse> label_prefixes() {
    std::vector<LabelPrefixUse> out;
    scan(kLabelPrefixPrefix, [&](std::string_view k, std::string_view v) {
      out.push_back(decoding(k, [&] { return decode_prefix_use(k.substr(kLabelPrefixPrefix.size()), v); }));
    });
    return out;
  }

  std::map<TableKey, uint64_t> table_epochs() {
    std::map<TableKey, uint64_t> out;
    scan(kTablePrefix, [&](std::string_view k, std::string_view v) {
      decoding(k, [&] {
        Reader kr(k.substr(kTablePrefix.size()));
        TableKey tk;
        tk.db = std::string(kr.str());
        tk.table = std::string(kr.rest());
        out[tk] = decode_u64(v);
      });
    });
    return out;
  }

  void put_ddl(const DdlRecord& rec) {
    std::string k(kDdlPrefix);
    codec::put_str(k, rec.db);
    codec::put_str(k, rec.table);
    rocksdb::WriteBatch b;
    b.Put(k, detail::encode_ddl(rec));
    write(b, true, "DDL record");
  }

  std::vector<DdlRecord> ddl_records() {
    std::vector<DdlRecord> out;
    scan(kDdlPrefix, [&](std::string_view k, std::string_view v) {
      out.push_back(decoding(k, [&] {
        Reader kr(k.substr(kDdlPrefix.size()));
        DdlRecord r = detail::decode_ddl(v);
        r.db = std::string(kr.str());
        r.table = std::string(kr.str());
        kr.expect_done();
        return r;
      }));
    });
    return out;
  }

  std::vector<EpochRecord> list() {
    std::vector<EpochRecord> out;
    for (const auto& [e, _] : epoch_states()) {
      if (auto r = read_epoch(e)) out.push_back(std::move(*r));
    }
    return out;
  }

 private:
  static constexpr const char* kCorruptAdvice =
      "; restore the state directory from a backup, or move it aside to start from the Kafka group's committed "
      "offsets (lingering Doris txns of the lost epochs then time out on their own)";

  // RocksDB with create_if_missing silently creates an empty store when
  // CURRENT is gone; with data files present that would forget every epoch.
  void refuse_headless_db() {
    if (std::filesystem::exists(path_ / "CURRENT")) return;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      std::string name = entry.path().filename().string();
      if (name.starts_with("MANIFEST-") || name.ends_with(".sst") || name.ends_with(".log")) {
        throw StateError(Kind::Corrupt, "state store " + path_.string() + " is corrupt: " + name +
                                            " exists but CURRENT is missing" + kCorruptAdvice);
      }
    }
  }

  StateError open_error(const rocksdb::Status& s) {
    if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
      return StateError(Kind::Locked, "state directory " + path_.string() +
                                          " is locked by a process that is not cdc2doris (RocksDB LOCK): " + s.ToString());
    }
    return status_error(s, "open");
  }

  StateError status_error(const rocksdb::Status& s, const std::string& what) {
    if (s.IsCorruption()) {
      return StateError(Kind::Corrupt, "state store " + path_.string() + " is corrupt (" + what + "): " +
                                           s.ToString() + kCorruptAdvice);
    }
    return StateError(Kind::Io, "state store " + path_.string() + ": " + what + " failed: " + s.ToString());
  }

  void check_format() {
    std::string fk(kFormatKey);
    auto v = get_raw(fk);
    if (!v) {
      std::unique_ptr<rocksdb::Iterator> it(db().NewIterator(rocksdb::ReadOptions()));
      it->SeekToFirst();
      if (!it->status().ok()) throw status_error(it->status(), "scan for the format key");
      if (it->Valid()) {
        throw StateError(Kind::Corrupt, "state store " + path_.string() +
                                            " is corrupt: it holds data but no format version key" + kCorruptAdvice);
      }
      std::string fv;
      codec::put_be32(fv, kStateFormatVersion);
      rocksdb::WriteBatch b;
      b.Put(fk, fv);
      write(b, true, "format key");
      return;
    }
    uint32_t version = decoding(fk, [&] {
      Reader r(*v);
      uint32_t x = r.be32();
      r.expect_done();
      return x;
    });
    if (version > kStateFormatVersion) {
      throw StateError(Kind::NewerFormat, "state store " + path_.string() + " was written by a newer cdc2doris (format " +
                                              std::to_string(version) + ", this build reads up to " +
                                              std::to_string(kStateFormatVersion) +
                                              "); run the newer version or restore a backup");
    }
    if (version == 0) {
      throw StateError(Kind::Corrupt, "state store " + path_.string() + " is corrupt: format version 0" + kCorruptAdvice);
    }
    if (version < kStateFormatVersion) {
      // Format 1 records stay readable as they are (see kTxnValueVersion);
      // the bump makes an older build refuse the store once format-2 txn
      // keys may be in it, instead of calling them corrupt.
      std::string fv;
      codec::put_be32(fv, kStateFormatVersion);
      rocksdb::WriteBatch b;
      b.Put(fk, fv);
      write(b, true, "format upgrade");
    }
  }

  std::filesystem::path path_;
  size_t retain_;
  std::unique_ptr<DirLock> lock_;  // taken before, released after the DB
  std::unique_ptr<rocksdb::DB> db_;
};

RocksCheckpointStore::RocksCheckpointStore(RocksStoreOptions opts)
    : opts_(std::move(opts)), impl_(std::make_unique<Impl>(opts_)) {}

RocksCheckpointStore::~RocksCheckpointStore() = default;

void RocksCheckpointStore::close() {
  std::lock_guard lk(mu_);
  impl_->close();
}

void RocksCheckpointStore::put_epoch(const EpochRecord& rec) {
  EpochRecord r = detail::normalized(rec);
  std::lock_guard lk(mu_);
  impl_->put_epoch(r);
}
void RocksCheckpointStore::set_state(uint64_t epoch, EpochState state) {
  std::lock_guard lk(mu_);
  impl_->set_state(epoch, state);
}
void RocksCheckpointStore::mark_txn_committed(uint64_t epoch, const std::string& db, const std::string& table,
                                              uint32_t part) {
  std::lock_guard lk(mu_);
  impl_->mark_txn_committed(epoch, db, table, part);
}
std::optional<EpochRecord> RocksCheckpointStore::latest() {
  std::lock_guard lk(mu_);
  auto e = impl_->latest_epoch();
  if (!e) return std::nullopt;
  return impl_->read_epoch(*e);
}
std::optional<EpochRecord> RocksCheckpointStore::get(uint64_t epoch) {
  std::lock_guard lk(mu_);
  return impl_->read_epoch(epoch);
}
std::vector<EpochRecord> RocksCheckpointStore::list() {
  std::lock_guard lk(mu_);
  return impl_->list();
}
std::map<TopicPartition, CommittedOffset> RocksCheckpointStore::committed_offsets() {
  std::lock_guard lk(mu_);
  return impl_->committed_offsets();
}
std::vector<LabelPrefixUse> RocksCheckpointStore::label_prefixes() {
  std::lock_guard lk(mu_);
  return impl_->label_prefixes();
}
std::map<TableKey, uint64_t> RocksCheckpointStore::table_epochs() {
  std::lock_guard lk(mu_);
  return impl_->table_epochs();
}
void RocksCheckpointStore::reset() {
  std::lock_guard lk(mu_);
  impl_->reset();
}

void RocksCheckpointStore::put_ddl(const DdlRecord& rec) {
  std::lock_guard lk(mu_);
  impl_->put_ddl(rec);
}
std::vector<DdlRecord> RocksCheckpointStore::ddl_records() {
  std::lock_guard lk(mu_);
  return impl_->ddl_records();
}

}  // namespace cdc2doris::state
