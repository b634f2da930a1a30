#pragma once
// The one reader of the library's environment switches (measurement and A/B switches of adi/ and
// solvers/: ADI_SPIKE_*, ADI_BOUNDARY_REUSE, ADI_FIELD_ROW_ALIGN, the CUDA form switches
// ADI_PCR_*, ADI_FOLD_X_RING*, ADI_PIVOTING_*, ...; docs/design.md "Environment switches").
// Read strictly: unset or empty keeps the fallback (the option's value or the default); a value
// outside the accepted set is an InvalidArgument naming the variable, the value and the accepted
// values (so that ADI_SPIKE_HALF=off cannot silently mean on, nor ADI_FOLD_X_RING=3 silently off).
// In adi/base/ (header-only, C++17) so that solvers/ reads its switches through it too. Each caller
// decides when it reads (once per process, per plan, or per launch where tests set a switch
// around a solve); these functions only parse.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "adi/base/error.hpp"

namespace adi::detail {

// The variable's value, or nullptr where it is unset or empty.
inline const char* env_value(const char* name) {
  const char* e = std::getenv(name);
  return e != nullptr && *e != '\0' ? e : nullptr;
}

[[noreturn]] inline void env_refuse(const char* name, const char* value, const std::string& accepted) {
  throw InvalidArgument(std::string("environment variable ") + name + " = '" + value + "': use " + accepted +
                        ", or unset it for the default");
}

// An on / off switch: "1" on, "0" off.
inline bool env_switch(const char* name, bool fallback) {
  const char* e = env_value(name);
  if (e == nullptr) return fallback;
  if (std::strcmp(e, "1") == 0) return true;
  if (std::strcmp(e, "0") == 0) return false;
  env_refuse(name, e, "1 (on) or 0 (off)");
}

// One of `names` (exact, case-sensitive): its index in the list; unset or empty: fallback.
inline int env_choice(const char* name, std::initializer_list<const char*> names, int fallback) {
  const char* e = env_value(name);
  if (e == nullptr) return fallback;
  int i = 0;
  for (const char* n : names) {
    if (std::strcmp(e, n) == 0) return i;
    ++i;
  }
  std::string accepted;  // (only on the way out: a switch read at each launch allocates nothing)
  i = 0;
  for (const char* n : names) {
    accepted += (i == 0 ? "" : i + 1 == static_cast<int>(names.size()) ? " or " : ", ") + std::string(n);
    ++i;
  }
  env_refuse(name, e, accepted);
}

// A decimal integer in lo .. hi (digits with an optional leading '-', nothing else);
// unset or empty: fallback (which need not lie in lo .. hi).
inline int env_int(const char* name, int lo, int hi, int fallback) {
  const char* e = env_value(name);
  if (e == nullptr) return fallback;
  const char* digits = e[0] == '-' ? e + 1 : e;
  bool ok = *digits != '\0';
  for (const char* p = digits; ok && *p != '\0'; ++p) ok = *p >= '0' && *p <= '9';
  if (ok) {
    errno = 0;
    const long v = std::strtol(e, nullptr, 10);
    if (errno == 0 && v >= lo && v <= hi) return static_cast<int>(v);
  }
  env_refuse(name, e, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
}

}  // namespace adi::detail
