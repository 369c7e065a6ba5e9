#include "bench/decode/connect_avro.hpp"

#include <boost/json.hpp>
#include <set>
#include <stdexcept>

#include "core/decode/wire_values.hpp"
#include "tools/fixtures/avro_encode.hpp"

namespace cdc2doris::bench {
namespace {

namespace json = boost::json;
namespace bin = cdc2doris::test::avro_bin;

std::string str(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The Avro type of a Connect schema without its optionality (AvroData.fromConnectSchema).
json::value avro_type(const json::object& s, std::set<std::string>& defined) {
  const std::string type = str(s, "type");
  const std::string name = str(s, "name");
  if (type == "struct") {
    if (defined.count(name)) return json::value(name);  // a record is defined once, then named
    defined.insert(name);
    json::array fields;
    for (const auto& f : s.at("fields").as_array()) {
      const json::object& fs = f.as_object();
      json::object af{{"name", str(fs, "field")}};
      json::value t = avro_type(fs, defined);
      const json::value* def = fs.if_contains("default");
      if (fs.contains("optional") && fs.at("optional").as_bool()) {
        // A non-null default goes first in the union and is the field's default, as AvroData writes it.
        if (def != nullptr && !def->is_null()) {
          af["type"] = json::array{t, "null"};
          af["default"] = *def;
        } else {
          af["type"] = json::array{"null", t};
          af["default"] = nullptr;
        }
      } else {
        af["type"] = t;
        if (def != nullptr) af["default"] = *def;
      }
      fields.push_back(std::move(af));
    }
    json::object r{{"type", "record"}, {"name", name}, {"fields", std::move(fields)}};
    if (s.contains("version")) r["connect.version"] = s.at("version");
    r["connect.name"] = name;
    return r;
  }
  json::object t;
  if (type == "int64") t["type"] = "long";
  else if (type == "int32") t["type"] = "int";
  else if (type == "int16" || type == "int8") t = {{"type", "int"}, {"connect.type", type}};
  else if (type == "string") t["type"] = "string";
  else if (type == "boolean") t["type"] = "boolean";
  else if (type == "double") t["type"] = "double";
  else if (type == "bytes") t["type"] = "bytes";
  else throw std::runtime_error("connect_avro: Connect type " + type + " not covered");
  if (!name.empty()) {
    if (s.contains("version")) t["connect.version"] = s.at("version");
    t["connect.name"] = name;
  }
  if (const auto* p = s.if_contains("parameters")) {
    t["connect.parameters"] = *p;
    if (name == "org.apache.kafka.connect.data.Decimal") {
      const auto& po = p->as_object();
      t["logicalType"] = "decimal";
      t["scale"] = std::stoi(str(po, "scale"));
      if (po.contains("connect.decimal.precision")) t["precision"] = std::stoi(str(po, "connect.decimal.precision"));
    }
  }
  if (const auto* d = s.if_contains("default"); d != nullptr && !d->is_null()) t["connect.default"] = *d;
  if (t.size() == 1) return t.at("type");  // a bare primitive, as AvroData writes it
  return t;
}

void encode_value(const json::object& s, const json::value& v, std::string& out) {
  const bool optional = s.contains("optional") && s.at("optional").as_bool();
  if (optional) {
    const json::value* def = s.if_contains("default");
    const bool null_first = def == nullptr || def->is_null();
    if (v.is_null()) {
      out += bin::varint(null_first ? 0 : 1);
      return;
    }
    out += bin::varint(null_first ? 1 : 0);
  } else if (v.is_null()) {
    throw std::runtime_error("connect_avro: null in required field " + str(s, "field"));
  }
  const std::string type = str(s, "type");
  if (type == "struct") {
    const json::object& o = v.as_object();
    for (const auto& f : s.at("fields").as_array()) {
      const json::object& fs = f.as_object();
      const json::value* fv = o.if_contains(str(fs, "field"));
      encode_value(fs, fv != nullptr ? *fv : json::value(nullptr), out);
    }
  } else if (type == "int64" || type == "int32" || type == "int16" || type == "int8") {
    out += bin::varint(v.to_number<int64_t>());
  } else if (type == "string") {
    out += bin::string(std::string(v.as_string()));
  } else if (type == "boolean") {
    out += bin::boolean(v.as_bool());
  } else if (type == "double") {
    out += bin::float64(v.to_number<double>());
  } else if (type == "bytes") {
    std::string raw;
    if (!decode::base64_decode(v.as_string(), raw)) throw std::runtime_error("connect_avro: bytes not base64");
    out += bin::bytes(raw);
  } else {
    throw std::runtime_error("connect_avro: Connect type " + type + " not covered");
  }
}

}  // namespace

std::string ConnectToAvro::encode(std::string_view connect_json, const std::string& subject) {
  const json::object rec = json::parse(connect_json).as_object();
  const json::object& schema = rec.at("schema").as_object();
  const std::string key = json::serialize(schema);
  auto it = ids_.find(key);
  if (it == ids_.end()) {
    const int32_t id = static_cast<int32_t>(ids_.size()) + 1;
    std::set<std::string> defined;
    schemas_[id] = json::serialize(avro_type(schema, defined));
    subjects_[id] = subject;
    it = ids_.emplace(key, id).first;
  }
  std::string body;
  json::object top = schema;
  top["optional"] = false;  // the record itself is never a union
  encode_value(top, rec.at("payload"), body);
  return bin::framed(static_cast<uint32_t>(it->second), body);
}

}  // namespace cdc2doris::bench
