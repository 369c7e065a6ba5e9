#pragma once
// The builders keys.cpp declares keys with: one per kind of value, each
// making the key's reader (with its bounds and checks) and its show from
// one accessor of the field, so a key's field is named once.
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "config/reader.hpp"
#include "config/keys.hpp"
#include "core/common/redact.hpp"
#include "core/kafka/source.hpp"

namespace cdc2doris::config::keys {

// The field a key sets, as an accessor that serves both reading (T&) and showing (const T&).
#define FIELD(member) [](auto& c) -> auto& { return c.member; }

template <class V>
using Check = std::function<void(const Reader&, const YAML::Node&, const std::string& where, const V&)>;

template <class T>
Key<T> base(std::string path, std::string type, std::string_view doc, std::optional<Bounds> bounds = std::nullopt) {
  Key<T> k;
  k.path = std::move(path);
  k.type = std::move(type);
  k.doc = doc;
  k.bounds = bounds;
  return k;
}

template <class T>
Key<T> nested(Key<T> k) {
  k.nested = true;
  return k;
}

template <class T>
Key<T> shown_as(std::string_view text, Key<T> k) {
  k.default_text = text;
  return k;
}

// Builders, one per kind of value; T is the struct the key sets.
template <class T>
struct K {
  template <class F>
  static Key<T> string(std::string path, F field, std::string_view doc, Check<std::string> check = {}) {
    auto k = base<T>(std::move(path), "string", doc);
    k.read = [field, check](const Reader& r, const YAML::Node& n, const std::string& where, T& into) {
      field(into) = r.str(n, where);
      if (check) check(r, n, where, field(into));
    };
    k.show = [field](const T& from) { return YAML::Node(field(from)); };
    return k;
  }
  // Never shown: the dump has "[redacted]" where a value is set.
  template <class F>
  static Key<T> secret(std::string path, F field, std::string_view doc) {
    auto k = string(std::move(path), field, doc);
    k.secret = true;
    k.show = [field](const T& from) { return YAML::Node(field(from).empty() ? "" : std::string(kRedacted)); };
    return k;
  }
  // A file whose content is the value of `target` (a Kubernetes Secret
  // volume, a systemd credential): the path is read here, the file after parsing.
  template <class F, class G>
  static Key<T> secret_file(std::string path, F file_field, G target, std::string_view doc) {
    auto k = string(std::move(path), file_field, doc);
    k.file_target = [target](T& into) -> std::string& { return target(into); };
    k.file_path = [file_field](const T& from) -> const std::string& { return file_field(from); };
    return k;
  }
  template <class F>
  static Key<T> boolean(std::string path, F field, std::string_view doc) {
    auto k = base<T>(std::move(path), "boolean", doc);
    k.read = [field](const Reader& r, const YAML::Node& n, const std::string& where, T& into) {
      field(into) = r.boolean(n, where);
    };
    k.show = [field](const T& from) { return YAML::Node(static_cast<bool>(field(from))); };
    return k;
  }
  template <class F>
  static Key<T> integer(std::string path, F field, std::optional<Bounds> bounds, std::string_view doc) {
    auto k = base<T>(std::move(path), "integer", doc, bounds);
    k.read = [field, bounds](const Reader& r, const YAML::Node& n, const std::string& where, T& into) {
      using V = std::remove_reference_t<decltype(field(into))>;
      field(into) = static_cast<V>(r.integer(n, where, bounds));
    };
    k.show = [field](const T& from) { return YAML::Node(std::to_string(field(from))); };
    return k;
  }
  // The field holds milliseconds: a std::chrono::milliseconds or an integer.
  template <class F>
  static Key<T> duration(std::string path, F field, std::optional<Bounds> bounds, std::string_view doc) {
    auto k = base<T>(std::move(path), "duration", doc, bounds);
    k.read = [field, bounds](const Reader& r, const YAML::Node& n, const std::string& where, T& into) {
      using V = std::remove_reference_t<decltype(field(into))>;
      if constexpr (std::is_integral_v<V>)
        field(into) = r.duration(n, where, bounds).count();
      else
        field(into) = r.duration(n, where, bounds);
    };
    k.show = [field](const T& from) {
      using V = std::remove_cvref_t<decltype(field(from))>;
      if constexpr (std::is_integral_v<V>)
        return YAML::Node(format_duration(field(from)));
      else
        return YAML::Node(format_duration(field(from).count()));
    };
    return k;
  }
  template <class F>
  static Key<T> size(std::string path, F field, std::optional<Bounds> bounds, std::string_view doc) {
    auto k = base<T>(std::move(path), "size", doc, bounds);
    k.read = [field, bounds](const Reader& r, const YAML::Node& n, const std::string& where, T& into) {
      using V = std::remove_reference_t<decltype(field(into))>;
      field(into) = static_cast<V>(r.size(n, where, bounds));
    };
    k.show = [field](const T& from) { return YAML::Node(format_size(static_cast<uint64_t>(field(from)))); };
    return k;
  }
  // One of the named values; the field holds V or std::optional<V>.
  template <class F, class V>
  static Key<T> choice(std::string path, F field, std::vector<std::pair<std::string, V>> names, std::string_view doc) {
    std::string type = "enum(";
    for (const auto& [name, v] : names) type += (type.size() > 5 ? "|" : "") + name;
    auto k = base<T>(std::move(path), type + ")", doc);
    k.read = [field, names](const Reader& r, const YAML::Node& n, const std::string& where, T& into) {
      const std::string s = r.str(n, where);
      std::string list;
      for (const auto& [name, v] : names) {
        if (s == name) {
          field(into) = v;
          return;
        }
        list += (list.empty() ? "" : ", ") + name;
      }
      r.expected(n, where, "one of " + list);
    };
    k.show = [field, names](const T& from) {
      const auto& value = field(from);
      if constexpr (requires { value.has_value(); }) {
        if (!value) return YAML::Node(YAML::NodeType::Null);
        for (const auto& [name, v] : names)
          if (*value == v) return YAML::Node(name);
      } else {
        for (const auto& [name, v] : names)
          if (value == v) return YAML::Node(name);
      }
      return YAML::Node(YAML::NodeType::Null);
    };
    return k;
  }
  template <class F>
  static Key<T> strings(std::string path, F field, std::string_view doc, Check<std::vector<std::string>> check = {}) {
    auto k = base<T>(std::move(path), "list<string>", doc);
    k.read = [field, check](const Reader& r, const YAML::Node& n, const std::string& where, T& into) {
      field(into) = r.strings(n, where);
      if (check) check(r, n, where, field(into));
    };
    k.show = [field](const T& from) {
      YAML::Node out(YAML::NodeType::Sequence);
      for (const auto& s : field(from)) out.push_back(s);
      return out;
    };
    return k;
  }
  // `redacted`: values of secret-named entries (sasl.password, Authorization) are hidden when shown.
  template <class F>
  static Key<T> string_map(std::string path, F field, std::string_view doc, bool redacted = false) {
    auto k = base<T>(std::move(path), "map<string,string>", doc);
    k.read = [field](const Reader& r, const YAML::Node& n, const std::string& where, T& into) {
      field(into) = r.string_map(n, where);
    };
    k.show = [field, redacted](const T& from) {
      YAML::Node out(YAML::NodeType::Map);
      for (const auto& [key, v] : redacted ? kafka::redact(field(from)) : field(from)) out[key] = v;
      return out;
    };
    return k;
  }
  // A value of a shape of its own; `read` and `show` written out.
  static Key<T> custom(std::string path, std::string type, std::string_view doc, decltype(Key<T>::read) read,
                       decltype(Key<T>::show) show) {
    auto k = base<T>(std::move(path), std::move(type), doc);
    k.read = std::move(read);
    k.show = std::move(show);
    return k;
  }
};

}  // namespace cdc2doris::config::keys
