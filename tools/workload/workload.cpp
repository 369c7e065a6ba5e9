#include "tools/workload/workload.hpp"

#include <date/date.h>

#include <chrono>
#include <stdexcept>

#include "core/decode/connect_schema.hpp"
#include "core/decode/wire_values.hpp"

namespace cdc2doris::workload {

namespace {

std::string strip_zero_fraction(std::string s) {
  if (s.size() > 7 && s.compare(s.size() - 7, 7, ".000000") == 0) s.resize(s.size() - 7);
  return s;
}

std::string fmt_micros(int64_t us) {
  using namespace std::chrono;
  return strip_zero_fraction(date::format("%F %T", date::sys_time<microseconds>{microseconds{us}}));
}

std::string fmt_zoned_wire(int64_t ms) {
  using namespace std::chrono;
  return date::format("%FT%TZ", date::sys_time<milliseconds>{milliseconds{ms}});
}

std::string fmt_days(int32_t d) { return date::format("%F", date::sys_days{date::days{d}}); }

std::string fmt_amount(int64_t unscaled) {
  std::string s = unscaled < 0 ? "-" : "";
  const uint64_t mag = unscaled < 0 ? static_cast<uint64_t>(-unscaled) : static_cast<uint64_t>(unscaled);
  std::string frac = std::to_string(mag % 10000);
  s += std::to_string(mag / 10000) + "." + std::string(4 - frac.size(), '0') + frac;
  return s;
}


const char* kStatuses[] = {"new", "paid", "shipped", "cancelled"};
const char* kSources[] = {"web", "app", "store", "partner"};
const char* kWords[] = {"express", "fragile", "gift wrap", "leave at door", "call before", "\"quoted\"", "back\\slash",
                        "café", "配送", "second floor", "ring twice", "customer note", "invoice", "tab\there"};

const char* kRowFields = R"([{"type":"int64","optional":false,"field":"id"},)"
                         R"({"type":"int64","optional":true,"field":"customer_id"},)"
                         R"({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"4","connect.decimal.precision":"18"},"field":"amount"},)"
                         R"({"type":"int32","optional":true,"field":"quantity"},)"
                         R"({"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"new,paid,shipped,cancelled"},"field":"status"},)"
                         R"({"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"created_at"},)"
                         R"({"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"updated_at"},)"
                         R"({"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"ship_date"},)"
                         R"({"type":"int16","optional":true,"field":"is_gift"},)"
                         R"({"type":"string","optional":true,"field":"note"},)"
                         R"({"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"tags"}])";

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

const char* to_string(Format f) {
  switch (f) {
    case Format::Plain: return "plain";
    case Format::Schema: return "schema";
    case Format::Flattened: return "flattened";
  }
  return "?";
}

std::optional<Format> parse_format(std::string_view s) {
  if (s == "plain") return Format::Plain;
  if (s == "schema") return Format::Schema;
  if (s == "flattened") return Format::Flattened;
  return std::nullopt;
}

int32_t partition_for(std::string_view key, int partitions) {
  return partitions <= 1 ? 0 : static_cast<int32_t>(fnv1a(key) % static_cast<uint64_t>(partitions));
}

std::string strip_delete_sign(std::string_view row) {
  constexpr std::string_view sign = ",\"__DORIS_DELETE_SIGN__\":";
  auto pos = row.rfind(sign);
  if (pos == std::string_view::npos) return std::string(row);
  std::string out(row.substr(0, pos));
  out.push_back('}');
  return out;
}

struct Generator::Row {
  int64_t id = 0;
  int64_t customer_id = 0;
  int64_t amount = 0;  // scale 4
  int32_t quantity = 0;
  int status = 0;
  int64_t created_us = 0;
  int64_t updated_ms = 0;
  int32_t ship_days = 0;
  int is_gift = 0;
  std::string note;
  int tag_src = 0;
  int tag_n = 0;
};

Generator::Generator(Options o) : opt_(std::move(o)), rng_(opt_.seed) {
  if (opt_.tables < 1) throw std::invalid_argument("workload: tables must be >= 1");
  if (opt_.partitions < 1) throw std::invalid_argument("workload: partitions must be >= 1");
  for (int i = 0; i < opt_.tables; ++i) {
    table_names_.push_back("orders_" + std::to_string(i));
    TableModel m;
    m.name = opt_.db + "." + table_names_.back();
    model_.emplace(m.name, std::move(m));
  }
  live_.resize(static_cast<size_t>(opt_.tables));
  next_id_.assign(static_cast<size_t>(opt_.tables), 1);
  row_schema_ = std::string(R"({"type":"struct","fields":)") + kRowFields + R"(,"optional":true,"name":"row.Value"})";
  row_node_ = std::make_shared<const decode::SchemaNode>(decode::compile_schema(row_schema_));
}

