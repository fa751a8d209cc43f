// Errors are values: lower layers return Result<T>; only cli/ formats them and picks exit codes.
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace trilemma {

// What kind of failure, which decides the exit code in cli/exit_codes.cpp.
enum class ErrorKind {
  usage,       // bad flags or arguments
  input,       // a file or value the user gave is malformed, unknown or hostile
  infeasible,  // constraints that no configuration satisfies
  io,          // the file system refused (missing file, cannot write)
  memory,      // the machine ran out of memory (allocation failed)
  internal,    // a bug: an invariant broke
};

struct Error {
  ErrorKind kind = ErrorKind::input;
  std::string file;     // the file (or "--flag") the problem is in; may be empty
  std::string where;    // line:column, field path or byte offset; may be empty
  std::string message;  // what is wrong, and what was expected

  // "file:where: message", leaving out empty parts.
  std::string to_string() const;
};

Error make_error(ErrorKind kind, std::string file, std::string where, std::string message);

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_value(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : m_value(std::move(error)) {}  // NOLINT

  bool ok() const { return m_value.index() == 0; }
  explicit operator bool() const { return ok(); }
  // REQUIRES: ok()
  T& value() & { return std::get<0>(m_value); }
  const T& value() const& { return std::get<0>(m_value); }
  T&& value() && { return std::get<0>(std::move(m_value)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  // REQUIRES: !ok()
  const Error& error() const { return std::get<1>(m_value); }

 private:
  std::variant<T, Error> m_value;
};

// For functions that only succeed or fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace trilemma

// Propagate an error from an expression returning Result<...>.
#define TRILEMMA_TRY(var, expr)                    \
  auto var##_result = (expr);                      \
  if (!var##_result.ok()) return var##_result.error(); \
  auto var = std::move(var##_result).value()
