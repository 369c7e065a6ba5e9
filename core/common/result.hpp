#pragma once
// Result<T, E>: a value or an error, shaped like C++23's std::expected
// (has_value, operator bool, value, error, operator*, operator->), so that
// moving to std::expected is a rename plus std::unexpected at the error
// returns. Unlike std::expected an error converts implicitly: `return err;`
// reads as the code it replaces (std::variant<T, E>); a T must not convert
// to an E, so which one `return x;` builds is never in doubt.
// Result<void, E> is the outcome of an operation with no value: success, or
// the error.
//
// Why not Boost.Outcome's result<T, E>: with an E that is no error_code nor
// exception_ptr it needs an explicit no-value policy spelled at every use,
// observers such as value() on the error state are policy-dependent rather
// than "terminate", it brings a large header tree into every file that
// names a Doris call, and its compile errors run through basic_result's
// policy layers. This is the part of it the project uses.
#include <cstdlib>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/common/error.hpp"

namespace cdc2doris {

template <class T, class E = Error>
class [[nodiscard]] Result {
  static_assert(!std::is_convertible_v<T, E>, "a T must not convert to an E: `return t;` would be ambiguous");

 public:
  using value_type = T;
  using error_type = E;

  // A value-initialised T, as std::expected (Asio's co_spawn needs it).
  Result()
    requires std::is_default_constructible_v<T>
      : v_(std::in_place_index<0>) {}
  template <class U = T>
    requires(std::is_constructible_v<T, U &&> && !std::is_same_v<std::remove_cvref_t<U>, Result> &&
             !std::is_convertible_v<U &&, E>)
  Result(U&& v) : v_(std::in_place_index<0>, std::forward<U>(v)) {}
  Result(E e) : v_(std::in_place_index<1>, std::move(e)) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  // Reading the value of an error (or the error of a value) is a bug: it
  // aborts, like a failed assertion, in every build.
  T& value() & { return *get<0>(); }
  const T& value() const& { return *get<0>(); }
  T&& value() && { return std::move(*get<0>()); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*get<0>()); }
  T* operator->() { return get<0>(); }
  const T* operator->() const { return get<0>(); }

  E& error() & { return *get<1>(); }
  const E& error() const& { return *get<1>(); }
  E&& error() && { return std::move(*get<1>()); }

 private:
  template <size_t I>
  auto* get() {
    auto* p = std::get_if<I>(&v_);
    if (p == nullptr) std::abort();
    return p;
  }
  template <size_t I>
  const auto* get() const {
    const auto* p = std::get_if<I>(&v_);
    if (p == nullptr) std::abort();
    return p;
  }

  std::variant<T, E> v_;
};

template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  using value_type = void;
  using error_type = E;

  Result() = default;
  Result(E e) : e_(std::move(e)) {}

  bool has_value() const { return !e_.has_value(); }
  explicit operator bool() const { return has_value(); }

  E& error() & { return checked(); }
  const E& error() const& { return const_cast<Result*>(this)->checked(); }
  E&& error() && { return std::move(checked()); }

 private:
  E& checked() {
    if (!e_) std::abort();
    return *e_;
  }

  std::optional<E> e_;
};

}  // namespace cdc2doris
