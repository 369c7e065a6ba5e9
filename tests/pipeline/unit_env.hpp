#pragma once
// The world of the pipeline unit tests (pipeline_unit_test.cpp,
// group_unit_test.cpp): the generated change stream in a fake Kafka, a fake
// Doris, a checkpoint store, and a Runner for one pipeline run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/doris/label.hpp"
#include "core/pipeline/column_types.hpp"
#include "core/pipeline/table_routing.hpp"
#include "core/pipeline/pipeline.hpp"
#include "state/memory_store.hpp"
#include "tests/pipeline/fakes.hpp"
#include "tools/workload/workload.hpp"

using namespace cdc2doris;
using namespace std::chrono_literals;
using cdc2doris::test::FakeDlq;
using cdc2doris::test::FakeDoris;
using cdc2doris::test::FakeSource;
using cdc2doris::test::TxnState;
using kafka::TopicPartition;

namespace {

// The pipeline logs a lot at info; CDC2DORIS_TEST_LOG=1 shows it.
const bool kQuiet = [] {
  if (std::getenv("CDC2DORIS_TEST_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
  return true;
}();

constexpr auto kWait = 10s;  // bound of every wait; a passing test needs a small fraction

doris::DorisError derr(doris::ErrorKind k, Disposition d, const std::string& msg) { return {k, d, msg}; }

// The column types the workload's schemaless records lost, by target table
// (the default route keeps the source's names), in place of the fake Doris
// tables' (which have no columns).
class WorkloadColumnTypes : public pipeline::ColumnTypes {
 public:
  explicit WorkloadColumnTypes(const workload::Generator& gen) : gen_(gen) {}
  std::optional<const decode::SchemaNode*> types(const pipeline::Target& t) override {
    return gen_.column_types(t.db, t.table);
  }
  void forget(const pipeline::Target&) override {}

 private:
  const workload::Generator& gen_;
};

// One world: the generated change stream in a fake Kafka, a fake Doris with
// the target tables, a checkpoint store. Shared by successive pipeline runs
// ("restarts").
struct Env {
  workload::Generator gen;
  FakeSource source;
  FakeDoris doris;
  state::MemoryCheckpointStore store;
  pipeline::ExplicitRouter router;
  WorkloadColumnTypes column_types{gen};
  FakeDlq dlq;
  std::string db = "shop";
  std::set<std::string> dup_tables{"orders_3"};

  static workload::Options options(uint64_t seed) {
    workload::Options o;
    o.seed = seed;
    o.tables = 4;
    o.partitions = 2;
    o.server = "s";
    o.db = "shop";
    o.snapshot_rows_per_table = 2;
    return o;
  }

  explicit Env(uint64_t seed = 1, bool register_tables = true) : gen(options(seed)) {
    for (int i = 0; i < 4; ++i) {
      const std::string t = "orders_" + std::to_string(i);
      source.add_topic("s.shop." + t, 2);
      if (register_tables) doris.add_table(db, t, !dup_tables.count(t));
    }
  }

  void produce(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      auto r = gen.next();
      source.produce(r.topic, r.partition, r.key, r.value);
    }
  }

  void produce_at_once(size_t n) {
    std::vector<std::pair<TopicPartition, FakeSource::Stored>> records;
    for (size_t i = 0; i < n; ++i) {
      auto r = gen.next();
      records.push_back({{r.topic, r.partition}, {r.key, r.value}});
    }
    source.produce_at_once(std::move(records));
  }

  pipeline::PipelineConfig config() const {
    pipeline::PipelineConfig c;
    c.label_prefix = "t";
    c.epoch_interval = 15ms;
    c.poll_timeout = 2ms;
    c.poll_max_messages = 20;
    c.backoff_base = 1ms;
    c.backoff_cap = 4ms;
    c.shutdown_deadline = 3s;
    c.write_chunk_bytes = 1;  // every row reaches its stream at once: write faults hit mid-epoch
    return c;
  }

  // What Doris must hold after the records before `upto` (per partition;
  // absent = none) were applied: decoded with the pipeline's options, in
  // partition order (a key's changes all live in one partition).
  std::map<std::string, FakeDoris::Table> expected(const kafka::OffsetMap& upto) {
    std::map<std::string, FakeDoris::Table> out;
    for (const auto& [name, t] : doris.tables()) out[name].unique = t.unique;
    decode::Decoder dec(gen.decoder_options());
    decode::Change c;
    for (const auto& tp : source.partitions()) {
      auto lim = upto.find(tp);
      if (lim == upto.end()) continue;
      auto msgs = source.messages(tp);
      for (int64_t off = 0; off < lim->second && off < static_cast<int64_t>(msgs.size()); ++off) {
        const auto& m = msgs[static_cast<size_t>(off)];
        decode::KafkaRecord rec{tp.topic, tp.partition, off, {}, {}, {}};
        if (m.key) rec.key = *m.key;
        if (m.value) rec.value = *m.value;
        if (gen.decode(dec, rec, c) || c.kind != decode::Kind::Change) continue;
        auto& tab = out[c.db + "." + c.table];
        for (const auto& row : c.rows) FakeDoris::apply_row(tab, row.json);
      }
    }
    return out;
  }

  kafka::OffsetMap end_offsets() const {
    kafka::OffsetMap m;
    for (const auto& tp : source.partitions()) m[tp] = source.end_offset(tp);
    return m;
  }

  kafka::OffsetMap store_committed() {
    kafka::OffsetMap m;
    for (const auto& [tp, off] : store.committed_offsets()) m[{tp.topic, tp.partition}] = off.offset;
    return m;
  }

  // Every produced record is in a COMMITTED epoch (and, unless `group` is
  // false, its offsets in the consumer group).
  bool caught_up(bool group = true) {
    auto latest = store.latest();
    return latest && latest->state == state::EpochState::Committed && store_committed() == end_offsets() &&
           (!group || source.group_committed() == end_offsets());
  }

  // What Doris may hold after a stop: the committed offsets, or the latest
  // recorded epoch's end offsets once every txn of it is committed in Doris
  // (a PRECOMMITTED record whose commits went through before the store was
  // told; the next start only marks it).
  kafka::OffsetMap durable_upto() {
    auto upto = store_committed();
    auto l = store.latest();
    if (l && l->state == state::EpochState::Precommitted &&
        std::all_of(l->txns.begin(), l->txns.end(), [&](const auto& t) {
          auto d = doris.txn_by_label(t.db, t.label);
          return d && d->id == t.txn_id && d->state == TxnState::Committed;
        }))
      for (const auto& p : l->partitions) upto[{p.topic, p.partition}] = p.end_offset;
    return upto;
  }

  // The source handed out every record (the pipeline processes the batch
  // before it looks at a stop request).
  bool all_fetched() const { return source.positions() == end_offsets(); }

  size_t total_rows() {
    size_t n = 0;
    for (const auto& [name, t] : expected(end_offsets())) n += t.unique ? t.rows.size() : t.dup_rows.size();
    return n;
  }
};

// Doris equals the model of the records below `upto`; DUPLICATE tables hold
// each row exactly once (sorted comparison). Differences are summarised.
// As if every pre-commit were older than Doris' pre-commit timeout: a txn
// Doris no longer knows may have expired as well as been committed.
[[maybe_unused]] pipeline::PipelineConfig past_precommit_timeout(pipeline::PipelineConfig c) {
  c.precommit_timeout_ms = 1;
  c.clock_skew_allowance_ms = 0;
  return c;
}

void check_doris_matches(Env& env, const kafka::OffsetMap& upto) {
  auto want = env.expected(upto);
  auto have = env.doris.tables();
  REQUIRE(have.size() == want.size());
  for (auto& [name, w] : want) {
    auto& h = have.at(name);
    size_t missing = 0, extra = 0, differ = 0;
    if (w.unique) {
      for (const auto& [k, row] : w.rows) {
        auto it = h.rows.find(k);
        if (it == h.rows.end()) ++missing;
        else if (it->second != row) ++differ;
      }
      for (const auto& [k, row] : h.rows)
        if (!w.rows.count(k)) ++extra;
    } else {
      std::multiset<std::string> ws(w.dup_rows.begin(), w.dup_rows.end()), hs(h.dup_rows.begin(), h.dup_rows.end());
      for (const auto& r : ws)
        if (hs.count(r) < ws.count(r)) ++missing;
      for (const auto& r : hs)
        if (ws.count(r) < hs.count(r)) ++extra;  // duplicates or rows that should not be there
    }
    INFO("table " << name << (w.unique ? " (UNIQUE)" : " (DUPLICATE)") << ": expected "
                  << (w.unique ? w.rows.size() : w.dup_rows.size()) << " rows, Doris has "
                  << (w.unique ? h.rows.size() : h.dup_rows.size()) << "; missing " << missing << ", extra " << extra
                  << ", different " << differ);
    CHECK(missing == 0);
    CHECK(extra == 0);
    CHECK(differ == 0);
  }
}

// Each label has at most one COMMITTED txn (no table loaded twice for an epoch)
// and nothing of ours is left PREPARE/PRECOMMITTED.
void check_txns_clean(Env& env) {
  std::map<std::string, int> committed;
  for (const auto& t : env.doris.txns()) {
    INFO("txn " << t.id << " label " << t.label << " " << test::to_string(t.state));
    CHECK((t.state == TxnState::Committed || t.state == TxnState::Aborted));
    if (t.state == TxnState::Committed) CHECK(++committed[t.label] == 1);
  }
}

// Runs one Pipeline on its own thread. Never hangs the test binary: a run
// that does not end within the bound fails the test, the fakes are healed so
// it can end, and if it still does not the process aborts with a message.
class Runner {
 public:
  // store: another instance's state (multi-instance tests); default env.store.
  Runner(Env& env, pipeline::PipelineConfig cfg, bool with_dlq = false, state::CheckpointStore* store = nullptr)
      : env_(env),
        pipeline_(std::move(cfg), env.gen.decoder_options(),
                  pipeline::Dependencies{env.source, env.doris, store ? *store : env.store, env.router, metrics,
                                         with_dlq ? &env.dlq : nullptr, nullptr, &env.column_types}) {
    thread_ = std::thread([this] {
      pipeline::RunResult r;
      std::string ex;
      try {
        r = pipeline_.run();
      } catch (const std::exception& e) {
        ex = e.what();
      } catch (...) {
        ex = "unknown exception";
      }
      std::lock_guard lk(mu_);
      result_ = std::move(r);
      exception_ = ex;
      done_ = true;
      cv_.notify_all();
    });
  }
  ~Runner() {
    if (!thread_.joinable()) return;
    pipeline_.request_stop();
    if (!wait_done(kWait)) {
      env_.doris.heal();
      if (!wait_done(kWait)) {
        std::fprintf(stderr, "pipeline run did not end after stop + heal: aborting the test binary\n");
        std::abort();
      }
    }
    thread_.join();
  }

  bool wait_done(std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, timeout, [&] { return done_; });
  }
  bool done() {
    std::lock_guard lk(mu_);
    return done_;
  }

  // Waits (bounded) for a condition re-checked after every poll.
  bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout = kWait) {
    return env_.source.wait_for([&] { return pred() || done(); }, timeout) && pred();
  }

  // The run's result once it ended by itself (an error) within the bound.
  pipeline::RunResult await_end(std::chrono::milliseconds timeout = kWait) {
    if (!wait_done(timeout)) {
      FAIL_CHECK("pipeline run did not end within the bound");
      pipeline_.request_stop();
      env_.doris.heal();
      REQUIRE(wait_done(kWait));
    }
    thread_.join();
    std::lock_guard lk(mu_);
    INFO("exception: " << exception_);
    CHECK(exception_.empty());
    return result_;
  }

  pipeline::RunResult stop(std::chrono::milliseconds timeout = kWait) {
    pipeline_.request_stop();
    return await_end(timeout);
  }

  pipeline::Metrics metrics;

 private:
  Env& env_;
  pipeline::Pipeline pipeline_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  pipeline::RunResult result_;
  std::string exception_;
};

[[maybe_unused]] std::string err_text(const pipeline::RunResult& r) { return r.error ? r.error->what() : std::string("<none>"); }

[[maybe_unused]] uint64_t rewinds(const pipeline::Metrics& m, const std::string& reason) {
  auto s = m.snapshot();
  auto it = s.rewinds_by_reason.find(reason);
  return it == s.rewinds_by_reason.end() ? 0 : it->second;
}

}  // namespace
