#pragma once
// What every example program shares at its command line (README "Exit codes"):
//   0  ok
//   1  run-time failure or failed check (a NaN/Inf in a result, --max-error exceeded,
//      a singular system, a file that cannot be written)
//   2  usage error (a bad option or combination; found before any work)
//   77 no GPU for a GPU-only request (--backend cuda, --memory device); 77 is CTest's
//      usual SKIP_RETURN_CODE
// plus number checks that name the option, reject NaN/Inf and print numbers with %g, and
// one place that turns exceptions into one-line messages and those codes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "adi/error.hpp"
#include "adi/executor.hpp"

namespace example {

enum Exit : int { exit_ok = 0, exit_failure = 1, exit_usage = 2, exit_no_gpu = 77 };

// A bad option or combination found after parsing (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A result that cannot be trusted: NaN/Inf, a failed --max-error or --min-order check (exit 1).
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A GPU-only request on a machine or build without a usable GPU (exit 77).
struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A number as %g, for messages.
inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Value is the whole of s as a number (strtod: also "nan", "inf"); false otherwise.
inline bool parse_real(const std::string& s, double& v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

namespace detail {
inline std::string real_check(const std::string& s, double lo, double hi, bool lo_open, bool hi_open) {
  // Messages quote what was typed: %g would print -1.0000001 as -1, the bound itself.
  double v = 0;
  if (!parse_real(s, v)) return "'" + s + "' is not a number";
  if (!std::isfinite(v)) return s + " is not a finite number";
  const bool lo_ok = lo_open ? v > lo : v >= lo, hi_ok = hi_open ? v < hi : v <= hi;
  if (lo_ok && hi_ok) return {};
  const double big = std::numeric_limits<double>::max();
  if (hi == big) return s + (lo_open ? " must be > " : " must be >= ") + num(lo);
  return s + " is not in " + (lo_open ? "(" : "[") + num(lo) + ", " + num(hi) + (hi_open ? ")" : "]");
}
}  // namespace detail

// CLI11 checks for floating-point options. All reject NaN and Inf; CLI11 prefixes the option's name.
inline CLI::Validator finite() {
  return {[](std::string& s) { return detail::real_check(s, -std::numeric_limits<double>::max(),
                                                          std::numeric_limits<double>::max(), false, false); },
          "FINITE", "finite"};
}
inline CLI::Validator positive() {
  return {[](std::string& s) { return detail::real_check(s, 0, std::numeric_limits<double>::max(), true, false); },
          "> 0", "positive"};
}
inline CLI::Validator non_negative() {
  return {[](std::string& s) { return detail::real_check(s, 0, std::numeric_limits<double>::max(), false, false); },
          ">= 0", "non_negative"};
}
// lo <= v <= hi; open_lo: lo < v.
inline CLI::Validator range(double lo, double hi, bool open_lo = false) {
  const std::string desc = (open_lo ? "(" : "[") + num(lo) + ", " + num(hi) + "]";
  return {[=](std::string& s) { return detail::real_check(s, lo, hi, open_lo, false); }, desc, "range"};
}

// An integer option in [lo, hi]: "abc" and "1e3" are named as not integers.
inline CLI::Validator integer(long long lo, long long hi) {
  const std::string desc = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return {[=](std::string& s) -> std::string {
            errno = 0;
            char* end = nullptr;
            const long long v = std::strtoll(s.c_str(), &end, 10);
            if (s.empty() || end != s.c_str() + s.size()) {
              double d = 0;
              if (parse_real(s, d) && std::isfinite(d) && d == std::floor(d) && std::abs(d) < 1e18)
                return "'" + s + "' is not an integer (write it as " + std::to_string((long long)d) + ")";
              return "'" + s + "' is not an integer";
            }
            if (errno == ERANGE || v < lo || v > hi)
              return s + " is not in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
            return {};
          },
          desc, "integer"};
}

// Parses the command line. Returns the exit code when the program should stop now: 0
// after --help (printed), 2 after a bad command line (one line on stderr, if `speak`).
inline std::optional<int> parse(CLI::App& app, const char* prog, int argc, char** argv, bool speak = true) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help
      if (speak) app.exit(e);
      return exit_ok;
    }
    if (speak) std::fprintf(stderr, "%s: error: %s (see --help)\n", prog, e.what());
    return exit_usage;
  }
}

