#include "core/decode/decode_cli.hpp"

#include <boost/json.hpp>

#include <istream>
#include <ostream>

namespace cdc2doris::decode {

namespace {

bool ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// End of the JSON value starting at `i` (exclusive), or npos. Only needs to
// find boundaries; the decoder validates the value itself.
size_t value_end(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') {
    for (size_t j = i + 1; j < s.size(); ++j) {
      if (s[j] == '\\') {
        ++j;
      } else if (s[j] == '"') {
        return j + 1;
      }
    }
    return std::string_view::npos;
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (size_t j = i; j < s.size(); ++j) {
      char c = s[j];
      if (c == '"') {
        size_t e = value_end(s, j);
        if (e == std::string_view::npos) return e;
        j = e - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return j + 1;
      }
    }
    return std::string_view::npos;
  }
  size_t j = i;
  while (j < s.size() && s[j] != ',' && s[j] != '}' && s[j] != ']' && !ws(s[j])) ++j;
  return j;
}

std::optional<std::string> bytes_of(std::string_view raw) {
  if (raw == "null") return std::nullopt;
  if (!raw.empty() && raw.front() == '"') {
    boost::system::error_code ec;
    auto v = boost::json::parse(raw, ec);
    if (!ec && v.is_string()) return std::string(v.get_string());
  }
  return std::string(raw);
}

}  // namespace

std::optional<std::string> parse_framed_line(std::string_view s, FramedRecord& out) {
  out = FramedRecord{};
  size_t i = 0;
  while (i < s.size() && ws(s[i])) ++i;
  if (i >= s.size() || s[i] != '{') return "expected a JSON object {\"topic\",\"partition\",\"offset\",\"key\",\"value\"}";
  ++i;
  bool have_value = false;
  while (true) {
    while (i < s.size() && ws(s[i])) ++i;
    if (i < s.size() && s[i] == '}') break;
    size_t ke = value_end(s, i);
    if (ke == std::string_view::npos || s[i] != '"') return "malformed frame key at byte " + std::to_string(i);
    std::string key(s.substr(i + 1, ke - i - 2));
    i = ke;
    while (i < s.size() && ws(s[i])) ++i;
    if (i >= s.size() || s[i] != ':') return "expected ':' after \"" + key + "\"";
    ++i;
    while (i < s.size() && ws(s[i])) ++i;
    size_t ve = value_end(s, i);
    if (ve == std::string_view::npos) return "malformed value of \"" + key + "\"";
    std::string_view raw = s.substr(i, ve - i);
    try {
      if (key == "topic") {
        auto b = bytes_of(raw);
        if (!b) return "topic must be a string";
        out.topic = *b;
      } else if (key == "partition") {
        out.partition = std::stoi(std::string(raw));
      } else if (key == "offset") {
        out.offset = std::stoll(std::string(raw));
      } else if (key == "key") {
        out.key = bytes_of(raw);
      } else if (key == "value" || key == "payload") {  // "payload": kcat -J's name for the value
        out.value = bytes_of(raw);
        have_value = true;
      } else if (key == "headers") {
        boost::system::error_code ec;
        auto v = boost::json::parse(raw, ec);
        auto text = [](const boost::json::value& hv) {
          return hv.is_string() ? std::string(hv.get_string()) : hv.is_null() ? std::string() : boost::json::serialize(hv);
        };
        if (!ec && v.is_object()) {
          for (const auto& [k, hv] : v.get_object()) out.headers.emplace_back(std::string(k), text(hv));
        } else if (!ec && v.is_array() && v.get_array().size() % 2 == 0) {
          // kcat -J: ["name1","value1","name2","value2",...]
          const auto& a = v.get_array();
          for (size_t h = 0; h < a.size(); h += 2) {
            if (!a[h].is_string()) return "header names must be strings";
            out.headers.emplace_back(std::string(a[h].get_string()), text(a[h + 1]));
          }
        } else {
          return "headers must be an object of strings or kcat's [name, value, ...] list";
        }
      }
    } catch (const std::exception&) {
      return "bad number for \"" + key + "\"";
    }
    i = ve;
    while (i < s.size() && ws(s[i])) ++i;
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}') break;
    return "expected ',' or '}' at byte " + std::to_string(i);
  }
  if (out.topic.empty()) return "missing \"topic\"";
  if (!have_value) return "missing \"value\" (or kcat's \"payload\"; null for a tombstone)";
  return std::nullopt;
}

