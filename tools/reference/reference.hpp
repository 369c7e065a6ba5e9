#pragma once
// The exactly-once oracle shared by the end-to-end tests and the demo: every
// produced record is decoded with the daemon's decoder and its rows are
// loaded, in produced order, with plain (non-2PC) Stream Loads into
// `ref_<db>.<table>` of the same Doris emulator. A target table is correct
// when it equals its reference: same checksum (UNIQUE KEY) or the same rows,
// each exactly once (DUPLICATE KEY).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/decode/decoder.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tools/workload/workload.hpp"

namespace cdc2doris::test {

struct TableVerdict {
  std::string table;         // "db.table"
  bool duplicate_key = false;
  int64_t rows = 0;          // rows in the target table
  int64_t expected_rows = 0; // rows in the reference
  bool match = false;
  std::string detail;        // why not, when !match
};

// Creates `ref_<db>` tables with `ddl_for(ref_db, table)` beforehand (the
// caller), then loads and compares. Throws std::runtime_error when a record
// does not decode or a reference load fails.
std::vector<TableVerdict> verify_against_reference(Emulator& emu, const std::string& db,
                                                   const std::vector<workload::Record>& records,
                                                   const std::set<std::string>& duplicate_tables,
                                                   const decode::DecoderOptions& options = {});

}  // namespace cdc2doris::test
