#pragma once
// `cdc2doris decode`: a dry run of the decoder (issue 4 §8). Reads Debezium
// records from `in` and prints, per record, the target table, the op and the
// exact Doris row(s) the loader would send, or the error and what the
// configured policy would do with it.
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/decode/decoder.hpp"

namespace cdc2doris::decode {

struct DecodeCommandOptions {
  DecoderOptions decoder;
  BadRecordPolicy policy = BadRecordPolicy::Fail;
  std::string dead_letter_topic = "cdc2doris.dead_letter";
  bool framed = false;
  // Unframed input: every line is a record value on this topic with this key.
  std::string topic = "dbserver1.inventory.customers";
  std::optional<std::string> key;
  // Decodes one record; `target` gets the name of a change's or truncate's
  // target table. Default: Decoder::decode without a table context and
  // "{db}.{table}" (schema when db is empty). `--config` wires the
  // pipeline's own (identify, route once, convert with the target's settings).
  std::function<std::optional<DecodeError>(Decoder&, const KafkaRecord&, Change&, std::string& target)> decode;
  // Wired by the daemon: applies `--config FILE` (the same YAML as `run`) to
  // these options; returns an error message on failure. Flags given on the
  // command line are applied after the config.
  std::function<std::optional<std::string>(const std::string& path, DecodeCommandOptions&)> load_config;
};

// Returns the process exit code: 0, 1 when a record failed under the `fail`
// policy (decoding stops there, as `run` would), 2 for usage errors.
int run_decode_command(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                       DecodeCommandOptions base = {});

// Splits a framed line {"topic","partition","offset","key","value","headers"}
// without re-serialising: key/value are the exact bytes (a JSON string's
// content, or the raw text of an embedded object). Returns an error text.
struct FramedRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::string>> headers;
};
std::optional<std::string> parse_framed_line(std::string_view line, FramedRecord& out);

}  // namespace cdc2doris::decode
