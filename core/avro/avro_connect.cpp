#include "core/avro/avro_connect.hpp"

#include <avro.h>

#include <boost/json.hpp>
#include <charconv>
#include <climits>
#include <cmath>
#include <deque>
#include <map>
#include <vector>

#include "core/decode/wire_values.hpp"

namespace cdc2doris::avro {
namespace {

namespace json = boost::json;

// Nesting deeper than this is refused (a recursive record would never end).
constexpr int kMaxDepth = 64;

enum class Kind { Null, Boolean, Int, Long, Float, Double, Bytes, String, Record, Enum, Array, Map, Union, Fixed };

struct Node;
struct Field {
  std::string name;
  std::string json_key;  // "name": as JSON, escaped once here rather than for every record
  const Node* type = nullptr;
  const json::value* default_value = nullptr;  // the Avro field default, when given
};

struct Node {
  Kind kind = Kind::Null;
  std::string full_name;                 // record, enum, fixed
  const json::object* attrs = nullptr;   // the schema object (logicalType, connect.*), nullptr for a bare name
  std::vector<Field> fields;             // record
  std::vector<std::string> symbols;      // enum
  std::vector<std::string> json_symbols; // enum, each as a JSON string
  std::vector<const Node*> branches;     // union
  const Node* items = nullptr;           // array items, map values
};

const std::map<std::string_view, Kind>& primitives() {
  static const std::map<std::string_view, Kind> m{
      {"null", Kind::Null},   {"boolean", Kind::Boolean}, {"int", Kind::Int},     {"long", Kind::Long},
      {"float", Kind::Float}, {"double", Kind::Double},   {"bytes", Kind::Bytes}, {"string", Kind::String}};
  return m;
}

const json::string* string_attr(const json::object* o, std::string_view key) {
  if (o == nullptr) return nullptr;
  const auto* v = o->if_contains(key);
  return v != nullptr && v->is_string() ? &v->get_string() : nullptr;
}

// The Avro schema's JSON as a tree of Nodes, named types resolved.
class SchemaTree {
 public:
  explicit SchemaTree(std::string_view text) {
    boost::system::error_code ec;
    doc_ = json::parse(text, ec);
    if (ec) throw AvroError("the registry's schema is not JSON: " + ec.message());
    root_ = parse(doc_, "", "schema", 0);
  }
  const Node* root() const { return root_; }

