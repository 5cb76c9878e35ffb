#pragma once
// Result<T>: how user-caused failures (bad file, bad request, model mismatch) travel across module
// boundaries. Broken internal invariants are not results: they are KOTAE_ASSERTs (see assert.h).

#include <string>
#include <utility>
#include <variant>

namespace kotae {

enum class ErrorCode {
  invalid_argument,  // the caller asked for something malformed
  not_found,         // a file, model or collection that does not exist
  already_exists,    // creating something whose name is taken
  io,                // the operating system refused (permissions, disk full)
  corrupt,           // data that exists but fails a checksum or a format check
  model,             // a model that cannot be loaded or run
  unsupported,       // a valid request for something this build cannot do
  overloaded,        // a bounded queue is full; retry later
  stopped,           // long work ended early: cancelled, or past its time budget
  unavailable,       // a service Kotae depends on (the shared database) cannot be reached; retry later
  internal,          // a third-party library failed unexpectedly
};

const char* to_string(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_{ErrorCode::internal, {}};
  bool ok_ = true;
};

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace kotae

#define KOTAE_CONCAT_(a, b) a##b
#define KOTAE_CONCAT(a, b) KOTAE_CONCAT_(a, b)

// Returns a failed Result's error from the enclosing function (which returns a Result).
#define KOTAE_TRY(expr) KOTAE_TRY_(expr, KOTAE_CONCAT(kotae_try_, __COUNTER__))
#define KOTAE_TRY_(expr, name)                          \
  do {                                                  \
    if (auto name = (expr); !name) return name.error(); \
  } while (0)

// The value of a Result, or its error returned from the enclosing function (a GCC and Clang statement
// expression: `bool row = KOTAE_TRY_VALUE(statement.step());`). Nests: each use names its own temporary.
#define KOTAE_TRY_VALUE(expr) KOTAE_TRY_VALUE_(expr, KOTAE_CONCAT(kotae_try_, __COUNTER__))
#define KOTAE_TRY_VALUE_(expr, name) \
  __extension__({                    \
    auto name = (expr);              \
    if (!name) return name.error();  \
    std::move(*name);                \
  })