// Fails with exit 2 unless `cond`: for combinations of options.
inline void require(bool cond, const std::string& message) {
  if (!cond) throw UsageError(message);
}

// The executor of --backend cuda, or NoGpu saying what to use instead (`instead`, e.g.
// "--backend cpu"). Call it before any work.
inline adi::Executor cuda_executor(const std::string& instead) {
  try {
    return adi::Executor::cuda();
  } catch (const adi::Unsupported& e) {
    const std::string what = e.what();
    throw NoGpu(what.find("without CUDA") != std::string::npos
                    ? "this build has no CUDA (rebuild with -DADI_WITH_CUDA=ON): use " + instead
                    : "no CUDA device: use " + instead);
  }
}

// Creates the --output folder (and checks that a file can be written there) before any
// work, so that a bad folder fails at once (exit 2), not after the run.
inline void prepare_output(const std::string& dir, const std::string& option = "--output") {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError(option + " " + dir + ": cannot create that folder (" + ec.message() + ")");
  const std::string probe = dir + "/.write_test";
  const bool ok = bool(std::ofstream(probe));
  std::filesystem::remove(probe, ec);
  if (!ok) throw UsageError(option + " " + dir + ": cannot write files in that folder");
}

// Fails with exit 2 when a problem cannot fit in this machine's memory: `bytes` is the
// program's estimate, `what` names the options that set it ("--n 4096"). Catches the
// sizes that would otherwise surface as an allocation failure deep in the library.
inline void require_memory(double bytes, const std::string& what) {
  const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (have > 0 && !(bytes <= have))
    throw UsageError(what + " needs about " + num(bytes / 1e9) + " GB; this machine has " + num(have / 1e9) + " GB");
}

// RunFailure "QUANTITY is NaN|Inf WHERE" unless v is finite.
inline void require_finite(double v, const std::string& quantity, const std::string& where) {
  if (!std::isfinite(v))
    throw RunFailure(quantity + " is " + (std::isnan(v) ? "NaN" : "Inf") + " " + where +
                     " (the run diverged or overflowed: try a smaller time step)");
}
// RunFailure "QUANTITY has N non-finite values WHERE" unless every value is finite.
template <class Range>
void require_all_finite(const Range& values, const std::string& quantity, const std::string& where,
                        const std::string& hint = "the run diverged or overflowed: try a smaller time step") {
  std::size_t bad = 0, total = 0;
  for (const auto& v : values) {
    bad += std::isfinite(double(v)) ? 0 : 1;
    ++total;
  }
  if (bad)
    throw RunFailure(quantity + " has " + std::to_string(bad) + " NaN/Inf value(s) of " + std::to_string(total) + " " +
                     where + " (" + hint + ")");
}
// A --max-error style check that also fails on NaN (std::max drops NaN; !(x <= b) does not).
inline bool exceeds(double value, double bound) { return !(value <= bound); }