 private:
  const Node* parse(const json::value& v, const std::string& ns, const std::string& path, int depth) {
    if (depth > kMaxDepth) throw AvroError(path + ": schema nested deeper than 64 levels");
    if (v.is_string()) return named(std::string(v.get_string()), ns, path);
    if (v.is_array()) {
      Node& n = nodes_.emplace_back();
      n.kind = Kind::Union;
      size_t i = 0;
      for (const auto& b : v.get_array())
        n.branches.push_back(parse(b, ns, path + "[" + std::to_string(i++) + "]", depth + 1));
      return &n;
    }
    if (!v.is_object()) throw AvroError(path + ": expected a type name, a union or a schema object");
    const json::object& o = v.get_object();
    const auto* type = o.if_contains("type");
    if (type == nullptr) throw AvroError(path + ".type: missing");
    if (!type->is_string()) return parse(*type, ns, path + ".type", depth + 1);
    const std::string_view t = type->get_string();
    if (auto p = primitives().find(t); p != primitives().end()) {
      Node& n = nodes_.emplace_back();
      n.kind = p->second;
      n.attrs = &o;
      return &n;
    }
    if (t == "array" || t == "map") {
      const char* key = t == "array" ? "items" : "values";
      const auto* inner = o.if_contains(key);
      if (inner == nullptr) throw AvroError(path + "." + key + ": missing");
      Node& n = nodes_.emplace_back();
      n.kind = t == "array" ? Kind::Array : Kind::Map;
      n.attrs = &o;
      n.items = parse(*inner, ns, path + "." + key, depth + 1);
      return &n;
    }
    if (t != "record" && t != "error" && t != "enum" && t != "fixed")
      throw AvroError(path + ".type: unknown Avro type \"" + std::string(t) + "\"");
    const auto* name = string_attr(&o, "name");
    if (name == nullptr) throw AvroError(path + ".name: expected the name of a " + std::string(t));
    std::string full(*name);
    std::string inner_ns = ns;
    if (full.find('.') == std::string::npos) {
      if (const auto* n = string_attr(&o, "namespace")) inner_ns = std::string(*n);
      if (!inner_ns.empty()) full = inner_ns + "." + full;
    } else {
      inner_ns = full.substr(0, full.rfind('.'));
    }
    Node& n = nodes_.emplace_back();
    n.full_name = full;
    n.attrs = &o;
    names_[full] = &n;  // before the fields: a field may name its record
    if (t == "enum") {
      n.kind = Kind::Enum;
      const auto* symbols = o.if_contains("symbols");
      if (symbols == nullptr || !symbols->is_array()) throw AvroError(path + ".symbols: expected an array");
      for (const auto& s : symbols->get_array()) {
        if (!s.is_string()) throw AvroError(path + ".symbols: expected strings");
        n.symbols.emplace_back(s.get_string());
        decode::append_json_string(n.symbols.back(), n.json_symbols.emplace_back());
      }
    } else if (t == "fixed") {
      n.kind = Kind::Fixed;
    } else {
      n.kind = Kind::Record;
      const auto* fields = o.if_contains("fields");
      if (fields == nullptr || !fields->is_array()) throw AvroError(path + ".fields: expected an array");
      for (const auto& f : fields->get_array()) {
        const auto* fo = f.if_object();
        const auto* fname = string_attr(fo, "name");
        if (fname == nullptr || fo->if_contains("type") == nullptr)
          throw AvroError(path + ".fields: expected objects with a name and a type");
        const std::string fpath = path + "." + std::string(*fname);
        std::string key;
        decode::append_json_string(*fname, key);
        key += ':';
        n.fields.push_back(Field{std::string(*fname), std::move(key), parse(fo->at("type"), inner_ns, fpath, depth + 1),
                                 fo->if_contains("default")});
      }
    }
    return &n;
  }

  const Node* named(const std::string& name, const std::string& ns, const std::string& path) {
    if (auto p = primitives().find(name); p != primitives().end()) {
      Node& n = nodes_.emplace_back();
      n.kind = p->second;
      return &n;
    }
    // A name without a dot is relative to the enclosing namespace.
    if (name.find('.') == std::string::npos && !ns.empty())
      if (auto it = names_.find(ns + "." + name); it != names_.end()) return it->second;
    if (auto it = names_.find(name); it != names_.end()) return it->second;
    throw AvroError(path + ": unknown type name \"" + name + "\"");
  }

