#pragma once
// Errors thrown at the public boundary. Messages name the argument, the value
// and what is accepted, so the caller knows what to change.
#include <stdexcept>
#include <string>

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
// or too far from diagonal dominance for a solver without pivoting.
class SingularSystem : public Error {
 public:
  using Error::Error;
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
// Throws InvalidArgument(message) when cond is false.
inline void require(bool cond, const std::string& message) {
  if (!cond) throw InvalidArgument(message);
}
}  // namespace detail

}  // namespace adi