namespace {

const char* kUsage =
    "usage: cdc2doris decode [options] < records\n"
    "  Reads Debezium record values as JSON lines (or, with --framed, Kafka-style lines\n"
    "  {\"topic\",\"partition\",\"offset\",\"key\",\"value\"[,\"headers\"]}, or kcat -J's envelope with\n"
    "  \"payload\" for the value) and prints the Doris rows.\n"
    "  --framed                     input lines are framed records\n"
    "  --topic NAME                 topic of unframed lines (default dbserver1.inventory.customers)\n"
    "  --key JSON                   Kafka key of unframed lines\n"
    "  --config FILE                the daemon's configuration (decoding and routing)\n"
    "  --envelope auto|schema|plain|flattened\n"
    "  --no-schema                  ignore {\"schema\"} parts\n"
    "  --time-zone ZONE             target zone for ZonedTimestamp (default UTC)\n"
    "  --binary-mode base64|hex     bytes in Doris (default base64)\n"
    "  --geometry wkt|hex           geometry in Doris (default wkt)\n"
    "  --toast-placeholder TEXT     unavailable-value placeholder (repeatable)\n"
    "  --key-columns DB.TABLE=a,b   key columns when the Kafka key has none\n"
    "  --extra-op NAME / --extra-source-ts NAME / --extra-sequence NAME   extra columns\n"
    "  --max-depth N, --max-record-bytes N\n"
    "  --on-error fail|skip|dead_letter   policy (default fail: stop at the first bad record)\n"
    "  --dead-letter-topic NAME\n";

std::optional<DecodeError> decode_unrouted(Decoder& d, const KafkaRecord& rec, Change& c, std::string& target) {
  if (auto e = d.decode(rec, c)) return e;
  const std::string& ns = c.db.empty() ? c.schema : c.db;
  target = ns.empty() ? c.table : ns + "." + c.table;
  return std::nullopt;
}

}  // namespace