  json::value doc_;
  std::deque<Node> nodes_;  // stable addresses
  std::map<std::string, const Node*> names_;
  const Node* root_ = nullptr;
};

// The one non-null branch of a union of null and one type; nullptr for any
// other union (which Connect cannot express but as a struct of branches).
const Node* optional_branch(const Node& u) {
  if (u.branches.size() == 1) return u.branches[0];
  if (u.branches.size() != 2) return nullptr;
  if (u.branches[0]->kind == Kind::Null && u.branches[1]->kind != Kind::Null) return u.branches[1];
  if (u.branches[1]->kind == Kind::Null && u.branches[0]->kind != Kind::Null) return u.branches[0];
  return nullptr;
}

bool is_primitive_value(Kind k) {
  return k == Kind::Boolean || k == Kind::Int || k == Kind::Long || k == Kind::Float || k == Kind::Double ||
         k == Kind::String;
}

// Connect's schema (as JsonConverter writes it) of an Avro type.
json::object connect_schema(const Node& in, const json::value* field_default, const std::string& path, int depth) {
  if (depth > kMaxDepth) throw AvroError(path + ": schema nested deeper than 64 levels (a recursive record?)");
  const Node* node = &in;
  bool optional = false;
  if (node->kind == Kind::Union) {
    const Node* t = optional_branch(*node);
    if (t == nullptr)
      throw AvroError(path + ": a union of " + std::to_string(node->branches.size()) +
                      " types is not supported (only a type, or null and one type)");
    optional = node->branches.size() == 2;
    node = t;
  }
  const Node& n = *node;
  const json::object* a = n.attrs;
  const json::string* logical = string_attr(a, "logicalType");
  json::object s;
  std::string name;
  json::object parameters;
  switch (n.kind) {
    case Kind::Null: throw AvroError(path + ": a null type alone has no Connect schema");
    case Kind::Boolean: s["type"] = "boolean"; break;
    case Kind::Int: {
      const json::string* ct = string_attr(a, "connect.type");
      s["type"] = ct != nullptr && (*ct == "int8" || *ct == "int16") ? json::string_view(*ct) : "int32";
      if (logical != nullptr && *logical == "date") name = "org.apache.kafka.connect.data.Date";
      if (logical != nullptr && *logical == "time-millis") name = "org.apache.kafka.connect.data.Time";
      break;
    }
    case Kind::Long:
      s["type"] = "int64";
      if (logical != nullptr && *logical == "timestamp-millis") name = "org.apache.kafka.connect.data.Timestamp";
      break;
    case Kind::Float: s["type"] = "float"; break;
    case Kind::Double: s["type"] = "double"; break;
    case Kind::String: s["type"] = "string"; break;
    case Kind::Bytes:
    case Kind::Fixed:
      s["type"] = "bytes";
      if (logical != nullptr && *logical == "decimal") {
        name = "org.apache.kafka.connect.data.Decimal";
        const auto* scale = a->if_contains("scale");
        parameters["scale"] = std::to_string(scale != nullptr && scale->is_int64() ? scale->get_int64() : 0);
        if (const auto* precision = a->if_contains("precision"); precision != nullptr && precision->is_int64())
          parameters["connect.decimal.precision"] = std::to_string(precision->get_int64());
      }
      if (n.kind == Kind::Fixed) {
        const auto* size = a->if_contains("size");
        if (size != nullptr && size->is_int64()) parameters["connect.fixed.size"] = std::to_string(size->get_int64());
      }
      break;
    case Kind::Enum:
      s["type"] = "string";
      parameters["io.confluent.connect.avro.Enum"] = n.full_name;
      for (const auto& sym : n.symbols) parameters["io.confluent.connect.avro.Enum." + sym] = sym;
      break;
    case Kind::Array:
      s["type"] = "array";
      s["items"] = connect_schema(*n.items, nullptr, path + "[]", depth + 1);
      break;
    case Kind::Map:
      s["type"] = "map";
      s["keys"] = json::object{{"type", "string"}, {"optional", false}};
      s["values"] = connect_schema(*n.items, nullptr, path + "{}", depth + 1);
      break;
    case Kind::Record: {
      s["type"] = "struct";
      json::array fields;
      for (const auto& f : n.fields) {
        json::object fs = connect_schema(*f.type, f.default_value, path + "." + f.name, depth + 1);
        fs["field"] = f.name;
        fields.push_back(std::move(fs));
      }
      s["fields"] = std::move(fields);
      name = n.full_name;
      break;
    }
    case Kind::Union: throw AvroError(path + ": a union directly inside a union");
  }
  s["optional"] = optional;
  if (const auto* cn = string_attr(a, "connect.name")) name = std::string(*cn);
  if (!name.empty()) s["name"] = name;
  if (const auto* v = a != nullptr ? a->if_contains("connect.version") : nullptr; v != nullptr && v->is_int64())
    s["version"] = v->get_int64();
  if (const auto* doc = string_attr(a, "connect.doc")) s["doc"] = *doc;
  if (const auto* p = a != nullptr ? a->if_contains("connect.parameters") : nullptr; p != nullptr && p->is_object())
    for (const auto& [k, v] : p->get_object())
      if (v.is_string()) parameters[k] = v;
  if (!parameters.empty()) s["parameters"] = std::move(parameters);
  // Defaults whose Avro JSON is their Connect JSON; a bytes default (Avro
  // writes it as ISO-8859-1 text) and the defaults of structured types are
  // not carried over.
  const json::value* def = a != nullptr ? a->if_contains("connect.default") : nullptr;
  if (def == nullptr) def = field_default;
  if (def != nullptr && !def->is_null() && is_primitive_value(n.kind) && !def->is_object() && !def->is_array())
    s["default"] = *def;
  return s;
}

void append_int(int64_t v, std::string& out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_float(float f, std::string& out) {
  if (std::isnan(f)) {
    out += "\"NaN\"";
  } else if (std::isinf(f)) {
    out += f > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, f);
    out.append(buf, r.ptr);
  }
}

void append_double_value(double d, std::string& out) {
  if (std::isnan(d)) {
    out += "\"NaN\"";
  } else if (std::isinf(d)) {
    out += d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    decode::append_double(d, out);
  }
}

// Where a value sits ("payload.after.amount"), spelled out only for an error:
// building it for every field of every record would cost an allocation each.
struct Path {
  const Path* parent = nullptr;
  std::string_view name;
  std::string str() const { return parent == nullptr ? std::string(name) : parent->str() + "." + std::string(name); }
};

void check(int rc, const char* what, const Path& path) {
  if (rc != 0) throw AvroError(path.str() + ": " + what + ": " + avro_strerror());
}

// The payload JSON of one Avro value of type `n`.
void append_value(avro_value_t& v, const Node& n, const Path& path, std::string& out) {
  switch (n.kind) {
    case Kind::Null: out += "null"; return;
    case Kind::Boolean: {
      int b = 0;
      check(avro_value_get_boolean(&v, &b), "boolean", path);
      out += b ? "true" : "false";
      return;
    }
    case Kind::Int: {
      int32_t i = 0;
      check(avro_value_get_int(&v, &i), "int", path);
      append_int(i, out);
      return;
    }
    case Kind::Long: {
      int64_t l = 0;
      check(avro_value_get_long(&v, &l), "long", path);
      append_int(l, out);
      return;
    }
    case Kind::Float: {
      float f = 0;
      check(avro_value_get_float(&v, &f), "float", path);
      append_float(f, out);
      return;
    }
    case Kind::Double: {
      double d = 0;
      check(avro_value_get_double(&v, &d), "double", path);
      append_double_value(d, out);
      return;
    }
    case Kind::Bytes:
    case Kind::Fixed: {
      const void* buf = nullptr;
      size_t size = 0;
      check(n.kind == Kind::Bytes ? avro_value_get_bytes(&v, &buf, &size) : avro_value_get_fixed(&v, &buf, &size),
            "bytes", path);
      out += '"';
      decode::base64_encode(std::string_view(static_cast<const char*>(buf), size), out);
      out += '"';
      return;
    }
    case Kind::String: {
      const char* s = nullptr;
      size_t size = 0;  // with the terminating NUL
      check(avro_value_get_string(&v, &s, &size), "string", path);
      decode::append_json_string(std::string_view(s, size == 0 ? 0 : size - 1), out);
      return;
    }
    case Kind::Enum: {
      int i = 0;
      check(avro_value_get_enum(&v, &i), "enum", path);
      if (i < 0 || static_cast<size_t>(i) >= n.symbols.size()) throw AvroError(path.str() + ": enum index out of range");
      out += n.json_symbols[static_cast<size_t>(i)];
      return;
    }
    case Kind::Array:
    case Kind::Map: {
      size_t count = 0;
      check(avro_value_get_size(&v, &count), "size", path);
      out += n.kind == Kind::Array ? '[' : '{';
      for (size_t i = 0; i < count; ++i) {
        if (i != 0) out += ',';
        avro_value_t child;
        const char* key = nullptr;
        check(avro_value_get_by_index(&v, i, &child, n.kind == Kind::Map ? &key : nullptr), "element", path);
        if (n.kind == Kind::Map) {
          decode::append_json_string(key != nullptr ? key : "", out);
          out += ':';
        }
        append_value(child, *n.items, path, out);
      }
      out += n.kind == Kind::Array ? ']' : '}';
      return;
    }
    case Kind::Record: {
      out += '{';
      for (size_t i = 0; i < n.fields.size(); ++i) {
        if (i != 0) out += ',';
        avro_value_t child;
        const Path at{&path, n.fields[i].name};
        check(avro_value_get_by_index(&v, i, &child, nullptr), "field", at);
        out += n.fields[i].json_key;
        append_value(child, *n.fields[i].type, at, out);
      }
      out += '}';
      return;
    }
    case Kind::Union: {
      int branch = 0;
      check(avro_value_get_discriminant(&v, &branch), "union branch", path);
      if (branch < 0 || static_cast<size_t>(branch) >= n.branches.size())
        throw AvroError(path.str() + ": union branch out of range");
      avro_value_t current;
      check(avro_value_get_current_branch(&v, &current), "union branch", path);
      append_value(current, *n.branches[static_cast<size_t>(branch)], path, out);
      return;
    }
  }
}

// Avro C allocates what a length or block count says before reading the
// bytes behind it (a flipped byte asks for exabytes, or a gigabyte it then
// fails to fill). This pass walks the body by the schema first and refuses
// any length that runs past its end, so Avro C only reads bodies whose
// lengths fit.
class LengthGuard {
 public:
  LengthGuard(std::string_view body) : p_(body.data()), end_(body.data() + body.size()) {}

