// The Config's own methods and what is generated from the declarations
// (the dump, docs/configuration.md); reading is parse.cpp.
#include "config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>

#include <unistd.h>

#include "config/parse.hpp"
#include "config/keys.hpp"

namespace cdc2doris::config {

std::string default_instance_id() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "cdc2doris";
  std::string id;
  for (const char* p = buf; *p != '\0' && id.size() < 64; ++p) {
    const char ch = *p;
    id += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' || ch == ':' ? ch : '_';
  }
  return id;
}

doris::ClientConfig Config::default_doris() {
  doris::ClientConfig d;
  d.user = "root";  // Doris' own administrator
  return d;
}

std::optional<std::string> Config::keep_recorded_label_prefix(
    const std::vector<std::pair<std::string, uint64_t>>& recorded) {
  if (label_prefix_explicit || recorded.empty()) return std::nullopt;
  const auto last = std::max_element(recorded.begin(), recorded.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  if (last->first == delivery.label_prefix) return std::nullopt;
  delivery.label_prefix = last->first;
  return delivery.label_prefix;
}

std::string Config::dump() const {
  // Secrets are hidden where they stand (each key's show), never by
  // searching the text for their values.
  YAML::Emitter e;
  e << show_keys(config_keys(), *this);
  return e.c_str();
}

kafka::SourceConfig Config::source_config() const {
  kafka::SourceConfig s;
  s.topics = topics;
  s.properties = kafka_properties;
  s.properties["bootstrap.servers"] = bootstrap_servers;
  s.properties["group.id"] = group_id;
  if (static_membership && !instance_id.empty()) s.properties.try_emplace("group.instance.id", instance_id);
  s.read_headers = delivery.bad_record_policy == pipeline::BadRecordPolicy::DeadLetter;  // only dead letters copy them
  s.skip_offset_gaps = delivery.skip_offset_gaps;
  return s;
}

std::string reference_markdown() {
  std::ostringstream os;
  os << "# Configuration reference\n\n"
     << "<!-- Generated from config/keys.cpp by `cdc2doris config-reference`; a test keeps this file in sync. -->\n\n"
     << "cdc2doris reads one YAML file (`cdc2doris run --config FILE`). Unknown keys are errors; every error names\n"
     << "`file:line:column`, the key and what was expected. Any scalar may use `${ENV_VAR}` or\n"
     << "`${ENV_VAR:-default}`; `$$` is a literal `$`. Durations: `500ms`, `10s`, `5m`, `1h`. Sizes: `65536`,\n"
     << "`64KiB`, `256MiB`, `2GiB`. In key paths `*` stands for a name you choose (a target table `db.table`,\n"
     << "or a list element). A range after the type (`integer (1..256)`, `duration (>= 1ms)`) is enforced;\n"
     << "`cdc2doris check` rejects everything `run` would (see docs/operations.md).\n";
  std::string section;
  for (const auto& k : schema()) {
    std::string top(k.path.substr(0, k.path.find('.')));
    if (top != section) {
      section = top;
      os << "\n## `" << section << "`\n\n| key | type | default | meaning |\n|---|---|---|---|\n";
    }
    std::string desc(k.doc);
    for (size_t p = desc.find('|'); p != std::string::npos; p = desc.find('|', p + 2)) desc.replace(p, 1, "\\|");
    std::string type = type_with_bounds(k);
    for (size_t p = type.find('|'); p != std::string::npos; p = type.find('|', p + 2)) type.replace(p, 1, "\\|");
    os << "| `" << k.path << "` | " << type << " | " << k.shown << " | " << desc
       << (k.secret ? " **Secret:** never logged or shown." : "") << " |\n";
  }
  return os.str();
}

}  // namespace cdc2doris::config