std::vector<std::string> Generator::tables() const {
  std::vector<std::string> out;
  for (const auto& t : table_names_) out.push_back(opt_.db + "." + t);
  return out;
}

Generator::Row Generator::random_row(int64_t id) {
  Row r;
  r.id = id;
  r.customer_id = static_cast<int64_t>(rng_() % 5000000) + 1;
  // Mostly positive amounts, some refunds, occasionally beyond 2^53 / 10^4.
  r.amount = static_cast<int64_t>(rng_() % 100000000) - 5000000;
  if (rng_() % 50 == 0) r.amount = static_cast<int64_t>(rng_() % 900000000000000000LL);
  r.quantity = static_cast<int32_t>(rng_() % 20) + 1;
  r.status = 0;
  // 2020..2025, with ~2% before 1970 to exercise negative epochs.
  const int64_t base = 1577836800LL * 1000000;
  r.created_us = base + static_cast<int64_t>(rng_() % (157680000ULL * 1000000));
  if (rng_() % 50 == 0) r.created_us = -static_cast<int64_t>(rng_() % (3153600000ULL * 100000));
  if (rng_() % 10 == 0) r.created_us -= r.created_us % 1000000;  // whole seconds
  r.updated_ms = ts_ms_ - static_cast<int64_t>(rng_() % 100000);
  r.ship_days = static_cast<int32_t>(18262 + rng_() % 2000);
  r.is_gift = static_cast<int>(rng_() % 2);
  r.note.clear();
  while (r.note.size() < opt_.note_chars) {
    if (!r.note.empty()) r.note.push_back(' ');
    r.note += kWords[rng_() % (sizeof kWords / sizeof kWords[0])];
  }
  r.tag_src = static_cast<int>(rng_() % 4);
  r.tag_n = static_cast<int>(rng_() % 100);
  return r;
}

void Generator::mutate(Row& r) {
  r.status = (r.status + 1 + static_cast<int>(rng_() % 2)) % 4;
  r.amount += static_cast<int64_t>(rng_() % 20000) - 10000;
  r.updated_ms = ts_ms_;
  if (rng_() % 3 == 0) r.quantity = static_cast<int32_t>(rng_() % 20) + 1;
  if (rng_() % 4 == 0) {
    // Cut at a space so multi-byte UTF-8 characters stay whole.
    const auto cut = r.note.find(' ', r.note.size() / 2);
    r.note = r.note.substr(0, cut) + " updated " + kWords[rng_() % 5];
  }
  if (rng_() % 5 == 0) r.tag_n = static_cast<int>(rng_() % 100);
}

std::string Generator::payload_json(const Row& r, bool toast_note) const {
  std::string s = "{\"id\":" + std::to_string(r.id) + ",\"customer_id\":" + std::to_string(r.customer_id) + ",\"amount\":\"";
  decode::base64_encode(twos_complement(r.amount), s);
  s += "\",\"quantity\":" + std::to_string(r.quantity) + ",\"status\":\"" + kStatuses[r.status] +
       "\",\"created_at\":" + std::to_string(r.created_us) + ",\"updated_at\":\"" + fmt_zoned_wire(r.updated_ms) +
       "\",\"ship_date\":" + std::to_string(r.ship_days) + ",\"is_gift\":" + std::to_string(r.is_gift) + ",\"note\":";
  put_string(toast_note ? std::string_view("__debezium_unavailable_value") : std::string_view(r.note), s);
  // MySQL's JSON text (with spaces), carried as an io.debezium.data.Json string.
  std::string tags = std::string("{\"src\": \"") + kSources[r.tag_src] + "\", \"n\": " + std::to_string(r.tag_n) + "}";
  s += ",\"tags\":";
  put_string(tags, s);
  s += "}";
  return s;
}

