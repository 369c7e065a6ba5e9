// Rows Doris rejects: the records they came from are found and handled by
// the bad-record policy, and every other row still loads exactly once.
//
// Doris refuses a whole Stream Load for one row it cannot take
// ([DATA_QUALITY_ERROR]too many filtered rows), and its error log does not
// say which row of the body it was: BE validation errors are written with an
// empty "src line" (be/src/vec/sink/vtablet_block_convertor.cpp,
// _internal_validate_column). So when a table's load is refused for its data
// (and delivery.bad_records is not `fail`), the table is isolated: the epoch
// is aborted and its range read again, this time with the table's rows kept
// in memory with the record each came from, and sent only when the epoch
// ends. Each load is then sent whole; one Doris refuses is halved, and the
// halves are sent again until the refused records stand alone. Every probe
// runs under the load's own label (a refused load's txn is aborted by Doris,
// an accepted probe is aborted here, both free the label at once), so a
// crash mid-way leaves nothing recovery's label walk does not find. Finally
// every load is sent without the refused records, which go to the policy.
//
// The loads split as they would without isolation (the refused records
// count where they stand), so a replay of the epoch finds the same labels
// holding the same rows; it isolates the table again when Doris refuses a
// load, and skips the refused records quietly: they were handled when the
// epoch was first read.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <span>
#include <tuple>

namespace cdc2doris::pipeline {

namespace {

using Position = std::tuple<std::string, int32_t, int64_t>;

Position position_of(const KeptRecord& r) { return {r.topic, r.partition, r.offset}; }

using Sent = doris::DorisResult<doris::LoadResult>;

// One attempt under the load's label with the rows of the records `take` selects.
Sent send_rows(doris::DorisClient& doris, const OpenLoad& load, const std::vector<bool>& take) {
  const IsolatedRows& iso = *load.isolated;
  std::string body;
  size_t begin = 0;
  for (size_t i = 0; i < iso.row_end.size(); ++i) {
    const size_t end = iso.row_end[i];
    if (take[iso.row_record[i]]) body.append(load.pending, begin, end - begin);
    begin = end;
  }
  auto stream = doris.open_load(load.spec);
  // No rows at all still pre-commits an (empty) txn under the label: the
  // epoch's parts stay what a replay rebuilds.
  if (!body.empty())
    if (auto written = stream->write_from(body); !written) return std::move(written.error());
  return stream->finish();
}

std::string reason_of(const doris::DorisError& err) {
  return err.error_log.empty() ? err.message() : err.error_log.front();
}

// Finds the records among `units` (indices into the load's records) whose
// rows Doris refuses, into `bad` with Doris' reason. `failing`: the units are
// known to be refused together, with that reason (they are not sent again
// as they are).
class Bisect {
 public:
  Bisect(doris::DorisClient& doris, const OpenLoad& load) : doris_(doris), load_(load) {}

  std::optional<doris::DorisError> run(std::span<const uint32_t> units, std::optional<std::string> failing) {
    if (units.empty()) return std::nullopt;
    if (!failing) {
      std::vector<bool> take(load_.isolated->records.size(), false);
      for (uint32_t u : units) take[u] = true;
      Sent res = send_rows(doris_, load_, take);
      ++probes;
      if (res) {
        // Accepted: aborted at once, which frees the label for the next probe.
        auto aborted = doris_.abort(load_.spec.db, res->txn_id);
        if (!aborted) return aborted.error();
        return std::nullopt;
      }
      auto& err = res.error();
      if (err.kind() != doris::ErrorKind::DataQuality) return err;
      failing = reason_of(err);
    }
    if (units.size() == 1) {
      bad.emplace(units.front(), *failing);
      return std::nullopt;
    }
    const size_t half = units.size() / 2;
    const size_t before = bad.size();
    if (auto err = run(units.first(half), std::nullopt)) return err;
    // A refused whole whose first half was accepted is refused for its second.
    return run(units.subspan(half), bad.size() == before ? failing : std::nullopt);
  }

  std::map<uint32_t, std::string> bad;
  size_t probes = 0;

