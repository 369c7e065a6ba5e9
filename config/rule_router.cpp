#include <map>
#include <mutex>
#include <regex>
#include <unordered_map>

#include "config/config.hpp"

namespace cdc2doris::config {

RowSettings RowSettings::over(const RowSettings& under) const {
  RowSettings out = under;
  if (delete_mode) out.delete_mode = delete_mode;
  if (soft_delete_column) out.soft_delete_column = soft_delete_column;
  if (deleted_at_column) out.deleted_at_column = deleted_at_column;
  if (!rename.empty()) out.rename = rename;
  if (!exclude.empty()) out.exclude = exclude;
  if (column_case) out.column_case = column_case;
  if (filter) out.filter = filter;
  if (!computed_columns.empty()) out.computed_columns = computed_columns;
  return out;
}

namespace {

// Names a source matches by: "db.table", and "db.schema.table" when the
// source has a schema (PostgreSQL, SQL Server).
std::vector<std::string> source_names(const decode::Change& c) {
  std::vector<std::string> names{c.db + "." + c.table};
  if (!c.schema.empty()) names.push_back(c.db + "." + c.schema + "." + c.table);
  return names;
}

std::string expand(std::string tmpl, const decode::Change& c, const std::smatch* m) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t p = tmpl.find(from); p != std::string::npos; p = tmpl.find(from, p + to.size()))
      tmpl.replace(p, from.size(), to);
  };
  replace_all("{db}", c.db);
  replace_all("{schema}", c.schema);
  replace_all("{table}", c.table);
  if (m)
    for (size_t i = 1; i < m->size() && i < 10; ++i) replace_all("$" + std::to_string(i), (*m)[i].str());
  return tmpl;
}

class RuleRouter : public pipeline::Router {
 public:
  explicit RuleRouter(const Config& cfg) : cfg_(cfg) {
    for (const auto& re : cfg.include) include_.emplace_back(re);
    for (const auto& re : cfg.exclude) exclude_.emplace_back(re);
    // A rule's fixed target (no placeholder, no group) is known before any
    // record: its settings hold from the start (recovery, replay).
    static const std::regex varying(R"(\{(db|schema|table)\}|\$[1-9])");
    for (size_t i = 0; i < cfg.rules.size(); ++i)
      if (cfg.rules[i].row.any() && !std::regex_search(cfg.rules[i].target, varying))
        rule_of_.emplace(cfg.rules[i].target, i);
  }

  // Routing depends only on the source's db, schema and table, and a stream
  // has few of those: the answer is remembered instead of matching regexes
  // and expanding templates for every record (it showed in the pipeline
  // thread's profile).
  std::optional<pipeline::Target> route(const decode::Change& c) override {
    memo_key_.assign(c.db);
    memo_key_.push_back('\0');
    memo_key_.append(c.schema);
    memo_key_.push_back('\0');
    memo_key_.append(c.table);
    if (auto it = memo_.find(memo_key_); it != memo_.end()) return it->second;
    auto target = route_uncached(c);
    if (memo_.size() >= kMemoEntries) memo_.clear();  // bounded: a runaway source set must not grow memory
    memo_.emplace(memo_key_, target);
    return target;
  }

  std::optional<pipeline::Target> route_uncached(const decode::Change& c) {
    const auto names = source_names(c);
    auto any = [&](const std::vector<std::regex>& res) {
      for (const auto& re : res)
        for (const auto& n : names)
          if (std::regex_match(n, re)) return true;
      return false;
    };
    if (any(exclude_)) return std::nullopt;
    if (!include_.empty() && !any(include_)) return std::nullopt;
    for (auto it = names.rbegin(); it != names.rend(); ++it)
      if (auto m = cfg_.explicit_map.find(*it); m != cfg_.explicit_map.end()) return m->second;
    for (size_t i = 0; i < cfg_.rules.size(); ++i) {
      const RoutingRule& rule = cfg_.rules[i];
      for (const auto& n : names) {
        std::smatch m;
        if (!std::regex_match(n, m, rule.re)) continue;
        auto target = split(expand(rule.target, c, &m));
        if (rule.row.any()) remember_rule(target, i);
        return target;
      }
    }
    return split(expand(cfg_.target_template, c, nullptr));
  }

  // Settings are asked by target, which the rule that routed to it decides:
  // the first rule listed that did (two rules reaching one target keep one answer).
  void remember_rule(const pipeline::Target& t, size_t rule) {
    std::lock_guard lock(rule_mu_);
    auto [it, fresh] = rule_of_.emplace(t.name(), rule);
    if (!fresh && rule < it->second) it->second = rule;
  }

