#include "core/decode/connect_schema.hpp"
#include "core/common/ascii_case.hpp"

#include <algorithm>
#include <cctype>

#include <boost/json.hpp>

#include <charconv>
#include <stdexcept>

namespace cdc2doris::decode {
namespace {

namespace json = boost::json;

struct LogicalEntry {
  std::string_view name;
  Logical logical;
};

constexpr LogicalEntry kLogical[] = {
    {"org.apache.kafka.connect.data.Decimal", Logical::Decimal},
    {"io.debezium.data.VariableScaleDecimal", Logical::VariableScaleDecimal},
    {"org.apache.kafka.connect.data.Date", Logical::Date},
    {"io.debezium.time.Date", Logical::Date},
    {"org.apache.kafka.connect.data.Time", Logical::TimeMillis},
    {"io.debezium.time.Time", Logical::TimeMillis},
    {"io.debezium.time.MicroTime", Logical::TimeMicros},
    {"io.debezium.time.NanoTime", Logical::TimeNanos},
    {"org.apache.kafka.connect.data.Timestamp", Logical::TimestampMillis},
    {"io.debezium.time.Timestamp", Logical::TimestampMillis},
    {"io.debezium.time.MicroTimestamp", Logical::TimestampMicros},
    {"io.debezium.time.NanoTimestamp", Logical::TimestampNanos},
    {"io.debezium.time.ZonedTimestamp", Logical::ZonedTimestamp},
    {"io.debezium.time.ZonedTime", Logical::ZonedTime},
    {"io.debezium.time.IsoDate", Logical::IsoDate},
    {"io.debezium.time.IsoTime", Logical::IsoTime},
    {"io.debezium.time.IsoTimestamp", Logical::IsoTimestamp},
    {"io.debezium.data.Json", Logical::Json},
    {"io.debezium.data.Bits", Logical::Bits},
    {"io.debezium.data.geometry.Geometry", Logical::Geometry},
    {"io.debezium.data.geometry.Geography", Logical::Geometry},
    {"io.debezium.data.geometry.Point", Logical::Point},
};

ConnectType parse_type(std::string_view t, const std::string& path) {
  if (t == "boolean") return ConnectType::Boolean;
  if (t == "int8") return ConnectType::Int8;
  if (t == "int16") return ConnectType::Int16;
  if (t == "int32") return ConnectType::Int32;
  if (t == "int64") return ConnectType::Int64;
  // "float32"/"float64" are not JsonConverter output, but flink-cdc's
  // hand-edited fixture uses them; accepting them costs nothing.
  if (t == "float" || t == "float32") return ConnectType::Float;
  if (t == "double" || t == "float64") return ConnectType::Double;
  if (t == "string") return ConnectType::String;
  if (t == "bytes") return ConnectType::Bytes;
  if (t == "array") return ConnectType::Array;
  if (t == "map") return ConnectType::Map;
  if (t == "struct") return ConnectType::Struct;
  throw std::runtime_error(path + ".type: unknown Connect type \"" + std::string(t) + "\"");
}

SchemaNode compile(const json::value& v, const std::string& path, int depth) {
  if (depth > 64) throw std::runtime_error(path + ": schema nested deeper than 64 levels");
  const auto* obj = v.if_object();
  if (obj == nullptr) throw std::runtime_error(path + ": expected a schema object");
  SchemaNode n;
  const auto* type = obj->if_contains("type");
  if (type == nullptr || !type->is_string()) throw std::runtime_error(path + ".type: expected a string");
  n.type = parse_type(type->get_string(), path);
  if (const auto* o = obj->if_contains("optional"); o != nullptr && o->is_bool()) n.optional = o->get_bool();
  if (const auto* f = obj->if_contains("field"); f != nullptr && f->is_string()) n.field = f->get_string();
  if (const auto* nm = obj->if_contains("name"); nm != nullptr && nm->is_string()) {
    n.name = nm->get_string();
    for (const auto& e : kLogical) {
      if (e.name == n.name) n.logical = e.logical;
    }
  }
  {
    // Kept for table creation and schema evolution (core/schema) only.
    FieldMeta meta;
    if (const auto* params = obj->if_contains("parameters"); params != nullptr && params->is_object())
      for (const auto& [k, pv] : params->get_object())
        meta.parameters.emplace_back(std::string(k), pv.is_string() ? std::string(pv.get_string()) : json::serialize(pv));
    if (const auto* d = obj->if_contains("default"); d != nullptr) meta.default_json = json::serialize(*d);
    if (!meta.parameters.empty() || !meta.default_json.empty())
      n.meta = std::make_shared<const FieldMeta>(std::move(meta));
  }
  if (n.logical == Logical::Decimal) {
    int32_t scale = 0;
    if (const auto* params = obj->if_contains("parameters"); params != nullptr && params->is_object()) {
      if (const auto* s = params->get_object().if_contains("scale")) {
        if (s->is_string()) {
          std::string_view t = s->get_string();
          auto r = std::from_chars(t.data(), t.data() + t.size(), scale);
          if (r.ec != std::errc() || r.ptr != t.data() + t.size())
            throw std::runtime_error(path + ".parameters.scale: expected an integer string");
        } else if (s->is_int64()) {
          scale = static_cast<int32_t>(s->get_int64());
        }
      }
    }
    n.scale = scale;
  }
  // A logical name on the wrong base type (hand-edited schemas do this)
  // would make the decoder misread the value; keep the base type instead.
  switch (n.logical) {
    case Logical::Decimal:
    case Logical::Bits:
      if (n.type != ConnectType::Bytes) n.logical = Logical::None;
      break;
    case Logical::Date:
    case Logical::TimeMillis:
    case Logical::TimeMicros:
    case Logical::TimeNanos:
    case Logical::TimestampMillis:
    case Logical::TimestampMicros:
    case Logical::TimestampNanos:
      if (n.type != ConnectType::Int32 && n.type != ConnectType::Int64) n.logical = Logical::None;
      break;
    case Logical::ZonedTimestamp:
    case Logical::ZonedTime:
    case Logical::IsoDate:
    case Logical::IsoTime:
    case Logical::IsoTimestamp:
    case Logical::Json:
      if (n.type != ConnectType::String) n.logical = Logical::None;
      break;
    case Logical::VariableScaleDecimal:
    case Logical::Geometry:
    case Logical::Point:
      if (n.type != ConnectType::Struct) n.logical = Logical::None;
      break;
    case Logical::None:
      break;
    case Logical::DorisDecimal:  // never named in a Connect schema (doris_types.cpp)
    case Logical::DorisDate:
    case Logical::DorisDatetime:
    case Logical::DorisJson:
    case Logical::DorisLargeint:
    case Logical::DorisAsIs:
      n.logical = Logical::None;
      break;
  }
  if (n.type == ConnectType::Struct) {
    const auto* fields = obj->if_contains("fields");
    if (fields == nullptr || !fields->is_array())
      throw std::runtime_error(path + ".fields: expected an array for a struct");
    size_t i = 0;
    for (const auto& f : fields->get_array()) {
      std::string fpath = path + ".fields[" + std::to_string(i++) + "]";
      SchemaNode child = compile(f, fpath, depth + 1);
      if (child.field.empty()) throw std::runtime_error(fpath + ".field: expected the field name");
      n.fields.push_back(std::move(child));
    }
  } else if (n.type == ConnectType::Array) {
    const auto* items = obj->if_contains("items");
    if (items == nullptr) throw std::runtime_error(path + ".items: expected the item schema of an array");
    n.items = std::make_shared<SchemaNode>(compile(*items, path + ".items", depth + 1));
  } else if (n.type == ConnectType::Map) {
    const auto* keys = obj->if_contains("keys");
    const auto* values = obj->if_contains("values");
    if (keys == nullptr || values == nullptr)
      throw std::runtime_error(path + ": expected keys and values of a map");
    n.keys = std::make_shared<SchemaNode>(compile(*keys, path + ".keys", depth + 1));
    n.values = std::make_shared<SchemaNode>(compile(*values, path + ".values", depth + 1));
  }
  return n;
}

}  // namespace

const SchemaNode* SchemaNode::find_unhinted(std::string_view name, size_t& hint) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].field == name) {
      hint = i + 1;
      return &fields[i];
    }
  }
  if (fields_ignore_case)
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string& f = fields[i].field;
      if (ascii_iequals(f, name)) {
        hint = i + 1;
        return &fields[i];
      }
    }
  return nullptr;
}

SchemaNode compile_schema(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) throw std::runtime_error("schema: invalid JSON (" + ec.message() + ")");
  return compile(v, "schema", 0);
}

std::string_view logical_name(Logical l) {
  for (const auto& e : kLogical) {
    if (e.logical == l) return e.name;
  }
  return "";
}

}  // namespace cdc2doris::decode
