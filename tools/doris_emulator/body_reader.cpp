#include "tools/doris_emulator/body_reader.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstring>

namespace cdc2doris::emu {

namespace net = boost::asio;
namespace beast = boost::beast;

namespace {
constexpr auto tuple_awaitable = net::as_tuple(net::use_awaitable);
}  // namespace

BodyReader::BodyReader(beast::tcp_stream& s, beast::flat_buffer& buf, bool chunked, uint64_t content_length)
    : s_(s), buf_(buf), chunked_(chunked), left_(content_length) {
  size_t have = buf.size();
  // Not zero-filled: hundreds of open loads that sent one row each must
  // not each touch the whole buffer.
  cap_ = std::max<size_t>(kBuf, have);
  rb_.reset(new char[cap_]);
  net::buffer_copy(net::buffer(rb_.get(), have), buf.data());
  buf.consume(have);
  end_ = have;
  if (!chunked_ && left_ == 0) state_ = State::Done;
}

net::awaitable<std::string_view> BodyReader::next(std::string* error) {
  for (;;) {
    if (state_ == State::Done) {
      give_back();
      co_return std::string_view();
    }
    if (!chunked_) {
      if (beg_ < end_) co_return take_buffered(State::Done);
    } else if (state_ == State::Data) {
      if (beg_ < end_) co_return take_buffered(State::DataEnd);
    } else {
      // Size line, CRLF after data, or trailer lines: need a whole line.
      const char* lb = rb_.get() + beg_;
      const char* nl = static_cast<const char*>(std::memchr(lb, '\n', end_ - beg_));
      if (nl) {
        std::string_view line(lb, static_cast<size_t>(nl - lb));
        beg_ += line.size() + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (state_ == State::DataEnd) {
          if (!line.empty()) {
            *error = "bad chunk";
            co_return std::string_view();
          }
          state_ = State::Size;
        } else if (state_ == State::Size) {
          uint64_t n = 0;
          size_t i = 0;
          for (; i < line.size(); ++i) {
            char c = line[i];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) break;
            if (n >> 60) {
              *error = "bad chunk";
              co_return std::string_view();
            }
            n = n * 16 + static_cast<uint64_t>(d);
          }
          if (i == 0 || (i < line.size() && line[i] != ';' && line[i] != ' ' && line[i] != '\t')) {
            *error = "bad chunk";
            co_return std::string_view();
          }
          if (n == 0) state_ = State::Trailer;
          else {
            left_ = n;
            state_ = State::Data;
          }
        } else if (line.empty()) {  // Trailer: an empty line ends the body
          state_ = State::Done;
        }
        continue;
      }
      if (end_ - beg_ > 64 * 1024) {
        *error = "chunk header too long";
        co_return std::string_view();
      }
    }
    // Need more bytes: keep an unfinished line, start over at the front.
    if (beg_ > 0) {
      std::memmove(rb_.get(), rb_.get() + beg_, end_ - beg_);
      end_ -= beg_;
      beg_ = 0;
    }
    auto [ec, n] = co_await s_.async_read_some(net::buffer(rb_.get() + end_, cap_ - end_), tuple_awaitable);
    if (ec) {
      *error = ec == net::error::eof ? std::string("partial message") : ec.message();
      co_return std::string_view();
    }
    end_ += n;
  }
}

std::string_view BodyReader::take_buffered(State then) {
  const auto n = static_cast<size_t>(std::min<uint64_t>(end_ - beg_, left_));
  std::string_view v(rb_.get() + beg_, n);
  beg_ += n;
  left_ -= n;
  if (left_ == 0) state_ = then;
  return v;
}

void BodyReader::give_back() {
  if (beg_ >= end_) return;
  size_t n = end_ - beg_;
  net::buffer_copy(buf_.prepare(n), net::buffer(rb_.get() + beg_, n));
  buf_.commit(n);
  beg_ = end_;
}

}  // namespace cdc2doris::emu