std::string Generator::doris_json(const Row& r) const {
  std::string s = "{\"id\":" + std::to_string(r.id) + ",\"customer_id\":" + std::to_string(r.customer_id) + ",\"amount\":\"" +
                  fmt_amount(r.amount) + "\",\"quantity\":" + std::to_string(r.quantity) + ",\"status\":\"" + kStatuses[r.status] +
                  "\",\"created_at\":\"" + fmt_micros(r.created_us) + "\",\"updated_at\":\"" + fmt_micros(r.updated_ms * 1000) +
                  "\",\"ship_date\":\"" + fmt_days(r.ship_days) + "\",\"is_gift\":" + std::to_string(r.is_gift) + ",\"note\":";
  put_string(r.note, s);
  // A JSON column goes to Doris as the JSON text in a string (Doris parses it).
  s += ",\"tags\":";
  put_string(std::string("{\"src\": \"") + kSources[r.tag_src] + "\", \"n\": " + std::to_string(r.tag_n) + "}", s);
  s += "}";
  return s;
}

void Generator::emit_change(size_t t, char op, const Row* before, const Row* after) {
  const std::string& table = table_names_[t];
  const std::string topic = opt_.server + "." + opt_.db + "." + table;
  const Row* keyed = after != nullptr ? after : before;
  const std::string key_payload = "{\"id\":" + std::to_string(keyed->id) + "}";
  std::string key = key_payload;
  if (opt_.format != Format::Plain) {
    key = R"({"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":")" + topic +
          R"(.Key"},"payload":)" + key_payload + "}";
  }
  ts_ms_ += 1 + static_cast<int64_t>(rng_() % 3);
  const int64_t pos = binlog_pos_;
  Record rec;
  rec.topic = topic;
  rec.partition = partition_for(key, opt_.partitions);
  rec.table = opt_.db + "." + table;
  rec.key = key;
  rec.op = op;

  if (opt_.format == Format::Flattened) {
    const Row* image = op == 'd' ? before : after;
    std::string payload = payload_json(*image);
    payload.pop_back();
    payload += std::string(",\"__op\":\"") + op + "\",\"__table\":\"" + table + "\",\"__source_ts_ms\":" + std::to_string(ts_ms_) +
               ",\"__deleted\":\"" + (op == 'd' ? "true" : "false") + "\"}";
    std::string schema = std::string(R"({"type":"struct","fields":)") + kRowFields;
    schema.pop_back();
    schema += R"(,{"type":"string","optional":true,"field":"__op"},{"type":"string","optional":true,"field":"__table"},)"
              R"({"type":"int64","optional":true,"field":"__source_ts_ms"},{"type":"string","optional":true,"field":"__deleted"}],)"
              R"("optional":false,"name":")" + topic + R"(.Value"})";
    rec.value = "{\"schema\":" + schema + ",\"payload\":" + payload + "}";
  } else {
    std::string payload = "{\"before\":" + (before && !key_only_ ? payload_json(*before) : std::string("null")) +
                          ",\"after\":" + (after ? payload_json(*after, toast_after_) : std::string("null")) +
                          R"(,"source":{"version":"2.7.3.Final","connector":"mysql","name":")" + opt_.server +
                          "\",\"ts_ms\":" + std::to_string(ts_ms_) + ",\"snapshot\":\"" + (op == 'r' ? "true" : "false") +
                          "\",\"db\":\"" + opt_.db + R"(","sequence":null,"table":")" + table +
                          R"(","server_id":223344,"gtid":null,"file":"mysql-bin.000001","pos":)" + std::to_string(pos) +
                          R"(,"row":0,"thread":12,"query":null},"transaction":null,"op":")" + op +
                          "\",\"ts_ms\":" + std::to_string(ts_ms_ + 3) + "}";
    if (opt_.format == Format::Schema) {
      std::string value_struct = std::string(R"({"type":"struct","fields":)") + kRowFields + R"(,"optional":true,"name":")" + topic + ".Value\"";
      std::string schema = R"({"type":"struct","fields":[)" + value_struct + R"(,"field":"before"},)" + value_struct +
                           R"(,"field":"after"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},)"
                           R"({"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},)"
                           R"({"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,last,false,incremental"},"default":"false","field":"snapshot"},)"
                           R"({"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},)"
                           R"({"type":"string","optional":true,"field":"table"},{"type":"int64","optional":false,"field":"server_id"},)"
                           R"({"type":"string","optional":true,"field":"gtid"},{"type":"string","optional":false,"field":"file"},)"
                           R"({"type":"int64","optional":false,"field":"pos"},{"type":"int32","optional":false,"field":"row"},)"
                           R"({"type":"int64","optional":true,"field":"thread"},{"type":"string","optional":true,"field":"query"}],)"
                           R"("optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"},)"
                           R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"},)"
                           R"({"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":")" +
                           topic + R"(.Envelope","version":1})";
      rec.value = "{\"schema\":" + schema + ",\"payload\":" + payload + "}";
    } else {
      rec.value = std::move(payload);
    }
  }
  binlog_pos_ += static_cast<int64_t>(rec.value->size());

  // What this record does to the Doris table, applied when next() hands the
  // record out: a stream cut inside a step expects only what was emitted.
  Queued q;
  q.effect = op == 'd' ? Effect::Erase : Effect::Upsert;
  q.id = keyed->id;
  if (op == 'd') {
    if (opt_.keep_change_log) {
      std::string row = doris_json(*before);
      row.pop_back();
      q.change_log_row = row + ",\"__DORIS_DELETE_SIGN__\":1}";
    }
  } else {
    q.row = doris_json(*after);
    if (opt_.keep_change_log) q.change_log_row = q.row.substr(0, q.row.size() - 1) + ",\"__DORIS_DELETE_SIGN__\":0}";
  }
  q.rec = std::move(rec);
  queue_.push_back(std::move(q));
  if (op == 'd' && opt_.tombstones && opt_.format != Format::Flattened) {
    Queued tomb;
    tomb.rec.topic = topic;
    tomb.rec.partition = partition_for(key, opt_.partitions);
    tomb.rec.table = opt_.db + "." + table;
    tomb.rec.key = key;
    queue_.push_back(std::move(tomb));
  }
}

