#pragma once
// Reading YAML values for the configuration: typed scalars with ${ENV}
// substitution, bounds, and errors that name file:line:col, the key path,
// the value (never a secret's) and what was expected.
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/bounds.hpp"

namespace cdc2doris::config {

class Reader {
 public:
  Reader(std::string file, const std::map<std::string, std::string>* env) : file_(std::move(file)), env_(env) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& path, const std::string& msg) const;
  // A value of a secret key (by its declaration) is never shown.
  [[noreturn]] void expected(const YAML::Node& n, const std::string& path, const std::string& what) const;

  std::string str(const YAML::Node& n, const std::string& path) const;
  int64_t integer(const YAML::Node& n, const std::string& path, const std::optional<Bounds>& bounds = {}) const;
  bool boolean(const YAML::Node& n, const std::string& path) const;
  std::chrono::milliseconds duration(const YAML::Node& n, const std::string& path,
                                     const std::optional<Bounds>& bounds = {}) const;
  uint64_t size(const YAML::Node& n, const std::string& path, const std::optional<Bounds>& bounds = {}) const;
  // A scalar stands for a list of one.
  std::vector<std::string> strings(const YAML::Node& n, const std::string& path) const;
  std::map<std::string, std::string> string_map(const YAML::Node& n, const std::string& path) const;

  const std::string& file() const { return file_; }

  // The document's text, when known: locate() needs it.
  void set_source(std::string_view text) { source_ = text; }
  // Where in the file the character `offset` of scalar `n`'s value sits,
  // found by walking the source from the scalar's mark (quotes, escapes,
  // block indicators and folded line breaks skipped). nullopt when the
  // source is unknown or does not match (an ${ENV} substitution).
  std::optional<YAML::Mark> locate(const YAML::Node& n, std::string_view value, size_t offset) const;

 private:
  // ${VAR} and ${VAR:-default}; "$$" is a literal '$'.
  std::string substitute(const YAML::Node& n, const std::string& path) const;
  int64_t bounded(const YAML::Node& n, const std::string& path, const std::string& what, int64_t v,
                  const std::optional<Bounds>& bounds) const;
  std::optional<std::string> lookup(const std::string& name) const;

  std::string file_;
  const std::map<std::string, std::string>* env_;
  std::string_view source_;
};

// The i-th element of a list node; a scalar stands for a list of one.
YAML::Node element(const YAML::Node& n, size_t i);
// The mark of the key (not the value) `key` in map `m`.
YAML::Mark key_mark(const YAML::Node& m, const std::string& key);
// The node at dotted `path` below `root` (the key's own dots are not split:
// `parts` are the path's components), or an undefined node. Never creates
// nodes (yaml-cpp's operator[] on a non-const node would).
YAML::Node find_node(const YAML::Node& root, const std::vector<std::string>& parts, size_t from = 0);

}  // namespace cdc2doris::config
