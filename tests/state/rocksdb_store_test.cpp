// RocksDB-specific behaviour: durability across a killed process, locking,
// format versioning and corruption handling.
#include <catch2/catch.hpp>
#include <rocksdb/db.h>

#include <sys/stat.h>

#include <csignal>
#include <fstream>

#include "state/codec.hpp"
#include "state/dir_lock.hpp"
#include "tests/state/store_fixtures.hpp"
#include "tools/fixtures/process.hpp"

using namespace cdc2doris::state;
using namespace cdc2doris::state::testing;
using cdc2doris::test::Process;
using cdc2doris::test::ProcessOptions;
using cdc2doris::test::TempDir;
using Catch::Matchers::Contains;
using namespace std::chrono_literals;

namespace {

RocksStoreOptions opts(const std::filesystem::path& p, size_t retain = 100) {
  RocksStoreOptions o;
  o.path = p;
  o.retain_epochs = retain;
  return o;
}

StateError open_error(const std::filesystem::path& p) {
  try {
    RocksCheckpointStore s(opts(p));
  } catch (const StateError& e) {
    return e;
  }
  FAIL("opening " << p << " should have failed");
  return StateError(StateError::Kind::Io, "unreachable");
}

// Writes raw keys behind the store's back, then flushes them into a table file.
void raw_put(const std::filesystem::path& p, const std::string& key, const std::string& value) {
  rocksdb::Options o;
  o.create_if_missing = true;
  rocksdb::DB* db = nullptr;
  REQUIRE(rocksdb::DB::Open(o, p.string(), &db).ok());
  REQUIRE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  REQUIRE(db->Flush(rocksdb::FlushOptions()).ok());
  REQUIRE(db->Close().ok());
  delete db;
}

std::string epoch_key(uint64_t e) {
  std::string k = "e/";
  codec::put_be64(k, e);
  return k;
}

std::unique_ptr<Process> spawn_child(const std::filesystem::path& dir, const char* mode) {
  ProcessOptions po;
  po.argv = {CDC2DORIS_STATE_CHILD, dir.string(), mode};
  auto p = std::make_unique<Process>(po);
  auto line = p->read_line(30s);
  REQUIRE(line);
  REQUIRE(*line == "ready");
  return p;
}

}  // namespace

TEST_CASE("a new state directory is created 0700, its parents as usual, an existing one keeps its mode",
          "[state][lock][issue35]") {
  TempDir dir;
  const auto mode = [](const std::filesystem::path& p) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  {
    RocksCheckpointStore s(opts(dir / "a" / "state"));
  }
  CHECK(mode(dir / "a" / "state") == 0700);
  CHECK((mode(dir / "a") & 0700) == 0700);
  CHECK(mode(dir / "a" / "state" / DirLock::kFileName) == 0600);
  std::filesystem::create_directory(dir / "mine");
  std::filesystem::permissions(dir / "mine", std::filesystem::perms(0750));
  {
    RocksCheckpointStore s(opts(dir / "mine"));
  }
  CHECK(mode(dir / "mine") == 0750);
}

TEST_CASE("a second open in the same process names the pid and the path", "[state][lock]") {
  TempDir dir;
  RocksCheckpointStore first(opts(dir / "s"));
  StateError e = open_error(dir / "s");
  CHECK(e.kind() == StateError::Kind::Locked);
  CHECK_THAT(e.what(), Contains("pid " + std::to_string(::getpid())));
  CHECK_THAT(e.what(), Contains((dir / "s").string()));
}

TEST_CASE("a store held by another process names that process' pid", "[state][lock]") {
  TempDir dir;
  auto child = spawn_child(dir / "s", "hold");
  StateError e = open_error(dir / "s");
  CHECK(e.kind() == StateError::Kind::Locked);
  CHECK_THAT(e.what(), Contains("pid " + std::to_string(child->pid())));
  CHECK_THAT(e.what(), Contains((dir / "s").string()));
  child->kill9();
  child->wait(10s);
  // The kernel drops the flock with the process; the stale pid file is fine.
  RocksCheckpointStore s(opts(dir / "s"));
  CHECK_FALSE(s.latest());
  CHECK(DirLock::read_holder(dir / "s") == ::getpid());
}

