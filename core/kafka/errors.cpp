#include "core/kafka/errors.hpp"

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>

namespace cdc2doris::kafka {

ErrorClass classify(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
      return ErrorClass::Ignore;

    // Connectivity and leadership churn: librdkafka reconnects, refreshes
    // metadata and resumes fetching from its position; no record is skipped.
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR__MAX_POLL_EXCEEDED:
      return ErrorClass::Transient;

    // A commit raced a rebalance, or the group moved on without us.
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION:
    case RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID:
    case RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST:
    case RD_KAFKA_RESP_ERR__STATE:
      return ErrorClass::Retry;

    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    // Records between the checkpoint and the log start were deleted by
    // retention: continuing would silently skip them.
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
      return ErrorClass::Fatal;

    default:
      // Unknown: rewinding is always safe (Kafka is the replay buffer).
      return ErrorClass::Retry;
  }
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}
bool has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// OpenSSL's words for a TLS alert the broker sent: it refused our
// certificate (no certificate, expired, unknown issuer). librdkafka reports
// them as a failed receive ("Receive failed: ... sslv3 alert bad
// certificate: SSL alert number 42"), since with TLS 1.3 the handshake had
// already completed on our side. Kafka's JSSE answers an expired client
// certificate with certificate_unknown (46), a missing one with
// bad_certificate (42) (seen against Kafka 4.1 with librdkafka 2.0.2).
bool broker_alert(std::string_view reason) {
  if (!has(reason, "SSL routines") && !has(reason, "SSL alert")) return false;
  for (std::string_view a : {"alert bad certificate", "alert certificate unknown", "alert certificate expired",
                             "alert unknown ca", "alert certificate required", "alert certificate revoked",
                             "alert unsupported certificate", "alert access denied", "alert handshake failure"})
    if (has(reason, a)) return true;
  return false;
}

// The broker librdkafka names at the start of its text
// ("sasl_ssl://127.0.0.1:9093/bootstrap: SASL authentication error: ...").
std::string broker_of(std::string_view reason, const SecuritySettings& sec) {
  const size_t scheme = reason.find("://");
  if (scheme != std::string_view::npos) {
    size_t start = scheme;
    while (start > 0 && (std::isalnum(static_cast<unsigned char>(reason[start - 1])) || reason[start - 1] == '_'))
      --start;
    size_t end = reason.find_first_of(": ", scheme + 3);
    while (end != std::string_view::npos && reason[end] == ':' && end + 1 < reason.size() &&
           std::isdigit(static_cast<unsigned char>(reason[end + 1])))
      end = reason.find_first_of(": ", end + 1);  // skip the port's colon
    return std::string(reason.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
  }
  return "bootstrap " + sec.bootstrap;
}

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};

struct CertInfo {
  std::string subject;  // RFC 2253, as Kafka's default principal builder names the principal
  std::string not_before, not_after;
  int expired = 0;      // >0 expired, <0 not yet valid
};

std::string asn1_time(const ASN1_TIME* t) {
  struct tm tm {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return "?";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// The client certificate's subject and validity, when it can be read.
std::optional<CertInfo> read_cert(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "r"), &std::fclose);
  if (!f) return std::nullopt;
  std::unique_ptr<X509, X509Free> x(PEM_read_X509(f.get(), nullptr, nullptr, nullptr));
  if (!x) return std::nullopt;
  CertInfo out;
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (bio && X509_NAME_print_ex(bio.get(), X509_get_subject_name(x.get()), 0, XN_FLAG_RFC2253) >= 0) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    out.subject.assign(data, static_cast<size_t>(n));
  }
  out.not_before = asn1_time(X509_get0_notBefore(x.get()));
  out.not_after = asn1_time(X509_get0_notAfter(x.get()));
  if (X509_cmp_current_time(X509_get0_notAfter(x.get())) < 0) out.expired = 1;
  else if (X509_cmp_current_time(X509_get0_notBefore(x.get())) > 0) out.expired = -1;
  return out;
}

