#pragma once
// Switches of the environment over an option or a default, read strictly: unset or empty keeps
// the fallback, "1" is on, "0" is off, any other value is an InvalidArgument naming the
// variable (so that ADI_SPIKE_HALF=off cannot silently mean on).
#include <cstdlib>
#include <cstring>
#include <string>

#include "adi/error.hpp"

namespace adi::detail {

inline bool env_switch(const char* name, bool fallback) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  if (std::strcmp(e, "1") == 0) return true;
  if (std::strcmp(e, "0") == 0) return false;
  throw InvalidArgument(std::string("environment variable ") + name + " = '" + e +
                        "': use 1 (on) or 0 (off), or unset it for the default");
}

}  // namespace adi::detail
