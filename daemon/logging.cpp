#include "daemon/logging.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "core/common/redact.hpp"

namespace cdc2doris::daemon {

namespace {

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

class StderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit StderrSink(bool json) : json_(json) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string text = redact_secrets(std::string_view(msg.payload.data(), msg.payload.size()));
    auto t = std::chrono::system_clock::to_time_t(msg.time);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char ts[96];
    std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    const auto level = spdlog::level::to_string_view(msg.level);
    std::string line;
    if (json_) {
      line = std::string("{\"ts\":\"") + ts + "\",\"level\":\"" + std::string(level.data(), level.size()) +
             "\",\"logger\":\"" + json_escape(std::string_view(msg.logger_name.data(), msg.logger_name.size())) +
             "\",\"msg\":\"" + json_escape(text) + "\"}\n";
    } else {
      line = std::string(ts) + " " + std::string(level.data(), level.size()) + " [" +
             std::string(msg.logger_name.data(), msg.logger_name.size()) + "] " + text + "\n";
    }
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  bool json_;
};

}  // namespace

void setup_logging(const std::string& level, const std::string& format) {
  auto sink = std::make_shared<StderrSink>(format == "json");
  auto logger = std::make_shared<spdlog::logger>("cdc2doris", sink);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace cdc2doris::daemon