TEST_CASE("a RocksDB LOCK held by a foreign tool is reported as locked", "[state][lock]") {
  TempDir dir;
  { RocksCheckpointStore init(opts(dir / "s")); }
  rocksdb::Options o;
  rocksdb::DB* db = nullptr;
  REQUIRE(rocksdb::DB::Open(o, (dir / "s").string(), &db).ok());
  StateError e = open_error(dir / "s");
  CHECK(e.kind() == StateError::Kind::Locked);
  CHECK_THAT(e.what(), Contains("RocksDB LOCK"));
  REQUIRE(db->Close().ok());
  delete db;
}

TEST_CASE("writes survive the process being killed right after them", "[state][crash]") {
  TempDir dir;
  auto child = spawn_child(dir / "s", "crash-after-writes");
  auto status = child->wait(30s);
  REQUIRE(status);
  CHECK(*status == 128 + SIGKILL);

  RocksCheckpointStore s(opts(dir / "s"));
  auto all = s.list();
  REQUIRE(all.size() == 3);
  CHECK(all[0].state == EpochState::Committed);
  CHECK(all[1].state == EpochState::Committed);
  CHECK(all[2].state == EpochState::Precommitted);
  // mark_txn_committed is not fsync'd but is in the WAL, which survives a
  // process crash (only a machine crash can lose it).
  CHECK(all[2].txns[0].committed);
  CHECK_FALSE(all[2].txns[1].committed);
  CHECK(s.committed_offsets()[TopicPartition{"t", 0}] == CommittedOffset{30, 2});
  s.put_epoch(make_epoch(4));
  CHECK(s.latest()->epoch == 4);
}

TEST_CASE("a state written by a newer format is refused clearly", "[state][format]") {
  TempDir dir;
  { RocksCheckpointStore init(opts(dir / "s")); }
  std::string v;
  codec::put_be32(v, kStateFormatVersion + 1);
  raw_put(dir / "s", "m/format", v);
  StateError e = open_error(dir / "s");
  CHECK(e.kind() == StateError::Kind::NewerFormat);
  CHECK_THAT(e.what(), Contains("format " + std::to_string(kStateFormatVersion + 1)));
  CHECK_THAT(e.what(), Contains((dir / "s").string()));
}

TEST_CASE("a DDL record written before truncates (value version 1) is still read", "[state][format][ddl]") {
  // Byte for byte as the previous build wrote it (state/ddl_record.cpp).
  TempDir dir;
  { RocksCheckpointStore init(opts(dir / "s")); }
  std::string k = "s/";
  codec::put_str(k, "db");
  codec::put_str(k, "orders");
  std::string v;
  codec::put_u8(v, 1);       // value version
  codec::put_be64(v, 4);     // version
  codec::put_u8(v, 2);       // DONE
  codec::put_be64(v, 9);     // epoch
  codec::put_be64(v, 1700);  // created
  codec::put_str(v, "");
  codec::put_varint(v, 1);
  codec::put_u8(v, 0);
  codec::put_str(v, "b");
  codec::put_str(v, "INT");
  codec::put_str(v, "ALTER TABLE `db`.`orders` ADD COLUMN `b` INT NULL");
  raw_put(dir / "s", k, v);
  RocksCheckpointStore s(opts(dir / "s"));
  auto all = s.ddl_records();
  REQUIRE(all.size() == 1);
  CHECK(all[0].version == 4);
  CHECK(all[0].state == DdlState::Done);
  CHECK(all[0].steps.size() == 1);
  CHECK_FALSE(all[0].truncate_seq);
  CHECK(all[0].truncate_at.empty());
}

