#pragma once
// An environment variable set for an object's life, the process's own setting (or its absence)
// restored after: for the run-time A/B switches the kernels read (ADI_FUSED_YZ_LEAN,
// ADI_STENCIL_LEAN, ...), so that a test can run one form whatever the process was started with.
#include <cstdlib>
#include <string>

namespace adi::test {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* v = std::getenv(name)) before_ = v, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), before_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, before_;
  bool had_ = false;
};

}  // namespace adi::test