// Steps, step size and end time of a run.
struct TimeSteps {
  long steps = 0;
  double dt = 0, t_end = 0;
};
// Any two of --steps, the step size and --t-end fix the third (0: not given). A missing end
// time is t_default; with neither steps nor a step size, steps_default steps. dt > 0 with
// dt_option empty is a default step size (e.g. from a CFL number): it never conflicts.
// When the end time is not a whole number of --dt steps, dt is shortened to land on it and
// the program says so in one line on stderr (unless prog is null: the MPI ranks other than 0).
inline TimeSteps resolve_time(const char* prog, long steps, double dt, const std::string& dt_option, double t_end,
                              double t_default, long steps_default) {
  const bool user_dt = dt > 0 && !dt_option.empty();
  if (steps > 0 && user_dt && t_end > 0)
    throw UsageError("give at most two of --steps, " + dt_option + ", --t-end (any two fix the third)");
  TimeSteps r;
  if (steps > 0) {
    r.steps = steps;
    if (t_end > 0 || dt <= 0) {
      r.t_end = t_end > 0 ? t_end : t_default;
      r.dt = r.t_end / double(steps);
    } else {
      r.dt = dt;
      r.t_end = dt * double(steps);
    }
  } else {
    r.t_end = t_end > 0 ? t_end : t_default;
    if (dt > 0) {
      const double n = std::ceil(r.t_end / dt - 1e-9);
      if (!(n <= 1e12))
        throw UsageError("--t-end " + num(r.t_end) + " / " + (user_dt ? dt_option + " " : "dt ") + num(dt) + " is " +
                         num(r.t_end / dt) + " steps (at most 1e12)");
      r.steps = std::max(1L, long(n));
      r.dt = r.t_end / double(r.steps);
      if (prog && dt_option == "--dt" && std::abs(r.dt - dt) > 1e-9 * dt)
        std::fprintf(stderr, "%s: note: --t-end %g is not a whole number of --dt %g steps: %ld steps of dt = %g\n",
                     prog, r.t_end, dt, r.steps, r.dt);
      else if (prog && !dt_option.empty() && dt_option != "--dt" && r.dt < 0.99 * dt)  // a CFL step: 1% is news
        std::fprintf(stderr, "%s: note: dt = %g from %s is shortened to %g (%ld steps) to land on --t-end %g\n", prog,
                     dt, dt_option.c_str(), r.dt, r.steps, r.t_end);
    } else {
      r.steps = steps_default;
      r.dt = r.t_end / double(steps_default);
    }
  }
  if (!(std::isfinite(r.t_end) && std::isfinite(r.dt) && r.dt > 0))
    throw UsageError("--steps " + std::to_string(r.steps) + " with dt = " + num(r.dt) + " gives t-end = " +
                     num(r.t_end) + ": not a finite time");
  return r;
}

// The exit code of the convention above for an exception, and the one line to print.
inline int exit_code(const std::exception& e, std::string& message) {
  message = e.what();
  if (dynamic_cast<const adi::Error*>(&e)) {
    // The library names its API ("BoundaryConditions: ...", "AdiSolver::step: ..."); the
    // person at the command line wants the substance.
    std::size_t i = 0;
    while (i < message.size() && (std::isalnum(static_cast<unsigned char>(message[i])) || message[i] == '_' ||
                                  message[i] == ':'))
      ++i;
    if (i > 0 && i + 1 < message.size() && message.compare(i - 1, 2, ": ") == 0 && message[i - 1] == ':')
      message = message.substr(i + 1);
  }
  if (dynamic_cast<const NoGpu*>(&e)) return exit_no_gpu;
  if (dynamic_cast<const UsageError*>(&e)) return exit_usage;
  if (dynamic_cast<const adi::InvalidArgument*>(&e)) return exit_usage;  // options the library refuses
  if (dynamic_cast<const adi::Unsupported*>(&e)) {
    if (message.find("without CUDA") != std::string::npos) {
      message = "this build has no CUDA: run on the CPU (--backend cpu)";
      return exit_no_gpu;
    }
    if (message.find("no CUDA device") != std::string::npos) {
      message = "no CUDA device: run on the CPU (--backend cpu)";
      return exit_no_gpu;
    }
    return exit_usage;
  }
  if (dynamic_cast<const std::bad_alloc*>(&e)) message = "out of memory (try a smaller problem)";
  return exit_failure;  // RunFailure, a singular system, a device error, a file not written
}

// Whether every rank of an MPI program throws e alike (the library agrees on its errors;
// the programs' checks use global values): else the program must abort all ranks.
inline bool agreed(const std::exception& e) {
  return dynamic_cast<const adi::Error*>(&e) || dynamic_cast<const UsageError*>(&e) ||
         dynamic_cast<const RunFailure*>(&e) || dynamic_cast<const NoGpu*>(&e);
}

// Runs body() and turns what it throws into one line on stderr ("PROG: error: ...", if
// `speak`) and the exit code of the convention above.
template <class F>
int guarded(const char* prog, F&& body, bool speak = true) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::string message;
    const int rc = exit_code(e, message);
    if (speak) std::fprintf(stderr, "%s: error: %s\n", prog, message.c_str());
    return rc;
  }
}

}  // namespace example
