#pragma once
// gzip for load bodies (compress_type: gz) and for answers a server sent
// with Content-Encoding: gzip. zlib directly: Boost.Iostreams' filters would
// add a copy per write and a stream object per table for no gain.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cdc2doris::doris {

class GzipEncoder {
 public:
  explicit GzipEncoder(int level);
  ~GzipEncoder();
  GzipEncoder(const GzipEncoder&) = delete;
  GzipEncoder& operator=(const GzipEncoder&) = delete;
  // Appends the compressed form of `in` to `out` (zlib may hold some back).
  void write(std::string_view in, std::string& out);
  // Flushes everything and writes the gzip trailer. The encoder is done after.
  void finish(std::string& out);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Decompresses a whole gzip (or zlib) document; nullopt if it is corrupt or
// expands beyond max_out bytes.
std::optional<std::string> gunzip(std::string_view in, size_t max_out = 64 << 20);

}  // namespace cdc2doris::doris
