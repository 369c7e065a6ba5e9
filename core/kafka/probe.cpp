#include "core/kafka/probe.hpp"

#include <librdkafka/rdkafka.h>
#include <regex.h>

#include <algorithm>
#include <memory>

#include "core/kafka/errors.hpp"
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

struct LastError {
  rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string reason;
  // A security failure is kept over later connection noise (_ALL_BROKERS_DOWN
  // follows every refused handshake).
  bool security = false;
};

void remember_error(rd_kafka_t*, int err, const char* reason, void* opaque) {
  auto* last = static_cast<LastError*>(opaque);
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  const bool security = is_security_failure(code, reason);
  if (last->security && !security) return;
  *last = LastError{code, reason, security};
}

// "; last broker error: ..." with the explanation first when it is a
// security failure.
std::string describe_last(const LastError& last, const SecuritySettings& sec) {
  if (last.code == RD_KAFKA_RESP_ERR_NO_ERROR) return {};
  const std::string raw = std::string(rd_kafka_err2name(last.code)) + ": " + last.reason;
  if (std::string why = explain(last.code, last.reason, sec); !why.empty()) return why + " (librdkafka: " + raw + ")";
  return "last broker error: " + raw;
}

std::optional<PropertyProblem> fill(rd_kafka_conf_t* conf, const std::map<std::string, std::string>& props) {
  char errstr[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK)
      return PropertyProblem{k, is_sensitive_property(k) ? "librdkafka rejects the value (hidden: secret)" : errstr};
  }
  return std::nullopt;
}

std::string conf_get(rd_kafka_conf_t* conf, const char* key, bool* set = nullptr) {
  char buf[1024];
  size_t size = sizeof buf;
  const bool ok = rd_kafka_conf_get(conf, key, buf, &size) == RD_KAFKA_CONF_OK;
  if (set != nullptr) *set = ok;
  return ok ? std::string(buf) : std::string();
}

// A GSSAPI handle runs sasl.kerberos.kinit.cmd as soon as it exists, and a
// configuration check must neither fetch Kerberos tickets nor print "kinit:
// not found". At creation librdkafka only checks that every %{property} the
// command names is set (rd_kafka_sasl_cyrus_conf_validate, librdkafka
// src/rdkafka_sasl_cyrus.c): checked here the same way, then the scratch
// handle's refresh is switched off.
std::optional<PropertyProblem> check_kinit_cmd(rd_kafka_conf_t* conf) {
  // librdkafka reads the SASL settings only for a sasl_* protocol; GSSAPI is
  // its default mechanism, set or not.
  const std::string protocol = conf_get(conf, "security.protocol");
  if ((protocol != "sasl_plaintext" && protocol != "sasl_ssl") || conf_get(conf, "sasl.mechanisms") != "GSSAPI" ||
      conf_get(conf, "sasl.kerberos.min.time.before.relogin") == "0")
    return std::nullopt;
  const std::string cmd = conf_get(conf, "sasl.kerberos.kinit.cmd");
  for (size_t at = cmd.find("%{"); at != std::string::npos; at = cmd.find("%{", at + 2)) {
    const size_t close = cmd.find('}', at);
    if (close == std::string::npos) break;
    const std::string key = cmd.substr(at + 2, close - at - 2);
    bool set = false;
    conf_get(conf, key.c_str(), &set);
    if (!set)
      return PropertyProblem{"sasl.kerberos.kinit.cmd", "Invalid sasl.kerberos.kinit.cmd value: Property not available: \"" +
                                                            key + "\" (set it, or sasl.kerberos.kinit.cmd)"};
  }
  char errstr[256];
  rd_kafka_conf_set(conf, "sasl.kerberos.min.time.before.relogin", "0", errstr, sizeof errstr);
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
    // sasl.kerberos.keytab stays: librdkafka opens no keytab itself, it only
    // renders it into sasl.kerberos.kinit.cmd, and without it the default
    // command is refused ("Property not available") although `run` would
    // accept the configuration.
    const bool names_file = k.ends_with(".location") || k == "plugin.library.paths" ||
                            k == "ssl.ca.certificate.stores";
    it = names_file ? scratch.erase(it) : std::next(it);
  }
  Conf conf(rd_kafka_conf_new());
  if (auto p = fill(conf.get(), scratch)) return p;
  if (auto p = check_kinit_cmd(conf.get())) return p;
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
  LastError last_error;
  const SecuritySettings sec = SecuritySettings::of(props);
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
  // In slices, serving the error callback in between: a refused handshake
  // or login is final, no need to wait for the timeout.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  rd_kafka_resp_err_t err;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const auto slice = std::max(std::chrono::milliseconds(1), std::min(left, std::chrono::milliseconds(500)));
    err = rd_kafka_metadata(rk.get(), 1, nullptr, &md, static_cast<int>(slice.count()));
    rd_kafka_poll(rk.get(), 0);  // serves the error callback
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR || last_error.security || left <= slice) break;
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    const std::string last = describe_last(last_error, sec);
    out.error = last_error.security ? last
                                    : std::string("no metadata from any broker within ") +
                                          std::to_string(timeout.count()) + " ms (" + rd_kafka_err2name(err) + ")" +
                                          (last.empty() ? "" : "; " + last);
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

