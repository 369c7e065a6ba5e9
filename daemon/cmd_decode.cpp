// `cdc2doris decode`: Debezium JSON lines from stdin through the decoder (a
// dry run); with --config the same decoding, routing and bad-record settings
// as `run`. The option parsing is decode_cli's own.
#include <iostream>
#include <memory>
#include <optional>

#include "core/decode/decode_cli.hpp"
#include "core/pipeline/table_routing.hpp"
#include "daemon/commands.hpp"

namespace cdc2doris::daemon {

int cmd_decode(const Args& a) {
  decode::DecodeCommandOptions base;
  // `--config FILE`: the same decoding, routing and bad-record settings as `run`.
  base.load_config = [](const std::string& path, decode::DecodeCommandOptions& o) -> std::optional<std::string> {
    std::shared_ptr<config::Config> cfg;
    try {
      cfg = std::make_shared<config::Config>(config::load_file(path));
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    o.decoder = cfg->decoding;
    o.policy = cfg->delivery.bad_record_policy;
    if (!cfg->delivery.dead_letter_topic.empty()) o.dead_letter_topic = cfg->delivery.dead_letter_topic;
    std::shared_ptr<pipeline::Router> router = config::make_router(*cfg);
    // Kept alive by o.decode's capture (the router reads cfg).
    auto routing = std::make_shared<pipeline::TableRouting>(*router);
    o.decode = [cfg, router, routing](decode::Decoder& d, const decode::KafkaRecord& rec, decode::Change& c,
                                      std::string& target) -> std::optional<decode::DecodeError> {
      const pipeline::RoutedTable* routed = nullptr;
      auto e = pipeline::decode_routed(d, *routing, rec, c, routed);
      target = routed == nullptr || routed->target == nullptr ? std::string("(excluded by routing)") : routed->target->name();
      return e;
    };
    return std::nullopt;
  };
  return decode::run_decode_command(a.raw, std::cin, std::cout, std::cerr, std::move(base));
}

}  // namespace cdc2doris::daemon
