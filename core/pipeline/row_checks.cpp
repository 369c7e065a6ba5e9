// Rows checked against their Doris columns before they are appended to a
// load (delivery.check_rows; the limits are decode::RowCheck's). A record
// one of whose rows does not fit is a bad record as a whole: none of its
// rows load, so a key change's delete never lands without its insert.
#include <spdlog/spdlog.h>

#include "core/pipeline/pipeline_impl.hpp"
#include "core/schema/types.hpp"

namespace cdc2doris::pipeline {

namespace {

// A table altered by hand (a column widened after rows went to the
// dead-letter topic) is read again at a violation, at most this often.
constexpr auto kShapeRefresh = std::chrono::seconds(10);

std::unique_ptr<decode::RowCheck> row_check_of(const TableShape& shape) {
  std::vector<decode::ColumnLimit> limits;
  limits.reserve(shape.columns.size());
  for (const auto& c : shape.columns)
    limits.push_back(schema::column_limit(c.name, c.type, c.nullable, c.default_sql.has_value()));
  return std::make_unique<decode::RowCheck>(std::move(limits));
}

}  // namespace

bool Pipeline::Impl::rows_fit(const Target& t, const kafka::Message& msg) {
  TableDdl& td = table_ddl(t);
  for (bool refreshed = false;; refreshed = true) {
    if (!td.shape_read) {
      if (auto err = read_shape(t, td)) {
        fail(*err, "schema lookup");
        return false;
      }
    }
    // A missing table is named by the load (or created by auto_create).
    if (!td.shape.exists) return true;
    if (!td.row_check) td.row_check = row_check_of(td.shape);
    if (!td.row_check->checks()) return true;
    std::optional<decode::RowViolation> bad;
    for (const auto& row : change_.rows)
      if ((bad = td.row_check->check(row.json, row.partial_columns.empty()))) break;
    if (!bad) return true;
    if (!refreshed && std::chrono::steady_clock::now() - td.shape_read_at >= kShapeRefresh) {
      td.shape_read = false;
      continue;
    }
    decode::DecodeError err;
    err.code = decode::DecodeErrorCode::DoesNotFit;
    err.topic = std::string(msg.topic);
    err.partition = msg.partition;
    err.offset = msg.offset;
    err.path = "table " + t.name() + " column " + bad->column;
    err.expected = std::move(bad->expected);
    err.detail = std::move(bad->detail);
    bad_record(msg, err);
    return false;
  }
}

}  // namespace cdc2doris::pipeline