TEST_CASE("a state written by format 1 (one txn per table) recovers and is upgraded", "[state][format]") {
  // Laid out byte for byte as the previous version wrote it: m/format 1, the
  // epoch header, and txn keys `x/ epoch str(db) table` with value version 1.
  TempDir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(o, (dir / "s").string(), &db).ok());
    std::string fv;
    codec::put_be32(fv, 1);
    REQUIRE(db->Put(rocksdb::WriteOptions(), "m/format", fv).ok());
    std::string h;
    codec::put_u8(h, 1);
    codec::put_str(h, "pfx");
    codec::put_u8(h, 1);  // PRECOMMITTED
    codec::put_be64(h, 1700000000000);
    codec::put_varint(h, 2);
    codec::put_varint(h, 1);
    codec::put_str(h, "t");
    codec::put_be32(h, 0);
    codec::put_be64(h, 10);
    codec::put_be64(h, 20);
    REQUIRE(db->Put(rocksdb::WriteOptions(), epoch_key(3), h).ok());
    for (const char* table : {"a", "b"}) {
      std::string k = "x/";
      codec::put_be64(k, 3);
      codec::put_str(k, "db");
      k += table;
      std::string v;
      codec::put_u8(v, 1);
      codec::put_str(v, std::string("pfx_db_") + table + "_3");
      codec::put_be64(v, table[0] == 'a' ? 41 : 42);
      codec::put_u8(v, 0);
      REQUIRE(db->Put(rocksdb::WriteOptions(), k, v).ok());
    }
    REQUIRE(db->Close().ok());
    delete db;
  }
  {
    RocksCheckpointStore s(opts(dir / "s"));
    auto rec = s.get(3);
    REQUIRE(rec);
    CHECK(rec->state == EpochState::Precommitted);
    REQUIRE(rec->txns.size() == 2);
    CHECK(rec->txns[0] == TableTxn{"db", "a", "pfx_db_a_3", 41, false, 0});
    CHECK(rec->txns[1] == TableTxn{"db", "b", "pfx_db_b_3", 42, false, 0});
    CHECK(rec->partitions == std::vector<PartitionRange>{{"t", 0, 10, 20}});
    // Roll forward as recovery does: mark, then commit.
    s.mark_txn_committed(3, "db", "a");
    CHECK(s.get(3)->txns[0].committed);
    CHECK_FALSE(s.get(3)->txns[1].committed);
    CHECK_THROWS_AS(s.mark_txn_committed(3, "db", "a", 1), StateError);
    s.mark_txn_committed(3, "db", "b");
    s.set_state(3, EpochState::Committed);
    CHECK(s.committed_offsets()[TopicPartition{"t", 0}] == CommittedOffset{20, 3});
    // A new epoch is written in format 2 next to it.
    EpochRecord next = make_epoch(4, {"a"});
    next.txns.push_back({"db", "a", "pfx_db_a_4-1", 77, false, 1});
    s.put_epoch(next);
    REQUIRE(s.get(4)->txns.size() == 2);
    CHECK(s.get(4)->txns[1].part == 1);
  }
  // The format key was upgraded, so an older build refuses the store.
  rocksdb::DB* db = nullptr;
  REQUIRE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), (dir / "s").string(), &db).ok());
  std::string fv;
  REQUIRE(db->Get(rocksdb::ReadOptions(), "m/format", &fv).ok());
  delete db;
  codec::Reader r(fv);
  CHECK(r.be32() == kStateFormatVersion);
}

TEST_CASE("data without a format key is corrupt, not silently adopted", "[state][corrupt]") {
  TempDir dir;
  raw_put(dir / "s", "x/whatever", "1");
  StateError e = open_error(dir / "s");
  CHECK(e.kind() == StateError::Kind::Corrupt);
  CHECK_THAT(e.what(), Contains("no format version"));
}

TEST_CASE("an undecodable value is reported with its key", "[state][corrupt]") {
  TempDir dir;
  { RocksCheckpointStore init(opts(dir / "s")); }
  raw_put(dir / "s", epoch_key(7), std::string("\x01\xff\xff", 3));
  RocksCheckpointStore s(opts(dir / "s"));
  try {
    s.get(7);
    FAIL("get should throw");
  } catch (const StateError& e) {
    CHECK(e.kind() == StateError::Kind::Corrupt);
    CHECK_THAT(e.what(), Contains("e/\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x07"));
  }
  CHECK_THROWS_AS(s.list(), StateError);
  CHECK_THROWS_AS(s.latest(), StateError);
}