  // After walk(): whether the value its schema describes took the whole body.
  bool at_end() const { return p_ == end_; }

  void walk(const Node& n) {
    switch (n.kind) {
      case Kind::Null: return;
      case Kind::Boolean: take(1); return;
      case Kind::Int:
      case Kind::Long:
      case Kind::Enum: varint(); return;
      case Kind::Float: take(4); return;
      case Kind::Double: take(8); return;
      case Kind::Bytes:
      case Kind::String: take(length()); return;
      case Kind::Fixed: {
        const auto* size = n.attrs != nullptr ? n.attrs->if_contains("size") : nullptr;
        take(size != nullptr && size->is_int64() ? size->get_int64() : 0);
        return;
      }
      case Kind::Record:
        for (const auto& f : n.fields) walk(*f.type);
        return;
      case Kind::Union: {
        const int64_t b = varint();
        if (b < 0 || static_cast<size_t>(b) >= n.branches.size())
          throw AvroError("union branch " + std::to_string(b) + " of " + std::to_string(n.branches.size()));
        walk(*n.branches[static_cast<size_t>(b)]);
        return;
      }
      case Kind::Array:
      case Kind::Map:
        for (;;) {
          int64_t count = varint();
          if (count == 0) return;
          if (count < 0) {
            count = count == INT64_MIN ? INT64_MAX : -count;
            length();  // the block's size in bytes, which must fit too
          }
          // Every element takes a byte at least, but a null.
          const int64_t cap = n.kind == Kind::Array && n.items->kind == Kind::Null ? (1 << 20) : end_ - p_;
          if (count > cap)
            throw AvroError("a block of " + std::to_string(count) + " elements where " + std::to_string(end_ - p_) +
                            " bytes remain");
          for (int64_t i = 0; i < count; ++i) {
            if (n.kind == Kind::Map) take(length());
            walk(*n.items);
          }
        }
    }
  }

