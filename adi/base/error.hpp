#pragma once
// Errors thrown at the public boundary. Messages name the argument, the value
// and what is accepted, so the caller knows what to change.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace adi {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A wrong size, stride, pointer, name or option.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A zero (or non-finite) pivot met while factorising: the system is singular
// or too far from diagonal dominance for a solver without pivoting. Carries which
// system (line, neuron, matrix) and which row failed where the solver knows them
// (-1 where it does not), so that callers need not parse the message.
class SingularSystem : public Error {
 public:
  explicit SingularSystem(const std::string& what, std::int64_t system = -1, std::int64_t row = -1)
      : Error(what), system_(system), row_(row) {}
  std::int64_t system() const { return system_; }
  std::int64_t row() const { return row_; }

 private:
  std::int64_t system_;
  std::int64_t row_;
};

// Thomas without pivoting would return a wrong answer: a row failed the growth check of
// solvers/common/thomas_check.hpp (the system is not diagonally dominant enough, though it
// may be well conditioned). A SingularSystem, so existing handlers still catch it; the
// message names the option to change (pivoting = automatic or partial). Also thrown by
// AdiSolver::advance where its steps turned finite values into NaN or Inf (an overflow no
// pivot check sees): the message names the node, the steps and what to change.
class UnstableSystem : public SingularSystem {
 public:
  using SingularSystem::SingularSystem;
};

// The requested backend (CUDA, VTK, MPI) is not compiled in or not present.
class Unsupported : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime or library call failed.
class DeviceError : public Error {
 public:
  using Error::Error;
};

namespace detail {
// A number for a message: the shortest text that reads back as the same double
// (-1.0000001 stays -1.0000001, 1e308 stays 1e+308), never std::to_string's fixed six
// decimals or a 310-digit expansion.
inline std::string number(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
inline std::string number(float v) { return number(double(v)); }
template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
std::string number(I v) {
  return std::to_string(v);
}

// Throws InvalidArgument when an array of `have` values is shorter than the `need` a layout
// reaches (the size-checked solve overloads: `who` names the call, `name` the argument).
inline void require_length(std::size_t have, std::int64_t need, const char* who, const char* name) {
  if (need > 0 && have < static_cast<std::size_t>(need))
    throw InvalidArgument(std::string(who) + ": array " + name + " holds " + std::to_string(have) +
                          " values but the layout reaches " + std::to_string(need) + "; pass an array of at least " +
                          std::to_string(need) + " values or a smaller layout");
}

// Throws InvalidArgument(message) when cond is false.
inline void require(bool cond, const std::string& message) {
  if (!cond) throw InvalidArgument(message);
}
}  // namespace detail

}  // namespace adi