int run_decode_command(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                       DecodeCommandOptions o) {
  // --config first so that flags override it regardless of their order.
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--config") continue;
    if (i + 1 >= args.size()) {
      err << "--config needs a file\n" << kUsage;
      return 2;
    }
    if (!o.load_config) {
      err << "--config is not available in this build\n";
      return 2;
    }
    if (auto e = o.load_config(args[i + 1], o)) {
      err << "config: " << *e << "\n";
      return 2;
    }
  }
  bool toast_reset = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    auto need = [&](std::optional<std::string> v) -> std::string {
      if (!v) throw std::invalid_argument(a + " needs a value");
      return *v;
    };
    try {
      if (a == "--help" || a == "-h") {
        out << kUsage;
        return 0;
      } else if (a == "--config") {
        ++i;
      } else if (a == "--framed") {
        o.framed = true;
      } else if (a == "--topic") {
        o.topic = need(value());
      } else if (a == "--key") {
        o.key = need(value());
      } else if (a == "--no-schema") {
        o.decoder.use_schema = false;
      } else if (a == "--envelope") {
        std::string v = need(value());
        if (v == "auto") o.decoder.envelope = Envelope::Auto;
        else if (v == "schema") o.decoder.envelope = Envelope::Schema;
        else if (v == "plain") o.decoder.envelope = Envelope::Plain;
        else if (v == "flattened") o.decoder.envelope = Envelope::Flattened;
        else throw std::invalid_argument("--envelope must be auto, schema, plain or flattened");
      } else if (a == "--time-zone") {
        o.decoder.time_zone = need(value());
      } else if (a == "--binary-mode") {
        std::string v = need(value());
        if (v == "base64") o.decoder.binary_mode = BinaryMode::Base64;
        else if (v == "hex") o.decoder.binary_mode = BinaryMode::Hex;
        else throw std::invalid_argument("--binary-mode must be base64 or hex");
      } else if (a == "--geometry") {
        std::string v = need(value());
        if (v == "wkt") o.decoder.geometry_mode = GeometryMode::Wkt;
        else if (v == "hex") o.decoder.geometry_mode = GeometryMode::Hex;
        else throw std::invalid_argument("--geometry must be wkt or hex");
      } else if (a == "--toast-placeholder") {
        if (!toast_reset) o.decoder.toast_placeholders.clear();
        toast_reset = true;
        o.decoder.toast_placeholders.push_back(need(value()));
      } else if (a == "--key-columns") {
        std::string v = need(value());
        auto eq = v.find('=');
        if (eq == std::string::npos) throw std::invalid_argument("--key-columns wants DB.TABLE=col1,col2");
        std::vector<std::string> cols;
        std::string rest = v.substr(eq + 1);
        for (size_t s = 0; s <= rest.size();) {
          size_t c = rest.find(',', s);
          if (c == std::string::npos) c = rest.size();
          if (c > s) cols.push_back(rest.substr(s, c - s));
          s = c + 1;
        }
        o.decoder.key_columns[v.substr(0, eq)] = cols;
      } else if (a == "--extra-op") {
        o.decoder.extra_columns.op = need(value());
      } else if (a == "--extra-source-ts") {
        o.decoder.extra_columns.source_ts = need(value());
      } else if (a == "--extra-sequence") {
        o.decoder.extra_columns.sequence = need(value());
      } else if (a == "--max-depth") {
        o.decoder.max_depth = std::stoul(need(value()));
      } else if (a == "--max-record-bytes") {
        o.decoder.max_record_bytes = std::stoul(need(value()));
      } else if (a == "--on-error") {
        auto p = parse_bad_record_policy(need(value()));
        if (!p) throw std::invalid_argument("--on-error must be fail, skip or dead_letter");
        o.policy = *p;
      } else if (a == "--dead-letter-topic") {
        o.dead_letter_topic = need(value());
      } else {
        throw std::invalid_argument("unknown option " + a);
      }
    } catch (const std::exception& e) {
      err << e.what() << "\n" << kUsage;
      return 2;
    }
  }
  if (!o.decode) o.decode = decode_unrouted;

  std::optional<Decoder> decoder;
  try {
    decoder.emplace(o.decoder);
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return 2;
  }
  Change change;
  std::string target;
  FramedRecord frame;
  std::string line;
  int64_t line_no = 0;
  uint64_t failed = 0, skipped = 0, dead = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    KafkaRecord rec;
    if (o.framed) {
      if (auto e = parse_framed_line(line, frame)) {
        err << "line " << line_no << ": " << *e << "\n";
        return 2;
      }
      rec.topic = frame.topic;
      rec.partition = frame.partition;
      rec.offset = frame.offset;
      if (frame.key) rec.key = *frame.key;
      if (frame.value) rec.value = *frame.value;
      for (const auto& h : frame.headers) rec.headers.emplace_back(h.first, h.second);
    } else {
      rec.topic = o.topic;
      rec.offset = line_no - 1;
      if (o.key) rec.key = *o.key;
      std::string_view v = line;
      if (v != "null") rec.value = v;
    }
    out << rec.topic << "/" << rec.partition << "@" << rec.offset << " ";
    auto e = o.decode(*decoder, rec, change, target);
    if (e) {
      out << "ERROR " << e->message() << "\n";
      switch (o.policy) {
        case BadRecordPolicy::Fail:
          ++failed;
          out << "  policy fail: the pipeline stops before committing past this record\n";
          err << "decode: stopped at " << rec.topic << "/" << rec.partition << "@" << rec.offset << " (policy fail)\n";
          return 1;
        case BadRecordPolicy::Skip:
          ++skipped;
          out << "  policy skip: counted and logged, not loaded\n";
          break;
        case BadRecordPolicy::DeadLetter:
          ++dead;
          out << "  policy dead_letter: copied to " << o.dead_letter_topic
              << " with headers cdc2doris.error, cdc2doris.source.topic, cdc2doris.source.partition, cdc2doris.source.offset\n";
          break;
      }
      continue;
    }
    if (change.kind != Kind::Change) {
      out << "skip " << to_string(change.kind);
      if (!change.table.empty() && (change.kind == Kind::Truncate)) out << " " << target;
      out << "\n";
      continue;
    }
    out << target << " op=" << change.op << " rows=" << change.rows.size();
    if (!change.key_columns.empty()) {
      out << " key=";
      for (size_t k = 0; k < change.key_columns.size(); ++k) out << (k ? "," : "") << change.key_columns[k];
    }
    if (change.primary_key_changed) out << " primary_key_changed";
    out << "\n";
    for (const auto& row : change.rows) {
      out << "  " << row.json;
      if (!row.partial_columns.empty()) {
        out << "  partial_columns=";
        for (size_t k = 0; k < row.partial_columns.size(); ++k) out << (k ? "," : "") << row.partial_columns[k];
      }
      out << "\n";
    }
  }
  const auto& s = decoder->stats();
  err << "decode: " << s.records << " records, " << s.changes << " changes, " << s.rows << " rows, " << s.errors << " errors ("
      << skipped << " skipped, " << dead << " dead-lettered), " << s.tombstones << " tombstones, " << s.heartbeats
      << " heartbeats, " << s.transaction_records << " transaction, " << s.schema_changes << " schema changes, " << s.truncates
      << " truncates, " << s.messages << " messages\n";
  return failed > 0 ? 1 : 0;
}

}  // namespace cdc2doris::decode