// Who the broker sees: a client certificate's subject under the default
// principal mapping; for SASL the user name, which stays unnamed here (this
// project treats sasl.username as a secret).
std::string principal(const SecuritySettings& sec) {
  if (sec.sasl()) return "the principal of sasl.username (User:<name>)";
  if (auto c = read_cert(sec.cert_location); c && !c->subject.empty()) return "User:" + c->subject;
  if (sec.tls()) return "User:ANONYMOUS (no client certificate; ssl.principal.mapping.rules may map names)";
  return "User:ANONYMOUS";
}

std::string ca_words(const SecuritySettings& sec) {
  return sec.ca_location.empty() ? "the system's CA store (ssl.ca.location is not set)"
                                 : "ssl.ca.location (" + sec.ca_location + ")";
}

std::string sasl_advice(std::string_view reason, const SecuritySettings& sec, const std::string& broker) {
  std::string out = "SASL authentication (" + sec.describe() + ") refused by " + broker;
  if (has(reason, "Unsupported SASL mechanism") || has(reason, "not enabled") || has(reason, "UNSUPPORTED_SASL")) {
    return out + ": the broker does not offer " + sec.mechanism +
           " on this listener: set sasl.mechanism to one the listener enables (its sasl.enabled.mechanisms)";
  }
  out += ": check sasl.username and sasl.password";
  if (sec.mechanism.starts_with("SCRAM")) {
    out += ", and that the user has " + sec.mechanism +
           " credentials on the cluster (kafka-configs --describe --entity-type users)";
    // librdkafka#4895: before 2.6.1 the client-final-message repeated the
    // client nonce; Kafka 3.8.1 tolerated it, 4.x compares strictly
    // (ScramSaslServer: clientFinalMessage.nonce().equals(serverFirstMessage.nonce())).
    if (rd_kafka_version() < 0x020601ff)
      out += std::string("; note: this librdkafka (") + rd_kafka_version_str() +
             ") cannot authenticate with SCRAM to Kafka 4.x brokers even with the right password "
             "(librdkafka#4895, fixed in 2.6.1): use a newer librdkafka, or SASL PLAIN over TLS, or mTLS";
  } else if (sec.mechanism == "GSSAPI") {
    out += " (GSSAPI: sasl.kerberos.principal, sasl.kerberos.keytab, sasl.kerberos.service.name and the KDC in "
           "/etc/krb5.conf)";
  }
  return out;
}

std::string tls_alert_advice(const SecuritySettings& sec, const std::string& broker) {
  std::string out = "TLS: " + broker + " rejected the client";
  if (sec.cert_location.empty() && !sec.cert_pem_inline)
    return out + ": the listener requires a client certificate (ssl.client.auth=required) and none is configured: "
                 "set ssl.certificate.location and ssl.key.location";
  auto c = read_cert(sec.cert_location);
  if (c && c->expired > 0)
    return out + " certificate: ssl.certificate.location (" + sec.cert_location + ", " + c->subject +
           ") expired on " + c->not_after + ": renew it";
  if (c && c->expired < 0)
    return out + " certificate: ssl.certificate.location (" + sec.cert_location + ", " + c->subject +
           ") is not valid before " + c->not_before + ": check the clocks or the certificate";
  return out + " certificate" +
         (c ? " (" + sec.cert_location + ", " + c->subject + ", valid until " + c->not_after + ")" : std::string()) +
         ": the broker's truststore does not trust its issuer: have it signed by a CA in the broker's "
         "ssl.truststore";
}

}  // namespace

ErrorClass classify(rd_kafka_resp_err_t err, std::string_view reason) {
  if (is_security_failure(err, reason)) return ErrorClass::Fatal;
  return classify(err);
}

bool is_security_failure(rd_kafka_resp_err_t err, std::string_view reason) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
    case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return true;
    case RD_KAFKA_RESP_ERR__TRANSPORT:
      return broker_alert(reason);
    default:
      return false;
  }
}