  const RoutingRule* rule_of(const pipeline::Target& t) {
    std::lock_guard lock(rule_mu_);
    auto it = rule_of_.find(t.name());
    return it == rule_of_.end() ? nullptr : &cfg_.rules[it->second];
  }

  pipeline::TableSettings settings(const pipeline::Target& t) override {
    pipeline::TableSettings s;
    s.headers = cfg_.load_headers;
    s.auto_create = cfg_.auto_create;
    s.schema_evolution = cfg_.schema_evolution;
    s.truncate = cfg_.truncate;
    s.create.properties = cfg_.create_properties;
    s.create.database_properties = cfg_.create_database_properties;
    const auto it = cfg_.tables.find(t.name());
    const RoutingRule* rule = rule_of(t);
    RowSettings row = rule ? rule->row : RowSettings{};
    if (it != cfg_.tables.end()) row = it->second.row.over(row);
    apply(row, s);
    if (it != cfg_.tables.end()) {
      const TableOverride& o = it->second;
      if (o.auto_create) s.auto_create = *o.auto_create;
      if (o.schema_evolution) s.schema_evolution = *o.schema_evolution;
      if (o.truncate) s.truncate = *o.truncate;
      for (const auto& [k, v] : o.properties) s.create.properties[k] = v;
      s.create.buckets = o.buckets;
      s.create.flexible_partial_updates = o.flexible_partial_updates;
      s.columns = o.columns;
      s.new_column_type = o.new_column_type;
      s.unique_key = it->second.unique_key;
      s.sequence_col = it->second.sequence_col;
      s.sequence_from_source_position = it->second.sequence_from_source_position;
      for (const auto& [k, v] : it->second.headers) s.headers[k] = v;
      s.key_columns = it->second.key_columns;
      s.epoch_units = it->second.epoch_units;
      s.decimal_scales = it->second.decimal_scales;
      if (it->second.sequence_from_source_position) {
        s.extra_columns = cfg_.decoding.extra_columns;
        s.extra_columns->sequence = it->second.sequence_col;
      }
    }
    return s;
  }

  std::vector<pipeline::Target> known_targets() override {
    std::vector<pipeline::Target> out;
    for (const auto& [src, t] : cfg_.explicit_map) out.push_back(t);
    for (const auto& [name, t] : cfg_.tables) out.push_back(split(name));
    return out;
  }

 private:
  static pipeline::Target split(const std::string& name) {
    auto dot = name.find('.');
    if (dot == std::string::npos) return {name, name};
    return {name.substr(0, dot), name.substr(dot + 1)};
  }

  // The delete mode and transforms `row` sets over the routing.* defaults.
  void apply(const RowSettings& row, pipeline::TableSettings& s) const {
    if (row.delete_mode || row.soft_delete_column || row.deleted_at_column) {
      decode::DeleteOptions d = cfg_.decoding.deletes;
      if (row.delete_mode) d.mode = *row.delete_mode;
      if (row.soft_delete_column) d.soft_column = *row.soft_delete_column;
      if (row.deleted_at_column) d.deleted_at_column = *row.deleted_at_column;
      s.deletes = d;
    }
    if (!row.rename.empty() || !row.exclude.empty() || row.column_case || row.filter || !row.computed_columns.empty()) {
      decode::ColumnTransforms tf = cfg_.decoding.transforms;
      tf.rename = row.rename;
      tf.exclude = row.exclude;
      if (row.column_case) tf.name_case = *row.column_case;
      tf.filter = row.filter;
      tf.computed.insert(tf.computed.end(), row.computed_columns.begin(), row.computed_columns.end());
      s.transforms = std::move(tf);
    }
  }

  static constexpr size_t kMemoEntries = 100000;
  const Config& cfg_;
  std::vector<std::regex> include_, exclude_;
  std::string memo_key_;
  std::unordered_map<std::string, std::optional<pipeline::Target>> memo_;
  std::mutex rule_mu_;  // settings() may be asked from the recovery's threads
  std::map<std::string, size_t> rule_of_;  // target db.table -> the rule (index) whose settings it takes
};

}  // namespace

std::unique_ptr<pipeline::Router> make_router(const Config& cfg) { return std::make_unique<RuleRouter>(cfg); }

}  // namespace cdc2doris::config
