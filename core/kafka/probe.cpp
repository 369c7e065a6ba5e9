#include "core/kafka/probe.hpp"

#include <librdkafka/rdkafka.h>
#include <regex.h>

#include <memory>

#include "core/kafka/source.hpp"

namespace cdc2doris::kafka {

namespace {

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using Handle = std::unique_ptr<rd_kafka_t, HandleDeleter>;
struct ConfDeleter {
  void operator()(rd_kafka_conf_t* c) const { rd_kafka_conf_destroy(c); }
};
using Conf = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;
struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* m) const { rd_kafka_metadata_destroy(m); }
};

// A probe reports what it found itself; librdkafka's own log lines (every
// refused connection) would only repeat it on stderr.
void silent_log(const rd_kafka_t*, int, const char*, const char*) {}

void remember_error(rd_kafka_t*, int err, const char* reason, void* opaque) {
  auto* last = static_cast<std::string*>(opaque);
  *last = std::string(rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err))) + ": " + reason;
}

std::optional<PropertyProblem> fill(rd_kafka_conf_t* conf, const std::map<std::string, std::string>& props) {
  char errstr[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK)
      return PropertyProblem{k, is_sensitive_property(k) ? "librdkafka rejects the value (hidden: secret)" : errstr};
  }
  return std::nullopt;
}

}  // namespace

std::optional<PropertyProblem> check_properties(const std::map<std::string, std::string>& props) {
  auto scratch = props;
  scratch.erase("bootstrap.servers");  // nothing may connect
  // Files (CA bundles, keys, keytabs, plugins) are read by rd_kafka_new():
  // whether they exist is a question about the machine, answered by `check
  // --connect` and `run` there, not about the configuration.
  for (auto it = scratch.begin(); it != scratch.end();) {
    const std::string& k = it->first;
    const bool names_file = k.ends_with(".location") || k == "sasl.kerberos.keytab" || k == "plugin.library.paths" ||
                            k == "ssl.ca.certificate.stores";
    it = names_file ? scratch.erase(it) : std::next(it);
  }
  Conf conf(rd_kafka_conf_new());
  if (auto p = fill(conf.get(), scratch)) return p;
  rd_kafka_conf_set_log_cb(conf.get(), &silent_log);
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr, sizeof errstr);
  if (rk == nullptr) return PropertyProblem{"", errstr};
  conf.release();  // owned by the handle now
  Handle(rk).reset();
  return std::nullopt;
}

std::optional<std::string> check_topic_regex(const std::string& pattern) {
  regex_t re;
  const int rc = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&re);
    return std::nullopt;
  }
  char buf[256];
  regerror(rc, &re, buf, sizeof buf);
  return std::string(buf);
}

bool topic_regex_matches(const std::string& pattern, const std::string& topic) {
  regex_t re;
  if (regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return false;
  const bool match = regexec(&re, topic.c_str(), 0, nullptr, 0) == 0;
  regfree(&re);
  return match;
}

ProbeResult probe_metadata(const std::map<std::string, std::string>& props, std::chrono::milliseconds timeout) {
  ProbeResult out;
  Conf conf(rd_kafka_conf_new());
  if (auto p = fill(conf.get(), props)) {
    out.error = "Kafka property " + p->key + ": " + p->message;
    return out;
  }
  std::string last_error;
  rd_kafka_conf_set_log_cb(conf.get(), &silent_log);
  rd_kafka_conf_set_error_cb(conf.get(), &remember_error);
  rd_kafka_conf_set_opaque(conf.get(), &last_error);
  char errstr[512];
  // A producer handle: a consumer with a group.id would also start looking
  // for the group coordinator, which a metadata probe does not need.
  rd_kafka_t* raw = rd_kafka_new(RD_KAFKA_PRODUCER, conf.get(), errstr, sizeof errstr);
  if (raw == nullptr) {
    out.error = std::string("cannot create a Kafka client: ") + errstr;
    return out;
  }
  conf.release();
  Handle rk(raw);
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk.get(), 1, nullptr, &md, static_cast<int>(timeout.count()));
  rd_kafka_poll(rk.get(), 0);  // serves the error callback
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.error = std::string("no metadata from any broker within ") + std::to_string(timeout.count()) + " ms (" +
                rd_kafka_err2name(err) + ")";
    if (!last_error.empty()) out.error += "; last broker error: " + last_error;
    return out;
  }
  std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter> owned(md);
  ClusterMetadata cm;
  cm.answered_by = md->orig_broker_id;
  for (int i = 0; i < md->broker_cnt; ++i)
    cm.brokers.push_back(std::string(md->brokers[i].host) + ":" + std::to_string(md->brokers[i].port));
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR)
      cm.topic_errors[t.topic] = rd_kafka_err2name(t.err);
    else
      cm.topics[t.topic] = t.partition_cnt;
  }
  out.metadata = std::move(cm);
  return out;
}

}  // namespace cdc2doris::kafka