void Generator::apply(Queued& q) {
  if (q.effect == Effect::None) return;
  TableModel& m = model_[q.rec.table];
  ++m.changes;
  ++m.doris_rows;
  if (opt_.keep_change_log) m.change_log.push_back(std::move(q.change_log_row));
  if (q.effect == Effect::Erase) {
    m.rows.erase(q.id);
  } else {
    m.rows[q.id] = std::move(q.row);
  }
}

void Generator::step() {
  // Snapshot phase: 'r' for snapshot_rows_per_table rows of every table.
  if (snapshot_done_ < opt_.snapshot_rows_per_table * opt_.tables) {
    const size_t t = static_cast<size_t>(snapshot_done_ % opt_.tables);
    ++snapshot_done_;
    auto row = std::make_shared<Row>(random_row(next_id_[t]++));
    live_[t][row->id] = row;
    emit_change(t, 'r', nullptr, row.get());
    return;
  }
  const size_t t = static_cast<size_t>(rng_() % static_cast<uint64_t>(opt_.tables));
  auto& live = live_[t];
  const double total = opt_.insert_weight + opt_.update_weight + opt_.delete_weight + opt_.pk_change_weight;
  double x = static_cast<double>(rng_() % 1000000) / 1000000.0 * total;
  int kind = 0;  // 0 insert, 1 update, 2 delete, 3 pk change
  if ((x -= opt_.insert_weight) >= 0) {
    kind = 1;
    if ((x -= opt_.update_weight) >= 0) kind = (x - opt_.delete_weight) >= 0 ? 3 : 2;
  }
  if (live.empty()) kind = 0;
  if (kind == 0) {
    auto row = std::make_shared<Row>(random_row(next_id_[t]++));
    live[row->id] = row;
    emit_change(t, 'c', nullptr, row.get());
    return;
  }
  // A random live row: walk from a random id (ids are dense-ish).
  auto it = live.lower_bound(static_cast<int64_t>(rng_() % static_cast<uint64_t>(next_id_[t])));
  if (it == live.end()) it = live.begin();
  std::shared_ptr<Row> old = it->second;
  const bool toast = static_cast<int>(t) < opt_.toast_tables && opt_.format != Format::Flattened;
  key_only_ = toast;
  if (kind == 1) {
    auto updated = std::make_shared<Row>(*old);
    mutate(*updated);
    toast_after_ = toast && (opt_.toast_partial_percent ? static_cast<int>(rng_() % 100) < *opt_.toast_partial_percent
                                                        : rng_() % 3 == 0);
    if (toast_after_) updated->note = old->note;  // unchanged, so PostgreSQL does not send it
    it->second = updated;
    emit_change(t, 'u', old.get(), updated.get());
    toast_after_ = false;
  } else if (kind == 2) {
    live.erase(it);
    emit_change(t, 'd', old.get(), nullptr);
  } else {
    // Debezium's PK change: delete of the old key (+ tombstone), create of the new.
    live.erase(it);
    auto moved = std::make_shared<Row>(*old);
    moved->id = next_id_[t]++;
    mutate(*moved);
    live[moved->id] = moved;
    const size_t first = queue_.size();
    emit_change(t, 'd', old.get(), nullptr);
    queue_[first].rec.headers.emplace_back("__debezium.newkey", "{\"id\":" + std::to_string(moved->id) + "}");
    const size_t second = queue_.size();
    emit_change(t, 'c', nullptr, moved.get());
    queue_[second].rec.headers.emplace_back("__debezium.oldkey", "{\"id\":" + std::to_string(old->id) + "}");
  }
  key_only_ = false;
}