 private:
  doris::DorisClient& doris_;
  const OpenLoad& load_;
};

kafka::Message view_of(const KeptRecord& r, std::vector<kafka::Header>& headers) {
  headers.clear();
  for (const auto& [k, v] : r.headers)
    headers.push_back({k, v ? std::optional<std::string_view>(*v) : std::nullopt});
  kafka::Message m;
  m.topic = r.topic;
  m.partition = r.partition;
  m.offset = r.offset;
  if (r.key) m.key = *r.key;
  if (r.value) m.value = *r.value;
  m.headers = headers;
  m.timestamp_ms = r.timestamp_ms;
  m.timestamp_type = r.timestamp_type;
  return m;
}

}  // namespace

void Pipeline::Impl::keep_row(IsolatedRows& rows, size_t end, const kafka::Message& msg) {
  const bool same = !rows.records.empty() && rows.records.back().offset == msg.offset &&
                    rows.records.back().partition == msg.partition && rows.records.back().topic == msg.topic;
  if (!same) {
    KeptRecord r;
    r.topic = msg.topic;
    r.partition = msg.partition;
    r.offset = msg.offset;
    if (msg.key) r.key = std::string(*msg.key);
    if (msg.value) r.value = std::string(*msg.value);
    for (const auto& h : msg.headers)
      r.headers.emplace_back(std::string(h.key), h.value ? std::optional<std::string>(*h.value) : std::nullopt);
    r.timestamp_ms = msg.timestamp_ms;
    r.timestamp_type = msg.timestamp_type;
    rows.records.push_back(std::move(r));
  }
  rows.row_end.push_back(end);
  rows.row_record.push_back(static_cast<uint32_t>(rows.records.size() - 1));
}

std::optional<Error> Pipeline::Impl::isolate_after(const Target& target, const doris::DorisError& err) {
  if (err.kind() != doris::ErrorKind::DataQuality || cfg_.bad_record_policy == BadRecordPolicy::Fail) return std::nullopt;
  if (!isolate_.insert(target).second) return std::nullopt;
  log_->warn("table {}: Doris refused rows of load {} ({}); the range is read again with the table's rows kept per "
             "record, to find the records it refuses",
             target.name(), err.context().label, reason_of(err));
  return Error(Disposition::Retry,
               "table " + target.name() + ": Doris refused rows; reading the range again to isolate them: " +
                   err.message(),
               err.context());
}

std::optional<Error> Pipeline::Impl::finish_isolated(const Target& target, TableLoads& tl, bool replaying) {
  // In label order: recovery's walk over a table's labels stops at the first
  // one never used (core/doris/lingering_walk.hpp).
  std::vector<OpenLoad*> loads;
  for (auto& l : tl.loads)
    if (l.isolated) loads.push_back(&l);
  std::sort(loads.begin(), loads.end(), [](const OpenLoad* a, const OpenLoad* b) { return a->part < b->part; });
  // A record's rows can sit in several loads (a key change): refused in one,
  // it is left out of all.
  struct Refused {
    std::string why;
    const KeptRecord* record;  // in the first load that holds it
  };
  std::map<Position, Refused> refused;
  auto take_of = [&](const OpenLoad& l) {
    std::vector<bool> take;
    for (const auto& r : l.isolated->records) take.push_back(!refused.count(position_of(r)));
    return take;
  };
  size_t probes = 0;
  for (OpenLoad* l : loads) {
    IsolatedRows& iso = *l->isolated;
    std::vector<bool> take = take_of(*l);
    Sent res = send_rows(deps_.doris, *l, take);
    ++probes;
    if (res) {
      iso.result = *res;
      iso.sent = std::move(take);
      continue;
    }
    auto& err = res.error();
    if (err.kind() != doris::ErrorKind::DataQuality) return load_failed(*l, std::move(err));
    std::vector<uint32_t> units;
    for (uint32_t i = 0; i < take.size(); ++i)
      if (take[i]) units.push_back(i);
    Bisect bisect(deps_.doris, *l);
    auto failed = bisect.run(units, reason_of(err));
    probes += bisect.probes;
    if (failed) return load_failed(*l, std::move(*failed));
    for (auto& [i, why] : bisect.bad) refused.emplace(position_of(iso.records[i]), Refused{why, &iso.records[i]});
  }
  for (OpenLoad* l : loads) {
    IsolatedRows& iso = *l->isolated;
    std::vector<bool> take = take_of(*l);
    if (iso.result && take == iso.sent) continue;
    if (iso.result) {  // it holds a record refused in a later load
      auto aborted = deps_.doris.abort(l->spec.db, iso.result->txn_id);
      if (!aborted) return load_failed(*l, std::move(aborted.error()));
      iso.result.reset();
    }
    Sent res = send_rows(deps_.doris, *l, take);
    ++probes;
    if (!res) {
      auto* err = &res.error();
      if (err->kind() != doris::ErrorKind::DataQuality) return load_failed(*l, std::move(*err));
      // Each refused record was refused alone and the rest accepted in
      // parts: Doris answers differently for the same rows now.
      auto e = load_failed(*l, std::move(*err));
      return Error(Disposition::Fatal,
                   "table " + target.name() + ": Doris refused the rows of load " + l->spec.label +
                       " again after the records it refused alone were left out: " + e.message(),
                   e.context());
    }
    iso.result = *res;
    iso.sent = std::move(take);
  }
  // What the table's load metrics count: the rows that went in.
  for (OpenLoad* l : loads) {
    const IsolatedRows& iso = *l->isolated;
    uint64_t rows = 0, bytes = 0;
    size_t begin = 0;
    for (size_t i = 0; i < iso.row_end.size(); ++i) {
      if (iso.sent[iso.row_record[i]]) {
        ++rows;
        bytes += iso.row_end[i] - begin;
      }
      begin = iso.row_end[i];
    }
    l->rows = rows;
    l->bytes = bytes;
  }
  log_->info("table {}: {} record(s) Doris refuses found with {} load(s) of {} label(s)", target.name(),
             refused.size(), probes, loads.size());
  std::vector<kafka::Header> headers;
  for (const auto& [pos, r] : refused) {
    const KeptRecord* rec = r.record;
    const std::string& why = r.why;
    const decode::DecodeError bad{decode::DecodeErrorCode::RejectedByDoris, rec->topic, rec->partition, rec->offset,
                                  "table " + target.name(), "", why};
    if (replaying || handled_before(rec->topic, rec->partition, rec->offset)) {
      // Handled by the policy when the range was first read.
      log_->info("{} (handled when first read)", bad.message());
      continue;
    }
    deps_.metrics.add_bad_record(decode::to_string(bad.code), to_string(cfg_.bad_record_policy));
    if (cfg_.bad_record_policy == BadRecordPolicy::Skip) {
      note_handled(rec->topic, rec->partition, rec->offset);
      log_->warn("skipping bad record: {}", bad.message());
      continue;
    }
    if (auto e = deps_.dead_letters->produce(cfg_.dead_letter_topic, view_of(*rec, headers), bad.message()))
      return *e;
    note_handled(rec->topic, rec->partition, rec->offset);
    open_.dead_letters = true;
    log_->warn("bad record sent to dead-letter topic {}: {}", cfg_.dead_letter_topic, bad.message());
  }
  return std::nullopt;
}

}  // namespace cdc2doris::pipeline
