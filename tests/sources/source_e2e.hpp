#pragma once
// Shared parts of the real-source end-to-end tests (PostgreSQL, MariaDB):
// a type matrix described once (source type, recommended Doris type, values,
// and the source-side SQL that renders a value the way docs/decoding.md says
// Doris holds it), a cdc2doris daemon per converter mode, waiting until the
// daemon committed every record in Kafka, and the row comparison.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

namespace cdc2doris::test::sources {

struct Column {
  std::string name;
  std::string source_type;  // DDL type in the source
  std::string doris_type;   // the recommended Doris column type (docs/decoding.md)
  // Source-side SQL rendering the column as Doris holds it; `$` is the column
  // (except right after a quote: `'$'` stays a JSON path).
  std::string expected;
  // SQL literals; row i of the type matrix takes values[i % size].
  std::vector<std::string> values;
  // Where JsonConverter without schemas needs another Doris type (a logical
  // type Doris has no column for, e.g. a time of day as microseconds), that
  // type and its rendering; empty = as above.
  std::string plain_doris_type = "";
  std::string plain_expected = "";

  const std::string& doris(bool schemas) const {
    return schemas || plain_doris_type.empty() ? doris_type : plain_doris_type;
  }
};

// CREATE TABLE for Doris (UNIQUE KEY, merge-on-write) with `key` first; a
// non-empty `sequence_col` adds that BIGINT column as the table's sequence
// column (function_column.sequence_col).
std::string doris_ddl(const std::string& table, const std::vector<std::pair<std::string, std::string>>& key,
                      const std::vector<std::pair<std::string, std::string>>& cols,
                      const std::string& sequence_col = "");

// The expected expression (schemaless variant if `schemas` is false) with
// `$` replaced by the column name.
std::string expected_expr(const Column& c, bool schemas = true);

// One cdc2doris process consuming `topic_regex` into Doris db `target_db`
// (`routing.target: <target_db>.{table}`); `routing_yaml` is added under
// `routing:` and `decoding_yaml` under `decoding:` (indented two spaces),
// e.g. per-table settings, `format: avro`.
class Daemon {
 public:
  Daemon(const std::string& name, const std::string& bootstrap, const std::string& topic_regex,
         const std::string& fe, const std::string& target_db, const std::string& routing_yaml = "",
         const std::string& decoding_yaml = "",
         const std::string& dead_letter_topic = "");  // non-empty: bad_records dead_letter
  ~Daemon();
  std::string admin() const { return admin_; }
  std::string log_tail(size_t bytes = 6000) const;
  bool running() { return proc_->running(); }
  // "still running", or how the process ended (exit status, or the signal
  // that killed it): a daemon that dies without a log line is explained.
  std::string how_ended() { return proc_->how_ended(); }

 private:
  TempDir dir_;
  std::string admin_;
  std::unique_ptr<Process> proc_;
};

// High watermarks of every partition of every topic whose name starts with
// `prefix`: "topic[partition]" -> end offset.
std::map<std::string, int64_t> end_offsets(const std::string& bootstrap, const std::string& prefix);

// Waits until the daemon's /status shows, for every partition in `ends`, a
// committed offset at its end (everything in Kafka is in Doris). Returns the
// last status on timeout (empty string on success).
std::string wait_committed(Emulator& emu, Daemon& d, const std::map<std::string, int64_t>& ends,
                           std::chrono::seconds timeout);

// Compares rows given as JSON lines (source: from the database's JSON
// rendering; doris: Emulator::rows) keyed by `key` columns. Returns "" when
// equal, else a readable list of differences (at most `max_diffs`, or
// CDC2DORIS_SOURCE_MAX_DIFFS).
std::string compare_rows(const std::vector<std::string>& source, const std::vector<std::string>& doris,
                         const std::vector<std::string>& key, size_t max_diffs = 20);

std::vector<std::string> split_lines(const std::string& s);

}  // namespace cdc2doris::test::sources
