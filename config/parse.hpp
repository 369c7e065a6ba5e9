#pragma once
// Reading a YAML document into a Config by the declarations (keys.hpp).
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/keys.hpp"

namespace cdc2doris::config {

// Reads every declared key present under `node` (the keys' paths relative
// to the part up to "*.", if any) into `into`, in declaration order.
// `where` is the path of `node` as errors name it ("routing.tables.d.t").
template <class T>
void read_keys(const Reader& r, const std::vector<Key<T>>& keys, const YAML::Node& node, const std::string& where, T& into);
// The declared keys of `from` as a map, nested by their paths; null values left out.
template <class T>
YAML::Node show_keys(const std::vector<Key<T>>& keys, const T& from);

// The whole document: unknown and duplicate keys, every key, the secret
// files, then the checks across keys. `text`: the document's source, for
// errors that point inside a value (Reader::locate).
Config parse(const YAML::Node& root, const std::string& name, const std::map<std::string, std::string>* env,
             std::string_view text = {});

}  // namespace cdc2doris::config
