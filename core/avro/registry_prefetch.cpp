// RegistryClient::prefetch: the schemas of the subscribed topics' subjects,
// read at start so that a registry outage later costs nothing for records
// written under any registered version (issue 34).
//
// Confluent's API (also Apicurio's ccompat API):
//   GET /subjects                          ["t-key", "t-value", ...]
//   GET /subjects/{s}/versions             [1, 2, 3]
//   GET /subjects/{s}/versions/{v}         {"subject", "version", "id", "schema"[, "schemaType"]}
// Apicurio's own API (v2), where records carry global or content ids:
//   GET /search/artifacts?limit=&offset=   {"artifacts": [{"id", "groupId", "type"}], "count"}
//   GET /groups/{g}/artifacts/{id}/versions?limit=&offset=
//                                          {"versions": [{"version", "globalId", "contentId", "type"}], "count"}
// Each version's text then comes through schema(), which parses and caches
// it as a record's id would; the subject's version answer only names the id.
#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/avro/registry_client.hpp"

namespace cdc2doris::avro {
namespace {

namespace json = boost::json;

// The topic of a subject Debezium's converters name `<topic>-key` / `<topic>-value`.
std::optional<std::string_view> topic_of(std::string_view subject) {
  for (std::string_view suffix : {"-key", "-value"})
    if (subject.size() > suffix.size() && subject.ends_with(suffix))
      return subject.substr(0, subject.size() - suffix.size());
  return std::nullopt;
}

std::optional<int64_t> int_field(const json::value& v, const char* name) {
  const auto* obj = v.if_object();
  const auto* f = obj != nullptr ? obj->if_contains(name) : nullptr;
  if (f == nullptr || !f->is_number()) return std::nullopt;
  boost::system::error_code ec;
  const auto n = f->to_number<int64_t>(ec);
  return ec ? std::nullopt : std::optional<int64_t>(n);
}

std::string_view string_field(const json::value& v, const char* name) {
  const auto* obj = v.if_object();
  const auto* f = obj != nullptr ? obj->if_contains(name) : nullptr;
  return f != nullptr && f->is_string() ? std::string_view(f->get_string()) : std::string_view();
}

// A version that is gone or not Avro is passed over; anything else ends the prefetch.
bool passed_over(const RegistryFailure& f) {
  return f.kind == RegistryFailure::Kind::UnknownId || f.kind == RegistryFailure::Kind::NotAvro;
}

constexpr int kPage = 500;

}  // namespace

std::variant<RegistryClient::Prefetched, RegistryFailure> RegistryClient::prefetch(
    const std::function<bool(std::string_view topic)>& wanted) {
  return options_.api == RegistryApi::Apicurio ? prefetch_apicurio(wanted) : prefetch_confluent(wanted);
}

std::variant<RegistryClient::Prefetched, RegistryFailure> RegistryClient::prefetch_confluent(
    const std::function<bool(std::string_view)>& wanted) {
  const std::string where = "prefetching schemas from the registry at " + options_.url;
  auto listed = get_json("/subjects", where, "a JSON array of subjects");
  if (auto* f = std::get_if<RegistryFailure>(&listed)) return *f;
  const auto* subjects = std::get<json::value>(listed).if_array();
  if (subjects == nullptr)
    return RegistryFailure{RegistryFailure::Kind::Unreachable, where + ": expected a JSON array of subjects"};
  Prefetched out;
  for (const auto& entry : *subjects) {
    if (!entry.is_string()) continue;
    const std::string subject(entry.get_string());
    const auto topic = topic_of(subject);
    if (!topic || !wanted(*topic)) continue;
    ++out.subjects;
    const std::string at = where + ", subject " + subject;
    auto versions = get_json("/subjects/" + subject + "/versions", at, "a JSON array of versions");
    if (auto* f = std::get_if<RegistryFailure>(&versions)) return *f;
    std::vector<int64_t> numbers;
    if (const auto* list = std::get<json::value>(versions).if_array())
      for (const auto& v : *list)
        if (v.is_int64()) numbers.push_back(v.get_int64());
    std::sort(numbers.rbegin(), numbers.rend());  // newest first: the likeliest to be read
    for (const int64_t number : numbers) {
      if (cache_.size() >= options_.max_cached_ids) return out;
      const std::string version = std::to_string(number);
      auto meta = get_json("/subjects/" + subject + "/versions/" + version, at + " version " + version,
                           "a JSON object with the version's \"id\"");
      if (auto* f = std::get_if<RegistryFailure>(&meta)) return *f;
      const auto id = int_field(std::get<json::value>(meta), "id");
      if (!id) continue;
      auto got = schema(SchemaRef{IdKind::Content, *id});
      if (auto* f = std::get_if<RegistryFailure>(&got)) {
        if (passed_over(*f)) continue;
        return *f;
      }
      ++out.schemas;
    }
  }
  return out;
}

std::variant<RegistryClient::Prefetched, RegistryFailure> RegistryClient::prefetch_apicurio(
    const std::function<bool(std::string_view)>& wanted) {
  const std::string where = "prefetching schemas from the registry at " + options_.url;
  Prefetched out;
  for (int offset = 0;; offset += kPage) {
    auto page = get_json("/search/artifacts?limit=" + std::to_string(kPage) + "&offset=" + std::to_string(offset),
                         where, "a JSON object with \"artifacts\"");
    if (auto* f = std::get_if<RegistryFailure>(&page)) return *f;
    const auto& doc = std::get<json::value>(page);
    const auto* obj = doc.if_object();
    const auto* artifacts = obj != nullptr && obj->if_contains("artifacts") ? obj->at("artifacts").if_array() : nullptr;
    if (artifacts == nullptr)
      return RegistryFailure{RegistryFailure::Kind::Unreachable, where + ": expected a JSON object with \"artifacts\""};
    for (const auto& artifact : *artifacts) {
      const std::string_view id = string_field(artifact, "id");
      const auto topic = topic_of(id);
      const std::string_view type = string_field(artifact, "type");
      if (!topic || !wanted(*topic) || (!type.empty() && type != "AVRO")) continue;
      ++out.subjects;
      // An artifact registered without a group lives in Apicurio's group "default".
      const std::string_view group_field = string_field(artifact, "groupId");
      const std::string group = group_field.empty() ? "default" : std::string(group_field);
      const std::string at = where + ", artifact " + group + "/" + std::string(id);
      struct Version {
        int64_t global = 0, content = 0;
      };
      std::vector<Version> versions;
      for (int from = 0;; from += kPage) {
        auto listed = get_json("/groups/" + group + "/artifacts/" + std::string(id) +
                                   "/versions?limit=" + std::to_string(kPage) + "&offset=" + std::to_string(from),
                               at, "a JSON object with \"versions\"");
        if (auto* f = std::get_if<RegistryFailure>(&listed)) return *f;
        const auto& vdoc = std::get<json::value>(listed);
        const auto* vobj = vdoc.if_object();
        const auto* list = vobj != nullptr && vobj->if_contains("versions") ? vobj->at("versions").if_array() : nullptr;
        if (list == nullptr) break;
        for (const auto& v : *list) {
          const auto global = int_field(v, "globalId");
          const auto content = int_field(v, "contentId");
          if (global && content) versions.push_back(Version{*global, *content});
        }
        const auto count = int_field(vdoc, "count");
        if (list->empty() || !count || from + kPage >= *count) break;
      }
      std::sort(versions.begin(), versions.end(), [](const Version& a, const Version& b) { return a.global > b.global; });
      for (const Version& v : versions) {
        if (cache_.size() >= options_.max_cached_ids) return out;
        auto got = schema(SchemaRef{IdKind::Global, v.global});
        if (auto* f = std::get_if<RegistryFailure>(&got)) {
          if (passed_over(*f)) continue;
          return *f;
        }
        // Records name a version by either id (decoding.avro.id_kind, the headers).
        remember(SchemaRef{IdKind::Content, v.content}, std::get<Schema>(got));
        ++out.schemas;
      }
    }
    const auto count = int_field(doc, "count");
    if (artifacts->empty() || !count || offset + kPage >= *count) break;
  }
  return out;
}

}  // namespace cdc2doris::avro
