#include "core/doris/gzip.hpp"

#include <stdexcept>
#include <zlib.h>

namespace cdc2doris::doris {

struct GzipEncoder::State {
  z_stream z{};
};

GzipEncoder::GzipEncoder(int level) : s_(std::make_unique<State>()) {
  // windowBits 15+16 = gzip wrapper; memLevel 8 is zlib's default (~256 KiB of
  // state, allocated only for tables whose loads use gzip).
  if (deflateInit2(&s_->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
}

GzipEncoder::~GzipEncoder() { deflateEnd(&s_->z); }

namespace {
void pump(z_stream& z, std::string& out, int flush) {
  for (;;) {
    size_t avail = deflateBound(&z, z.avail_in) + 64;
    size_t old = out.size();
    out.resize(old + avail);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    z.avail_out = static_cast<uInt>(avail);
    int rc = deflate(&z, flush);
    out.resize(old + (avail - z.avail_out));
    if (rc == Z_STREAM_END) return;
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::runtime_error("deflate failed");
    if (z.avail_in == 0 && z.avail_out != 0) return;
  }
}
}  // namespace

void GzipEncoder::write(std::string_view in, std::string& out) {
  s_->z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s_->z.avail_in = static_cast<uInt>(in.size());
  pump(s_->z, out, Z_NO_FLUSH);
}

void GzipEncoder::finish(std::string& out) {
  s_->z.next_in = nullptr;
  s_->z.avail_in = 0;
  pump(s_->z, out, Z_FINISH);
}

std::optional<std::string> gunzip(std::string_view in, size_t max_out) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return std::nullopt;  // +32: gzip or zlib header
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (out.size() >= max_out) {
      inflateEnd(&z);
      return std::nullopt;
    }
    size_t old = out.size();
    out.resize(old + 16384);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    z.avail_out = 16384;
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(old + (16384 - z.avail_out));
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      return std::nullopt;
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {  // truncated input
      inflateEnd(&z);
      return std::nullopt;
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace cdc2doris::doris