SecuritySettings SecuritySettings::of(const std::map<std::string, std::string>& props) {
  auto get = [&](const char* k) {
    auto it = props.find(k);
    return it == props.end() ? std::string() : it->second;
  };
  SecuritySettings s;
  s.bootstrap = get("bootstrap.servers");
  s.protocol = lower(get("security.protocol"));
  if (s.protocol.empty()) s.protocol = "plaintext";
  s.mechanism = upper(get("sasl.mechanisms"));
  if (s.mechanism.empty()) s.mechanism = upper(get("sasl.mechanism"));
  if (s.mechanism.empty()) s.mechanism = "GSSAPI";
  s.ca_location = get("ssl.ca.location");
  s.cert_location = get("ssl.certificate.location");
  s.cert_pem_inline = props.count("ssl.certificate.pem") != 0 || props.count("ssl.keystore.location") != 0;
  s.group = get("group.id");
  return s;
}

std::string SecuritySettings::describe() const {
  if (sasl()) return upper(protocol) + "/" + mechanism;
  if (tls()) return (cert_location.empty() && !cert_pem_inline) ? "SSL (TLS)" : "SSL (TLS with a client certificate)";
  return upper(protocol);
}

std::string explain(rd_kafka_resp_err_t err, std::string_view reason, const SecuritySettings& sec,
                    const ErrorContext& ctx) {
  if (!is_security_failure(err, reason)) return {};
  const std::string broker = broker_of(reason, sec);
  switch (err) {
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
    case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
      // librdkafka also reports a TLS failure during a SASL_SSL connection's
      // handshake as _SSL, so _AUTHENTICATION means SASL here.
      return sasl_advice(reason, sec, broker);
    case RD_KAFKA_RESP_ERR__SSL:
      if (has(reason, "certificate verify failed") || has(reason, "could not be verified"))
        return sec.describe() + ": the certificate of " + broker + " is not trusted by " + ca_words(sec) +
               ", or does not name the address connected to: set ssl.ca.location to the CA that issued the "
               "broker's certificate (ssl.endpoint.identification.algorithm=none skips only the name check)";
      if (broker_alert(reason)) return tls_alert_advice(sec, broker);
      return sec.describe() + ": the TLS handshake with " + broker +
             " failed: check that the listener speaks TLS (security.protocol) and ssl.* settings";
    case RD_KAFKA_RESP_ERR__TRANSPORT:
      return tls_alert_advice(sec, broker);
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
      return "authorization (ACL, " + sec.describe() + ", " + broker + "): " + principal(sec) +
             " may not read " + (ctx.topic.empty() ? std::string("a subscribed topic") : "topic " + ctx.topic) +
             ": grant it READ and DESCRIBE on " +
             (ctx.topic.empty() ? std::string("every subscribed topic") : "topic " + ctx.topic) +
             " (kafka-acls --add --allow-principal ... --operation Read --topic ...)";
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
      return "authorization (ACL, " + sec.describe() + ", " + broker + "): " + principal(sec) +
             " may not use consumer group " + (sec.group.empty() ? std::string("(group.id)") : sec.group) +
             ": grant READ on group " + sec.group + " (kafka-acls --add --allow-principal ... --operation Read --group " +
             sec.group + ")";
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return "authorization (ACL, " + sec.describe() + ", " + broker + "): " + principal(sec) +
             " lacks a cluster permission the request needs (e.g. IDEMPOTENT_WRITE for the dead-letter producer)";
    default:
      return {};
  }
}

Error make_error(rd_kafka_resp_err_t err, const std::string& what, ErrorContext ctx, const SecuritySettings* sec) {
  std::string text = "Kafka: " + what + ": " + rd_kafka_err2name(err) + ": " + rd_kafka_err2str(err);
  if (sec != nullptr) {
    if (std::string why = explain(err, what, *sec, ctx); !why.empty())
      return Error(Disposition::Fatal, "Kafka " + why + " (librdkafka: " + what + ": " + rd_kafka_err2name(err) + ")",
                   std::move(ctx));
  }
  Disposition d = classify(err, what) == ErrorClass::Fatal ? Disposition::Fatal : Disposition::Retry;
  return Error(d, std::move(text), std::move(ctx));
}

}  // namespace cdc2doris::kafka
