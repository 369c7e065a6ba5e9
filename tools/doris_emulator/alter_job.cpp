// Heavy schema changes as asynchronous ALTER jobs, as Doris' FE runs them
// (fe-core alter/SchemaChangeHandler, alter/SchemaChangeJobV2):
//
// * Which ALTERs are heavy: SchemaChangeHandler.processAddColumn /
//   processDropColumn / processModifyColumn decide "light" per clause: an ADD
//   or DROP of a value column is light when the table has
//   light_schema_change (the default since 1.2.1); a key column, or any table
//   without it, needs a job; a MODIFY that changes the column is a job unless
//   it is VARCHAR -> VARCHAR (a longer length) on a light table.
// * The job: the ALTER answers at once; the table's state is SCHEMA_CHANGE
//   (a second ALTER is refused by OlapTable.checkNormalStateForAlter);
//   WAITING_TXN until every txn of the table begun before the job
//   (id < watershedTxnId, isPreviousLoadFinished) is final, PRECOMMITTED
//   ones included; RUNNING while the BEs convert the tablets; FINISHED, and
//   only then DESC / _schema show the new shape. Loads keep working
//   throughout: they are written in the old shape and converted with the
//   table (an added column reads its default).
// * SHOW ALTER TABLE COLUMN: SchemaChangeJobV2.getInfo, one row per job
//   (one index here).
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/engine_internal.hpp"

#include <absl/time/time.h>

namespace cdc2doris::emu {
using namespace detail;

namespace {

// alter_table_timeout_second (FE Config.java), shown in the Timeout column.
constexpr int64_t kAlterTimeoutS = 86400 * 30;

bool finished(const AlterJob& j) { return j.state == "FINISHED" || j.state == "CANCELLED"; }

// TimeUtils.longToTimeStringWithms: "N/A" (FeConstants.null_string) when unset.
std::string time_ms_text(int64_t ms) {
  if (ms <= 0) return "N/A";
  return absl::FormatTime("%Y-%m-%d %H:%M:%E3S", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

}  // namespace

bool Engine::light_schema_change(const Table& t) {
  for (const auto& [k, v] : t.props)
    if (k == "light_schema_change") return !iequals(v, "false");
  return true;
}

const AlterJob* Engine::running_alter_job(const Table& t) const {
  for (const auto& j : alter_jobs_)
    if (j.table_id == t.id && !finished(j)) return &j;
  return nullptr;
}

void Engine::start_alter_job(const Table& t, const std::string& cur_db, const std::string& stmt) {
  AlterJob j;
  j.id = next_job_id_++;
  j.cur_db = cur_db;
  j.stmt = stmt;
  j.db = t.db;
  j.table = t.name;
  j.table_id = t.id;
  j.create_ms = now_ms();
  // SchemaChangeJobV2.runPendingJob: the next txn id is the watershed.
  j.watershed_txn_id = next_txn_id_;
  j.schema_version = t.schema_version + 1;
  std::string r = "J";
  put_i64(&r, j.id);
  put_s(&r, j.cur_db);
  put_s(&r, j.stmt);
  put_s(&r, j.db);
  put_s(&r, j.table);
  put_i64(&r, j.table_id);
  put_i64(&r, j.create_ms);
  put_i64(&r, j.watershed_txn_id);
  wal_write(r, true);
  alter_jobs_.push_back(std::move(j));
}

void Engine::advance_alter_jobs(int64_t now) {
  for (auto& j : alter_jobs_) {
    if (finished(j)) continue;
    Table* t = nullptr;
    if (auto* d = find_db(j.db))
      for (auto& [n, tab] : d->tables)
        if (tab->id == j.table_id) t = tab.get();
    std::string end_state;
    if (!t) {
      end_state = "CANCELLED";
      j.msg = "table " + j.table + " does not exist";
    } else if (j.state == "WAITING_TXN") {
      bool earlier_running = false;
      for (int64_t id : live_txns_) {
        if (id >= j.watershed_txn_id) break;  // ordered set: the rest began after the job
        auto it = txns_.find(id);
        if (it == txns_.end() || it->second.table_id != j.table_id) continue;
        const TxnState s = it->second.state;
        if (s != TxnState::Visible && s != TxnState::Aborted) earlier_running = true;
      }
      if (!earlier_running) {
        j.state = "RUNNING";
        j.running_ms = now;
      }
    }
    if (t && j.state == "RUNNING" && now - j.running_ms >= cfg_.alter_job_ms) {
      std::string ignored;
      applying_job_ = true;
      try {
        exec_sql_inner(j.cur_db, j.stmt, &ignored, false);
        end_state = "FINISHED";
        j.schema_version = t->schema_version;
      } catch (const std::exception& e) {
        end_state = "CANCELLED";
        j.msg = e.what();
      }
      applying_job_ = false;
    }
    if (end_state.empty()) continue;
    j.state = end_state;
    j.finish_ms = now;
    std::string r = "K";
    put_i64(&r, j.id);
    put_i64(&r, j.finish_ms);
    put_s(&r, j.state);
    put_s(&r, j.msg);
    wal_write(r, true);
  }
}

// 'J': a job created (its ALTER is logged as a 'D' record when it finishes);
// 'K': a job ended. A job not ended in the log starts over after a restart,
// as Doris' replayed jobs resume.
void Engine::replay_alter_job(char type, std::string_view rec) {
  Reader r{rec, 1};
  if (type == 'J') {
    AlterJob j;
    j.id = r.i64();
    j.cur_db = r.s();
    j.stmt = r.s();
    j.db = r.s();
    j.table = r.s();
    j.table_id = r.i64();
    j.create_ms = r.i64();
    j.watershed_txn_id = r.i64();
    next_job_id_ = std::max(next_job_id_, j.id + 1);
    alter_jobs_.push_back(std::move(j));
    return;
  }
  const int64_t id = r.i64();
  for (auto& j : alter_jobs_)
    if (j.id == id) {
      j.finish_ms = r.i64();
      j.state = r.s();
      j.msg = r.s();
      if (auto* t = find_table(j.db, j.table)) j.schema_version = t->schema_version;
    }
}

std::vector<std::vector<std::string>> Engine::show_alter_rows(const std::string& db) const {
  std::vector<std::vector<std::string>> rows;
  for (const auto& j : alter_jobs_) {
    if (j.db != db) continue;
    // Progress: finished/total tablet tasks while RUNNING (one tablet here).
    const std::string progress = j.state == "RUNNING" ? "0/1" : "N/A";
    rows.push_back({std::to_string(j.id), j.table, time_ms_text(j.create_ms), time_ms_text(j.finish_ms), j.table,
                    std::to_string(j.id + 1), std::to_string(j.table_id),
                    std::to_string(j.schema_version) + ":" + std::to_string(j.table_id * 7919 % 1000000007),
                    std::to_string(j.watershed_txn_id), j.state, j.msg, progress, std::to_string(kAlterTimeoutS)});
  }
  return rows;
}

}  // namespace cdc2doris::emu