TEST_CASE("a lost txn key is detected", "[state][corrupt]") {
  TempDir dir;
  {
    RocksCheckpointStore s(opts(dir / "s"));
    s.put_epoch(make_epoch(3, {"a", "b"}));
  }
  {
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(rocksdb::Options(), (dir / "s").string(), &db).ok());
    std::string k = "x/";
    codec::put_be64(k, 3);
    codec::put_str(k, "db");
    codec::put_str(k, "a");
    codec::put_be32(k, 0);
    REQUIRE(db->Delete(rocksdb::WriteOptions(), k).ok());
    REQUIRE(db->Close().ok());
    delete db;
  }
  RocksCheckpointStore s(opts(dir / "s"));
  try {
    s.get(3);
    FAIL("get should throw");
  } catch (const StateError& e) {
    CHECK(e.kind() == StateError::Kind::Corrupt);
    CHECK_THAT(e.what(), Contains("announces 2 table txns but has 1"));
  }
}

TEST_CASE("a damaged table file is reported at open", "[state][corrupt]") {
  TempDir dir;
  {
    RocksCheckpointStore s(opts(dir / "s"));
    for (uint64_t e = 1; e <= 20; ++e) s.put_epoch(make_epoch(e));
  }
  raw_put(dir / "s", "m/format", [] {
    std::string v;
    codec::put_be32(v, kStateFormatVersion);
    return v;
  }());  // forces a flush, so the epochs are in a .sst file
  std::filesystem::path sst;  // the largest table file holds the epochs
  uintmax_t largest = 0;
  for (const auto& ent : std::filesystem::directory_iterator(dir / "s")) {
    if (ent.path().extension() == ".sst" && ent.file_size() > largest) {
      sst = ent.path();
      largest = ent.file_size();
    }
  }
  REQUIRE_FALSE(sst.empty());
  {
    std::fstream f(sst, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64);
    const char junk[16] = {'C', 'O', 'R', 'R', 'U', 'P', 'T', '!', 'C', 'O', 'R', 'R', 'U', 'P', 'T', '!'};
    f.write(junk, sizeof junk);
  }
  StateError e = open_error(dir / "s");
  CHECK(e.kind() == StateError::Kind::Corrupt);
  CHECK_THAT(e.what(), Contains("corrupt"));
  CHECK_THAT(e.what(), Contains((dir / "s").string()));
}

TEST_CASE("a missing CURRENT file is corruption, not a fresh store", "[state][corrupt]") {
  TempDir dir;
  {
    RocksCheckpointStore s(opts(dir / "s"));
    s.put_epoch(make_epoch(1));
  }
  std::filesystem::remove(dir / "s" / "CURRENT");
  StateError e = open_error(dir / "s");
  CHECK(e.kind() == StateError::Kind::Corrupt);
  CHECK_THAT(e.what(), Contains("CURRENT is missing"));
}

TEST_CASE("close reports and then refuses further use", "[state]") {
  TempDir dir;
  RocksCheckpointStore s(opts(dir / "s"));
  s.put_epoch(make_epoch(1));
  s.close();
  s.close();  // idempotent
  CHECK_THROWS_AS(s.latest(), StateError);
  // The lock went with the close.
  RocksCheckpointStore again(opts(dir / "s"));
  CHECK(again.latest()->epoch == 1);
}

TEST_CASE("thousands of epochs with retention stay small", "[state]") {
  TempDir dir;
  RocksCheckpointStore s(opts(dir / "s", 5));
  for (uint64_t e = 1; e <= 2000; ++e) {
    s.put_epoch(make_epoch(e, {"a", "b", "c"}));
    s.set_state(e, EpochState::Committed);
  }
  CHECK(s.list().size() == 5);
  CHECK(s.latest()->epoch == 2000);
  uintmax_t bytes = 0;
  for (const auto& ent : std::filesystem::recursive_directory_iterator(dir / "s")) {
    if (ent.is_regular_file()) bytes += ent.file_size();
  }
  CHECK(bytes < 16u * 1024 * 1024);
}
