// Built without extra -m flags: it runs before any code of the decoder's
// files (those including detail/decoder_impl.hpp), which are compiled for AVX2
// because simdjson 3.0.1 compiles its On-Demand parser only for the build's
// baseline ISA (x86-64 baseline = the slow fallback).
#include <stdexcept>

#include "core/decode/decoder.hpp"
#include "core/decode/row_check.hpp"

namespace cdc2doris::decode {
namespace {
std::nullptr_t require_cpu() {
#if defined(CDC2DORIS_DECODE_HASWELL) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("bmi") || !__builtin_cpu_supports("pclmul"))
    throw std::runtime_error(
        "this build of the decoder needs an x86-64 CPU with AVX2/BMI/PCLMUL; rebuild with -DCDC2DORIS_DECODE_HASWELL=OFF");
#endif
  return nullptr;
}
}  // namespace

Decoder::Decoder(DecoderOptions options) : impl_((require_cpu(), make_impl(std::move(options)))) {}

RowCheck::RowCheck(std::vector<ColumnLimit> columns) : impl_((require_cpu(), make_impl(std::move(columns)))) {}

}  // namespace cdc2doris::decode