std::optional<std::string> probe_group(const std::map<std::string, std::string>& props,
                                       const std::vector<std::pair<std::string, int32_t>>& partitions,
                                       std::chrono::milliseconds timeout) {
  if (partitions.empty()) return std::nullopt;
  auto consumer = props;
  consumer["enable.auto.commit"] = "false";
  // Never subscribed: an eager strategy avoids librdkafka#4312 (a cooperative
  // consumer never assigned aborts in destroy), and no static member id may
  // fence a running daemon (monitor.cpp does the same).
  consumer["partition.assignment.strategy"] = "range";
  consumer.erase("group.instance.id");
  Conf conf(rd_kafka_conf_new());
  if (auto p = fill(conf.get(), consumer)) return "Kafka property " + p->key + ": " + p->message;
  LastError last_error;
  const SecuritySettings sec = SecuritySettings::of(props);
  rd_kafka_conf_set_log_cb(conf.get(), &silent_log);
  rd_kafka_conf_set_error_cb(conf.get(), &remember_error);
  rd_kafka_conf_set_opaque(conf.get(), &last_error);
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr, sizeof errstr);
  if (rk == nullptr) return std::string("cannot create a Kafka consumer: ") + errstr;
  conf.release();
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> owned(
      rk, [](rd_kafka_t* h) { rd_kafka_destroy_flags(h, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE); });
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  std::unique_ptr<rd_kafka_topic_partition_list_t, void (*)(rd_kafka_topic_partition_list_t*)> l(
      list, &rd_kafka_topic_partition_list_destroy);
  for (const auto& [topic, partition] : partitions) rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
  // The group coordinator's refusal (FindCoordinator: GROUP_AUTHORIZATION_FAILED)
  // reaches the consumer queue as an error message while rd_kafka_committed
  // keeps waiting for a coordinator: ask in slices and look in between.
  rd_kafka_poll_set_consumer(rk);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  rd_kafka_resp_err_t err;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const auto slice = std::max(std::chrono::milliseconds(1), std::min(left, std::chrono::milliseconds(1000)));
    err = rd_kafka_committed(rk, list, static_cast<int>(slice.count()));
    while (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 0)) {
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        const std::string reason = rd_kafka_message_errstr(m);
        if (is_security_failure(m->err, reason) && !last_error.security) last_error = LastError{m->err, reason, true};
      }
      rd_kafka_message_destroy(m);
    }
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT || last_error.security || left <= slice) break;
  }
  auto explained = [&](rd_kafka_resp_err_t code, const std::string& reason, const ErrorContext& ctx) {
    if (std::string why = explain(code, reason, sec, ctx); !why.empty())
      return why + " (librdkafka: " + rd_kafka_err2name(code) + ")";
    return reason + ": " + rd_kafka_err2name(code) + ": " + rd_kafka_err2str(code);
  };
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (last_error.security) return explained(last_error.code, last_error.reason, {});
    return explained(err, "reading the committed offsets of group " + sec.group, {});
  }
  for (int i = 0; i < list->cnt; ++i) {
    const auto& e = list->elems[i];
    if (e.err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    ErrorContext ctx;
    ctx.topic = e.topic;
    ctx.partition = e.partition;
    return explained(e.err, "reading the committed offset of " + std::string(e.topic) + "[" +
                                std::to_string(e.partition) + "] in group " + sec.group,
                     ctx);
  }
  return std::nullopt;
}

}  // namespace cdc2doris::kafka
