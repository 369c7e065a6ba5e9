#include "core/pipeline/table_routing.hpp"

namespace cdc2doris::pipeline {

const RoutedTable& TableRouting::route(const decode::Change& change, bool wants_column_types) {
  if (!have_last_ || change.table != table_ || change.db != db_ || change.schema != schema_) {
    db_.assign(change.db);
    schema_.assign(change.schema);
    table_.assign(change.table);
    have_last_ = true;
    last_ = RoutedTable{};
    last_target_ = nullptr;
    if (auto target = router_.route(change)) {
      auto it = targets_.find(*target);
      if (it == targets_.end()) {
        // Asked after route(): a rule router's settings depend on the rule that routed to the target.
        TableSettings s = router_.settings(*target);
        PerTarget pt;
        pt.options = decode::TableOptions{std::move(s.key_columns), std::move(s.extra_columns), std::move(s.deletes),
                                          std::move(s.transforms)};
        it = targets_.emplace(std::move(*target), std::move(pt)).first;
      }
      last_target_ = &it->second;
      last_.target = &it->first;
      last_.context.options = &it->second.options;
    }
  }
  if (wants_column_types && last_target_ != nullptr && column_types_ != nullptr) {
    PerTarget& pt = *last_target_;
    if (!pt.column_types_known) {
      const auto types = column_types_->types(*last_.target);
      pt.column_types = types.value_or(nullptr);
      pt.column_types_known = types.has_value();  // a transient failure is asked again
    }
    last_.context.column_types = pt.column_types;
  }
  return last_;
}

void TableRouting::forget_column_types(const Target& target) {
  if (column_types_ != nullptr) column_types_->forget(target);
  if (auto it = targets_.find(target); it != targets_.end()) {
    it->second.column_types = nullptr;
    it->second.column_types_known = false;
  }
}

std::optional<decode::DecodeError> decode_routed(decode::Decoder& decoder, TableRouting& routing,
                                                 const decode::KafkaRecord& record, decode::Change& out,
                                                 const RoutedTable*& routed) {
  routed = nullptr;
  if (auto err = decoder.identify(record, out)) return err;
  decode::TableContext context;
  if (out.kind == decode::Kind::Change || out.kind == decode::Kind::Truncate) {
    routed = &routing.route(out, decoder.wants_column_types());
    context = routed->context;
  }
  if (auto err = decoder.convert(context, out)) {
    routed = nullptr;
    return err;
  }
  return std::nullopt;
}

}  // namespace cdc2doris::pipeline