Record Generator::next() {
  if (queue_pos_ >= queue_.size()) {
    queue_.clear();
    queue_pos_ = 0;
    step();
  }
  ++emitted_;
  Queued& q = queue_[queue_pos_++];
  apply(q);
  return std::move(q.rec);
}

std::vector<Record> Generator::generate(size_t n) {
  std::vector<Record> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(next());
  return out;
}

std::string Generator::create_table_sql(const std::string& table, bool duplicate_key) const {
  std::string name = table.find('.') == std::string::npos ? opt_.db + "." + table : table;
  const auto dot = name.find('.');
  std::string sql = "CREATE TABLE IF NOT EXISTS `" + name.substr(0, dot) + "`.`" + name.substr(dot + 1) + "` (\n"
                    "  `id` BIGINT NOT NULL,\n"
                    "  `customer_id` BIGINT NULL,\n"
                    "  `amount` DECIMAL(18,4) NULL,\n"
                    "  `quantity` INT NULL,\n"
                    "  `status` VARCHAR(16) NULL,\n"
                    "  `created_at` DATETIME(6) NULL,\n"
                    "  `updated_at` DATETIME(6) NULL,\n"
                    "  `ship_date` DATE NULL,\n"
                    "  `is_gift` SMALLINT NULL,\n"
                    "  `note` VARCHAR(2048) NULL,\n"
                    "  `tags` JSON NULL\n) ";
  if (duplicate_key) {
    sql += "DUPLICATE KEY(`id`)\nDISTRIBUTED BY HASH(`id`) BUCKETS 1\nPROPERTIES (\"replication_num\" = \"1\");";
  } else {
    sql += "UNIQUE KEY(`id`)\nDISTRIBUTED BY HASH(`id`) BUCKETS 1\n"
           "PROPERTIES (\"replication_num\" = \"1\", \"enable_unique_key_merge_on_write\" = \"true\");";
  }
  return sql;
}

decode::DecoderOptions Generator::decoder_options() const {
  decode::DecoderOptions o;
  o.envelope = opt_.format == Format::Flattened ? decode::Envelope::Flattened : decode::Envelope::Auto;
  return o;
}

const decode::SchemaNode* Generator::column_types(std::string_view db, std::string_view table) const {
  return opt_.format == Format::Plain && db == opt_.db && table.rfind("orders_", 0) == 0 ? row_node_.get() : nullptr;
}

decode::TableContext Generator::table_context(const decode::Change& c) const {
  return decode::TableContext{nullptr, column_types(c.db, c.table)};
}

std::optional<decode::DecodeError> Generator::decode(decode::Decoder& d, const decode::KafkaRecord& k,
                                                     decode::Change& c) const {
  if (auto e = d.identify(k, c)) return e;
  return d.convert(table_context(c), c);
}

// JSON string escaping for the wire (the decoder copies string tokens
// verbatim, so model and wire share the escaped form).
void put_string(std::string_view s, std::string& out) {
  static const char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      out += "\\u00";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

// Minimal big-endian two's complement, as Kafka Connect's Decimal writes it.
std::string twos_complement(int64_t v) {
  std::string bytes;
  for (int i = 7; i >= 0; --i) bytes.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xFF));
  while (bytes.size() > 1) {
    const auto b0 = static_cast<unsigned char>(bytes[0]);
    const auto b1 = static_cast<unsigned char>(bytes[1]);
    if ((b0 == 0x00 && !(b1 & 0x80)) || (b0 == 0xFF && (b1 & 0x80))) {
      bytes.erase(0, 1);
    } else {
      break;
    }
  }
  return bytes;
}

}  // namespace cdc2doris::workload
