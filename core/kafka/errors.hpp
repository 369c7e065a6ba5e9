#pragma once
// librdkafka error codes → our Error and its disposition, in one place; and
// what an authentication, TLS or authorization failure means for the
// operator (which broker, which mechanism, what to change), also here, so
// `check --connect`, the health monitor (/readyz) and the running source
// say the same thing.
#include <librdkafka/rdkafka.h>

#include <map>
#include <string>
#include <string_view>

#include "core/common/error.hpp"

namespace cdc2doris::kafka {

enum class ErrorClass {
  Ignore,     // not an error for us (partition EOF)
  Transient,  // librdkafka recovers by itself: log and count
  Retry,      // the pipeline must abort the epoch and rewind
  Fatal,      // configuration, credentials, lost data: stop the daemon
};

ErrorClass classify(rd_kafka_resp_err_t err);
// With librdkafka's text: a broker that ends the TLS handshake with an alert
// (it rejected our client certificate) reaches librdkafka as a failed
// receive, _TRANSPORT, which would otherwise be taken for a network blip and
// retried forever with the same certificate.
ErrorClass classify(rd_kafka_resp_err_t err, std::string_view reason);

// The client's security settings an explanation names. None is a secret:
// neither sasl.username (redacted like a password in this project) nor any
// password is kept.
struct SecuritySettings {
  std::string bootstrap;
  std::string protocol;         // security.protocol, lower case ("plaintext" when unset)
  std::string mechanism;        // sasl.mechanism(s), upper case ("GSSAPI" when unset, librdkafka's default)
  std::string ca_location;      // ssl.ca.location
  std::string cert_location;    // ssl.certificate.location
  bool cert_pem_inline = false; // ssl.certificate.pem (the certificate itself is not kept)
  std::string group;            // group.id
  static SecuritySettings of(const std::map<std::string, std::string>& props);
  bool sasl() const { return protocol.starts_with("sasl_"); }
  bool tls() const { return protocol.ends_with("ssl"); }
  // "SASL_SSL/SCRAM-SHA-512", "SSL (TLS, client certificate ...)", "PLAINTEXT"
  std::string describe() const;
};

// Whether `err` with librdkafka's `reason` is an authentication, TLS or
// authorization failure (the operator's to fix, never retried away).
bool is_security_failure(rd_kafka_resp_err_t err, std::string_view reason);

// For a security failure: what was refused, by which broker, under which
// mechanism, and the fix, e.g. "TLS: the broker ssl://h:9093 presented a
// certificate that ssl.ca.location (/etc/ca.pem) does not trust: set
// ssl.ca.location to the CA that issued the broker's certificate". Empty for
// any other error. Never contains a secret.
std::string explain(rd_kafka_resp_err_t err, std::string_view reason, const SecuritySettings& sec,
                    const ErrorContext& ctx = {});

// Builds the Error for a classified code (Transient maps to Retry so the
// value is still meaningful if someone acts on it). With `sec`, a security
// failure is Fatal and its explanation leads the message, librdkafka's own
// words follow.
Error make_error(rd_kafka_resp_err_t err, const std::string& what, ErrorContext ctx = {},
                 const SecuritySettings* sec = nullptr);

}  // namespace cdc2doris::kafka
