#include "tests/pipeline/e2e_harness.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/decode/decoder.hpp"
#include "tools/reference/reference.hpp"

namespace cdc2doris::test {

long env_long(const char* name, long def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : def;
}

namespace {

// Plain (schemaless) records carry raw Connect values: the tables take them
// as they come (decimal bytes as base64 text, micros as BIGINT...). The
// decoder's typed conversions are tested in tests/decode; here the property
// under test is delivery: nothing lost, nothing twice.
std::string raw_ddl(const std::string& db, const std::string& table, bool duplicate, bool seq_column = false,
                    const std::string& properties = "") {
  return "CREATE TABLE `" + db + "`.`" + table +
         "` (`id` BIGINT NOT NULL, `customer_id` BIGINT NULL, `amount` STRING NULL, `quantity` INT NULL, "
         "`status` VARCHAR(16) NULL, `created_at` BIGINT NULL, `updated_at` VARCHAR(64) NULL, `ship_date` INT NULL, "
         "`is_gift` SMALLINT NULL, `note` STRING NULL, `tags` STRING NULL" +
         (seq_column ? std::string(", `seq` BIGINT NULL") : std::string()) + ") " +
         (duplicate ? std::string("DUPLICATE KEY(`id`)") : std::string("UNIQUE KEY(`id`)")) +
         " DISTRIBUTED BY HASH(`id`) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\"" + properties + ")";
}

// The TOAST-heavy tables' modes (see E2eOptions::toast_tables).
bool flexible_table(const E2eOptions& o, const std::string& t) { return o.toast_tables > 0 && t == "orders_0"; }
bool sequence_table(const E2eOptions& o, const std::string& t) { return o.toast_tables > 1 && t == "orders_1"; }

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// CDC2DORIS_E2E_DAEMON_BIN runs another build of the daemon (e.g. to show a
// regression test failing on the code before the fix).
std::string daemon_bin() {
  const char* v = std::getenv("CDC2DORIS_E2E_DAEMON_BIN");
  return v && *v ? v : CDC2DORIS_DAEMON_BIN;
}

workload::Options workload_options(const E2eOptions& o) {
  workload::Options w;
  w.seed = o.seed;
  w.tables = o.tables;
  w.partitions = o.partitions;
  w.server = o.topic_prefix;
  w.db = "shop";
  w.format = workload::Format::Plain;
  w.toast_tables = o.toast_tables;
  return w;
}

}  // namespace

E2eHarness::E2eHarness(E2eOptions opts)
    : opts_(std::move(opts)), dir_("cdc2doris-e2e"), broker_(KafkaBroker::shared()), gen_(workload_options(opts_)) {
  EmulatorOptions eo = opts_.emulator;
  if (const char* v = std::getenv("CDC2DORIS_E2E_DORIS_LIMITS"); v != nullptr && std::string_view(v) == "small") {
    // Doris' limits small instead of at their defaults (issue 30): finished
    // txns forgotten beyond 50 per database, by a cleaner running every
    // second; at most 20 running txns per database.
    if (eo.label_num_threshold == 0) eo.label_num_threshold = 50;
    if (eo.max_running_txns == 0) eo.max_running_txns = 20;
    if (eo.txn_clean_interval_s == 0) eo.txn_clean_interval_s = 1;
  }
  if (eo.stderr_file.empty()) eo.stderr_file = (dir_ / "emulator.log").string();
  emu_ = std::make_unique<Emulator>(eo);
  emu_->sql("", "CREATE DATABASE " + db_);
  emu_->sql("", "CREATE DATABASE ref_" + db_);
  const auto tables = gen_.tables();
  for (size_t i = 0; i < tables.size(); ++i) {
    const std::string& full = tables[i];
    const std::string table = full.substr(full.find('.') + 1);
    const bool dup = table == opts_.duplicate_table;
    const bool seq = sequence_table(opts_, table);
    std::string props;
    if (flexible_table(opts_, table))
      props = ", \"enable_unique_key_merge_on_write\" = \"true\", \"enable_unique_key_skip_bitmap_column\" = \"true\"";
    if (seq) props = ", \"function_column.sequence_type\" = \"BIGINT\"";
    emu_->sql(db_, raw_ddl(db_, table, dup, seq, props));
    // The reference applies rows one after the other in source order: no sequence needed.
    emu_->sql("ref_" + db_, raw_ddl("ref_" + db_, table, dup, seq));
    std::map<std::string, std::string> topic_configs;
    if (opts_.compacted_tables.count(table)) {
      if (dup || i < static_cast<size_t>(opts_.toast_tables))
        throw std::invalid_argument("E2eOptions::compacted_tables: " + table +
                                    " is a DUPLICATE KEY or partial-row table; compaction changes what it holds");
      topic_configs = {{"cleanup.policy", "compact,delete"},  // delete: retention (and DeleteRecords) applies too
                       {"segment.ms", "200"},
                       {"min.cleanable.dirty.ratio", "0.01"},
                       {"min.compaction.lag.ms", "0"},
                       {"delete.retention.ms", "86400000"}};
    }
    broker_.create_topic(opts_.topic_prefix + "." + db_ + "." + table, opts_.partitions, topic_configs);
  }
  write_config();
}

E2eHarness::~E2eHarness() {
  kill_daemon();
  // For post-mortems: CDC2DORIS_E2E_KEEP_LOGS=DIR keeps the daemon and emulator logs.
  if (const char* keep = std::getenv("CDC2DORIS_E2E_KEEP_LOGS"); keep && *keep) {
    std::error_code ec;
    std::filesystem::create_directories(keep, ec);
    std::vector<std::string> files{"daemon.log", "emulator.log"};
    for (const auto& m : members_) files.push_back("daemon-" + m + ".log");
    for (const auto& f : files)
      std::filesystem::copy_file(dir_ / f, std::filesystem::path(keep) / (opts_.topic_prefix + "-" + f),
                                 std::filesystem::copy_options::overwrite_existing, ec);
  }
}

void E2eHarness::write_config(const std::string& member) {
  std::ofstream c(dir_ / (member.empty() ? std::string("config.yaml") : "config-" + member + ".yaml"));
  const std::string prefix = member.empty() ? opts_.topic_prefix : opts_.topic_prefix + "_" + member;
  const std::string state = member.empty() ? std::string("state") : "state-" + member;
  c << "kafka:\n"
    << "  bootstrap_servers: \"" << broker_.bootstrap() << "\"\n"
    << "  group_id: \"" << opts_.topic_prefix << "\"\n"
    << (member.empty() ? std::string() : "  instance_id: \"" + instance_id(member) + "\"\n")
    << "  topic_regex: \"^" << opts_.topic_prefix << "\\\\." << db_ << "\\\\..*\"\n"
    << kafka_yaml_
    << "  properties:\n"
    << "    auto.offset.reset: earliest\n"
    << "    topic.metadata.refresh.interval.ms: \"1000\"\n"
    << "    session.timeout.ms: \"2000\"\n"
    << "    heartbeat.interval.ms: \"300\"\n"
    << "doris:\n"
    << "  fe: [\"" << emu_->fe() << "\"]\n"
    << "  user: root\n"
    << "  password: \"\"\n"
    << "  request_timeout: 10s\n"
    << "  load_timeout: 30s\n"
    << opts_.extra_doris_yaml
    << (opts_.toast_tables > 1 ? "routing:\n  tables:\n    " + db_ +
                                     ".orders_1:\n      sequence_col: seq\n      sequence_from_source_position: true\n"
                               : std::string())
    << "delivery:\n"
    << "  label_prefix: " << prefix << "\n"
    << "  epoch_interval: " << opts_.epoch_interval << "\n"
    << "  shutdown_deadline: 30s\n"
    << "  backoff_base: 50ms\n"
    << "  backoff_max: 1s\n"
    << opts_.extra_delivery_yaml << "state:\n"
    << "  dir: " << (dir_ / state).string() << "\n"
    << "admin:\n"
    << "  listen: 127.0.0.1:0\n"
    << "logging:\n"
    << "  level: info\n";
}

void E2eHarness::produce(size_t n) {
  auto batch = gen_.generate(n);
  std::map<std::string, std::vector<TestRecord>> by_topic;
  for (const auto& r : batch) by_topic[r.topic].push_back({r.key, r.value, r.headers, r.partition});
  for (const auto& [topic, recs] : by_topic) broker_.produce(topic, recs);
  records_.insert(records_.end(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
}

Process& E2eHarness::start_daemon(std::map<std::string, std::string> env) {
  kill_daemon();
  ++runs_;
  ProcessOptions po;
  po.argv = {daemon_bin(), "run", "--config", config_path()};
  po.env = std::move(env);
  po.stdout_file = (dir_ / "daemon.log").string();
  po.stderr_file = (dir_ / "daemon.log").string();
  {
    std::ofstream(dir_ / "daemon.log", std::ios::app) << "=== run " << runs_ << " ===\n";
  }
  daemon_ = std::make_unique<Process>(po);
  return *daemon_;
}

std::unique_ptr<Process> E2eHarness::start_member(const std::string& member, std::map<std::string, std::string> env) {
  if (members_.insert(member).second) write_config(member);
  ProcessOptions po;
  po.argv = {daemon_bin(), "run", "--config", (dir_ / ("config-" + member + ".yaml")).string()};
  po.env = std::move(env);
  const std::string log = (dir_ / ("daemon-" + member + ".log")).string();
  po.stdout_file = log;
  po.stderr_file = log;
  {
    std::ofstream(log, std::ios::app) << "=== start ===\n";
  }
  return std::make_unique<Process>(po);
}

void E2eHarness::set_member_instance_id(const std::string& member, const std::string& id) {
  instance_ids_[member] = id;
  members_.insert(member);
  write_config(member);
}

std::string E2eHarness::instance_id(const std::string& member) const {
  auto it = instance_ids_.find(member);
  return it != instance_ids_.end() ? it->second : opts_.topic_prefix + "-" + member;
}

std::string E2eHarness::member_log_tail(const std::string& member, size_t bytes) const {
  std::string log = read_file(dir_ / ("daemon-" + member + ".log"));
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

void E2eHarness::kill_daemon() {
  if (daemon_) daemon_->kill9();
  daemon_.reset();
}

std::optional<int> E2eHarness::wait_daemon(std::chrono::milliseconds timeout) {
  if (!daemon_) return std::nullopt;
  return daemon_->wait(timeout);
}

int E2eHarness::stop_daemon() {
  if (!daemon_) return -1;
  int st = daemon_->stop(std::chrono::seconds(60));
  daemon_.reset();
  return st;
}

int64_t E2eHarness::delete_committed_records() {
  int64_t deleted = 0;
  for (const auto& full : gen_.tables()) {
    const std::string topic = opts_.topic_prefix + "." + full;
    for (const auto& [p, committed] : broker_.committed_offsets(opts_.topic_prefix, topic)) {
      const int64_t low = watermarks(broker_.bootstrap(), topic, p).first;
      if (committed <= low) continue;
      delete_records(broker_.bootstrap(), topic, p, committed);
      deleted += committed - low;
    }
  }
  return deleted;
}

int64_t E2eHarness::delete_unloaded_records(const std::string& table, int32_t partition, int64_t count) {
  const std::string topic = opts_.topic_prefix + "." + db_ + "." + table;
  const int64_t committed = broker_.committed_offsets(opts_.topic_prefix, topic)[partition];
  const int64_t high = watermarks(broker_.bootstrap(), topic, partition).second;
  const int64_t before = std::min(committed + count, high);
  delete_records(broker_.bootstrap(), topic, partition, before);
  if (before <= committed) return 0;
  const int64_t base = incarnation_base_[{topic, partition}];
  gone_[{topic, partition}].push_back({base + committed, base + before});
  return before - committed;
}

void E2eHarness::recreate_topic(const std::string& table) {
  const std::string topic = opts_.topic_prefix + "." + db_ + "." + table;
  if (opts_.compacted_tables.count(table)) throw std::invalid_argument("recreate_topic: " + table + " is compacted");
  delete_topic(broker_.bootstrap(), topic);
  broker_.create_topic(topic, opts_.partitions);
  for (int32_t p = 0; p < opts_.partitions; ++p) incarnation_base_[{topic, p}] = 0;
  for (const auto& r : records_)
    if (r.topic == topic) ++incarnation_base_[{topic, r.partition}];
}

void E2eHarness::set_kafka_yaml(const std::string& yaml) {
  kafka_yaml_ = yaml;
  write_config();
  for (const auto& m : members_) write_config(m);
}

int64_t E2eHarness::compacted_away() const {
  int64_t away = 0;
  for (const auto& table : opts_.compacted_tables) {
    const std::string topic = opts_.topic_prefix + "." + db_ + "." + table;
    int64_t span = 0;
    for (int32_t p = 0; p < opts_.partitions; ++p) {
      const auto [low, high] = watermarks(broker_.bootstrap(), topic, p);
      span += high - low;
    }
    away += span - static_cast<int64_t>(consume_all(broker_.bootstrap(), topic, static_cast<size_t>(span), std::chrono::seconds(3)).size());
  }
  return away;
}

std::map<std::string, std::map<int32_t, int64_t>> E2eHarness::end_offsets() const {
  std::map<std::string, std::map<int32_t, int64_t>> out;
  for (const auto& r : records_) out[r.topic][r.partition] += 1;
  for (const auto& [tp, base] : incarnation_base_) out[tp.first][tp.second] -= base;
  return out;
}

bool E2eHarness::wait_caught_up(std::chrono::milliseconds timeout) {
  const auto want = end_offsets();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (const auto& [topic, parts] : want) {
      auto got = broker_.committed_offsets(opts_.topic_prefix, topic);
      for (const auto& [p, end] : parts)
        if (got[p] != end) all = false;
      if (!all) break;
    }
    if (all) return true;
    if (daemon_ && !daemon_->running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return false;
}

void E2eHarness::verify() {
  if (const char* keep = std::getenv("CDC2DORIS_E2E_KEEP_LOGS"); keep && *keep) {
    std::filesystem::create_directories(keep);
    std::ofstream(std::filesystem::path(keep) / (opts_.topic_prefix + "-txns.json")) << emu_->txns(db_);
  }
  decode::DecoderOptions decoding;
  if (opts_.toast_tables > 1) decoding.extra_columns_per_table[db_ + ".orders_1"].sequence = "seq";
  // What retention deleted before it was loaded is in neither.
  std::vector<workload::Record> kept;
  std::map<std::pair<std::string, int32_t>, int64_t> offset;
  for (const auto& r : records_) {
    const int64_t at = offset[{r.topic, r.partition}]++;
    auto g = gone_.find({r.topic, r.partition});
    if (g != gone_.end() &&
        std::any_of(g->second.begin(), g->second.end(), [&](const auto& range) { return at >= range.first && at < range.second; }))
      continue;
    kept.push_back(r);
  }
  auto verdicts = verify_against_reference(*emu_, db_, kept, {opts_.duplicate_table}, decoding);
  CHECK(verdicts.size() == static_cast<size_t>(opts_.tables));
  for (const auto& v : verdicts) {
    INFO("table " << v.table << ": " << v.detail);
    CHECK(v.rows == v.expected_rows);
    CHECK(v.match);
  }
}

size_t E2eHarness::count_log(const std::string& needle) const {
  std::string log = read_file(dir_ / "daemon.log");
  for (const auto& m : members_) log += read_file(dir_ / ("daemon-" + m + ".log"));
  size_t n = 0;
  for (size_t p = log.find(needle); p != std::string::npos; p = log.find(needle, p + 1)) ++n;
  return n;
}

std::string E2eHarness::log_tail(size_t bytes) const {
  std::string log = read_file(dir_ / "daemon.log");
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

}  // namespace cdc2doris::test
