// Rows checked against their Doris columns before they are appended to a
// load (delivery.check_rows; the limits are decode::RowCheck's). A record
// one of whose rows does not fit is a bad record as a whole: none of its
// rows load, so a key change's delete never lands without its insert. A
// VARCHAR too short for a string widens instead where the table's
// schema_evolution allows widenings.
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
  bool refreshed = false, widened = false;
  for (;;) {
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
    for (auto& row : change_.rows)
      if ((bad = td.row_check->check_in_place(row.json, row.partial_columns.empty()))) break;
    if (!bad) return true;
    if (!refreshed && std::chrono::steady_clock::now() - td.shape_read_at >= kShapeRefresh) {
      refreshed = true;
      td.shape_read = false;
      continue;
    }
    if (!widened) {
      if (auto p = widen_for_value(t, td, *bad, msg)) {
        if (*p != Prepared::Proceed) return false;
        widened = true;
        continue;
      }
    }
    bad_record(msg, decode::DecodeError{decode::DecodeErrorCode::DoesNotFit, std::string(msg.topic), msg.partition,
                                        msg.offset, "table " + t.name() + " column " + bad->column,
                                        std::move(bad->expected), std::move(bad->detail)});
    return false;
  }
}

bool Pipeline::Impl::rows_fit_quietly(const Target& t) {
  TableDdl& td = table_ddl(t);
  // Unread columns: Doris decides, as it did before the check existed.
  if (!td.shape_read && read_shape(t, td)) return true;
  if (!td.shape.exists) return true;
  if (!td.row_check) td.row_check = row_check_of(td.shape);
  for (auto& row : change_.rows)
    if (td.row_check->check_in_place(row.json, row.partial_columns.empty())) return false;
  return true;
}

std::optional<Pipeline::Impl::Prepared> Pipeline::Impl::widen_for_value(const Target& t, TableDdl& td,
                                                                        const decode::RowViolation& v,
                                                                        const kafka::Message& msg) {
  // A string longer than its VARCHAR (Debezium does not propagate source
  // lengths by default, so a hand-made table guessed one): widened between
  // epochs like any widening the policy allows (issue 33 item 7). Key
  // columns and CHAR keep their type; so does a column Doris refused to widen.
  if (v.kind != decode::ColumnLimit::Kind::Bytes || td.settings.schema_evolution == schema::Policy::Off ||
      td.widen_refused.count(v.column))
    return std::nullopt;
  const schema::TableColumn* c = td.shape.find(v.column);
  if (c == nullptr || c->key) return std::nullopt;
  const auto type = schema::widened_varchar(c->type, v.bytes);
  if (!type || !schema::is_widening(c->type, *type)) return std::nullopt;
  // Doris refuses a MODIFY that changes nullability or the default
  // (Column.checkSchemaChangeAllowed): both are repeated as they are.
  const schema::DdlOp op{schema::OpKind::ModifyColumn, schema::Column{c->name, *type, c->nullable, c->default_sql, false, false}, {}};
  const std::string column = c->name, from = c->type;
  log_->warn("table {}: a value of {} bytes at {}/{}@{} does not fit column {} {}; widening it to {}", t.name(),
             v.bytes, msg.topic, msg.partition, msg.offset, column, from, *type);
  const uint64_t generation = rewind_generation_;
  const Prepared p = run_ddl(t, td, {to_step(t.db, t.table, op)}, &msg);
  if (p != Prepared::Proceed || rewind_generation_ != generation) return Prepared::Stop;
  const schema::TableColumn* now = td.shape.find(column);
  if (now != nullptr && schema::normalize_type(now->type) == schema::normalize_type(*type)) return Prepared::Proceed;
  // Refused: run_ddl put the record through the bad-record policy already.
  td.widen_refused.insert(column);
  return Prepared::Skip;
}

}  // namespace cdc2doris::pipeline
