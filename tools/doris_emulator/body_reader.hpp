#pragma once
// Reads a stream-load body straight from the socket into one large buffer and
// hands out views of the payload, so each byte is copied once (kernel to
// buffer) and the load parses it in place. Beast's buffer_body parser copied
// every byte a second time and read at most 64 KiB per call, which capped a
// loopback load far below what the engine ingests. Content-Length and chunked
// bodies (chunk extensions and trailers skipped) are decoded here; bytes
// after the body go back into the session buffer for the next request.
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cdc2doris::emu {

class BodyReader {
 public:
  // `buf`: the session's buffer, holding what was read past the headers; the
  // reader takes it over and gives back what follows the body.
  BodyReader(boost::beast::tcp_stream& s, boost::beast::flat_buffer& buf, bool chunked, uint64_t content_length);

  bool done() const { return state_ == State::Done; }

  // Next piece of payload; empty when the body is complete (or on error,
  // then *error is set).
  boost::asio::awaitable<std::string_view> next(std::string* error);

 private:
  enum class State { Size, Data, DataEnd, Trailer, Done };
  static constexpr size_t kBuf = 256 << 10;

  // What is buffered of the current body part (at most its remaining
  // length), without copying; `then` is the state once the part is complete.
  std::string_view take_buffered(State then);
  void give_back();

  boost::beast::tcp_stream& s_;
  boost::beast::flat_buffer& buf_;
  bool chunked_;
  uint64_t left_;
  State state_ = State::Size;
  std::unique_ptr<char[]> rb_;
  size_t cap_ = 0, beg_ = 0, end_ = 0;
};

}  // namespace cdc2doris::emu