 private:
  int64_t varint() {
    uint64_t z = 0;
    for (int shift = 0;; shift += 7) {
      if (p_ == end_) throw AvroError("the body ends inside a number");
      if (shift > 63) throw AvroError("a number longer than 10 bytes");
      const auto b = static_cast<unsigned char>(*p_++);
      z |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
    }
    return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  }
  int64_t length() {
    const int64_t len = varint();
    if (len < 0 || len > end_ - p_)
      throw AvroError("a length of " + std::to_string(len) + " bytes where " + std::to_string(end_ - p_) + " remain");
    return len;
  }
  void take(int64_t n) {
    if (n < 0 || n > end_ - p_) throw AvroError("the body ends " + std::to_string(n - (end_ - p_)) + " bytes early");
    p_ += n;
  }

  const char* p_;
  const char* end_;
};

}  // namespace

struct ConnectBridge::Impl {
  SchemaTree tree;
  std::string connect_schema;
  avro_schema_t schema = nullptr;
  avro_value_iface_t* iface = nullptr;
  avro_value_t value{};
  bool has_value = false;
  avro_reader_t reader = nullptr;

  explicit Impl(std::string_view text) : tree(text) {
    connect_schema = json::serialize(::cdc2doris::avro::connect_schema(*tree.root(), nullptr, "schema", 0));
    if (avro_schema_from_json_length(text.data(), text.size(), &schema) != 0)
      throw AvroError(std::string("Avro C refuses the schema: ") + avro_strerror());
    iface = avro_generic_class_from_schema(schema);
    if (iface == nullptr) throw AvroError(std::string("Avro C cannot build a reader for the schema: ") + avro_strerror());
    if (avro_generic_value_new(iface, &value) != 0)
      throw AvroError(std::string("Avro C cannot allocate a value: ") + avro_strerror());
    has_value = true;
    reader = avro_reader_memory(nullptr, 0);
    if (reader == nullptr) throw AvroError("Avro C cannot create a reader");
  }
  ~Impl() {
    if (reader != nullptr) avro_reader_free(reader);
    if (has_value) avro_value_decref(&value);
    if (iface != nullptr) avro_value_iface_decref(iface);
    if (schema != nullptr) avro_schema_decref(schema);
  }
};

ConnectBridge::ConnectBridge(std::string_view avro_schema_json) : impl_(std::make_unique<Impl>(avro_schema_json)) {}
ConnectBridge::~ConnectBridge() = default;

const std::string& ConnectBridge::connect_schema() const { return impl_->connect_schema; }

void ConnectBridge::to_json(std::string_view body, std::string& out) {
  Impl& m = *impl_;
  LengthGuard guard(body);
  try {
    guard.walk(*m.tree.root());
  } catch (const AvroError& e) {
    throw AvroError(std::string("the Avro body does not decode as its schema says: ") + e.what());
  }
  avro_reader_memory_set_source(m.reader, body.data(), static_cast<int64_t>(body.size()));
  if (avro_value_read(m.reader, &m.value) != 0)
    throw AvroError(std::string("the Avro body does not decode as its schema says: ") + avro_strerror());
  // The guard walked the body by the same schema and the same encoding rules, so where it stopped is where
  // Avro C stopped (avro_reader_is_eof() answers only for file readers). Probing Avro C for one more byte
  // instead cost ~10% of this function: each probe fails, and Avro C formats an error message for it.
  if (!guard.at_end()) throw AvroError("bytes left over after the Avro value its schema describes");
  out += "{\"schema\":";
  out += m.connect_schema;
  out += ",\"payload\":";
  append_value(m.value, *m.tree.root(), Path{nullptr, "payload"}, out);
  out += '}';
}

}  // namespace cdc2doris::avro
