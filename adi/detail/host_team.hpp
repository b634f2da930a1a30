#pragma once
// How many host threads a repeated piece of work runs on when the caller left the choice
// to adi (Executor::host() / threads = 0).
//
// Every processor is the right team on an idle machine and the wrong one on a busy one:
// OpenMP's static split waits for the slowest thread, and a thread that shares its core
// with another process is the slowest by the share it loses (measured on a 2-core VM with
// one core kept busy: heat3d 128^3, 48-71 ms per step on 2 threads against 37-46 on one).
// Neither the load average (it counts our own threads) nor the affinity mask sees that in
// time, so the plan measures instead: each plan (and each Operator's stencil passes) owns
// a TeamTuner that times its calls on a ladder of team sizes (all, half, ..., 1): it starts
// with every processor, climbs down the ladder while a smaller team is faster, times the
// next smaller team again when its choice becomes 30% slower for three calls running (load
// arrived), and re-times a neighbour now and then (one call in 64, backing off by the
// factor a neighbour lost by, to one in 65536) so that it also finds out when the load
// leaves. Tuners share what they learnt: one that has not finished its first timings
// starts over from the team another tuner of the process chose. The results never depend on the team: every kernel that takes a tuned team
// solves each line (each stencil row) on one thread.
//
// A positive thread count (Executor::host(n)) is used as given: no timing, no changes.
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace adi::detail {

class TeamTuner {
 public:
  static constexpr std::int64_t kReprobe = 64;       // calls between re-timings of a neighbouring team, at first
  static constexpr std::int64_t kReprobeMax = 1 << 16;  // ... backing off to this while the neighbours lose clearly
  static constexpr double kDrift = 1.3;     // the chosen team this much slower three calls running:
  static constexpr int kDriftCalls = 3;     // time the next smaller team again

  explicit TeamTuner(int requested = 0) { reset(requested); }

  // `procs`: the largest team (0: the processors OpenMP may use).
  void reset(int requested, int procs = 0) {
    fixed_ = requested;
    size_ = 0;
    best_ = next_ = 0;
    queued_ = 0;
    slow_ = 0;
    since_ = 0;
    interval_ = kReprobe;
    periodic_ = false;
    flips_ = 0;
    if (requested > 0) return;
    // The ladder: every processor, then halves down to one thread.
    if (procs <= 0) procs = std::max(1, std::min(omp_get_num_procs(), omp_get_max_threads()));
    for (int t = procs; size_ < kMax; t = (t + 1) / 2) {
      team_[size_++] = t;
      if (t == 1) break;
    }
    for (int i = 0; i < size_; ++i) time_[i] = -1;
    started_ = false;
  }

  // The team for the next call.
  int pick() {
    if (fixed_ > 0) return fixed_;
    if (!started_ || (starting_ && shared_hint().load(std::memory_order_relaxed) != hint_)) start();
    periodic_ = false;
    if (queued_ > 0) {
      next_ = queue_[0];
    } else if (size_ > 1 && ++since_ >= interval_) {
      // Now and then a neighbour of the chosen team, alternately the larger and the smaller.
      since_ = 0;
      const bool down = ++flips_ % 2 == 0;
      next_ = std::clamp(best_ + (down ? 1 : -1), 0, size_ - 1);
      if (next_ == best_) next_ = std::clamp(best_ + (down ? -1 : 1), 0, size_ - 1);
      periodic_ = true;
    } else {
      next_ = best_;
    }
    return team_[next_];
  }

  // Seconds the last picked call took.
  void record(double seconds) {
    if (fixed_ > 0 || size_ <= 1) return;
    if (queued_ > 0) {
      for (int i = 1; i < queued_; ++i) queue_[i - 1] = queue_[i];
      --queued_;
    }
    if (queued_ == 0) starting_ = false;
    double& t = time_[next_];
    const double before = t;
    if (next_ == best_ && queued_ == 0 && before > 0 && seconds > kDrift * before) {
      // The chosen team slowed down: preempted calls, or load that arrived. After a few
      // such calls in a row, time the next smaller team (a larger one cannot help when
      // the machine got busier; the periodic re-timing finds it when the load leaves).
      if (++slow_ >= kDriftCalls) {
        slow_ = 0;
        interval_ = kReprobe;
        probe(best_ + 1);
        t = seconds;  // the old estimate is stale
      }
      return;
    }
    if (next_ == best_) slow_ = 0;
    // The faster of the last two timings of a team: one preempted call does not condemn it.
    t = before < 0 ? seconds : std::min(seconds, 0.5 * (before + seconds));
    if (next_ == best_) return;
    if (time_[best_] < 0 || t < time_[best_]) {
      // A neighbour is faster: move there and keep climbing the same way.
      const int step = next_ > best_ ? 1 : -1;
      choose(next_);
      interval_ = kReprobe;
      probe(best_ + step);
    } else if (periodic_ && t > 1.5 * time_[best_]) {
      // A clear loss: look less often, the more so the larger the loss, so the re-timings
      // cost at most about 1/kReprobe of the time however slow the other team is.
      const double ratio = std::min(t / time_[best_], 1024.0);
      interval_ = std::min(static_cast<std::int64_t>(interval_ * std::max(2.0, ratio)), kReprobeMax);
    }
  }

  // Forget what the tuners of this process learnt (tests).
  static void forget_shared_hint() { shared_hint().store(0); }

  // The team the tuner currently prefers (the requested one when fixed).
  int preferred() const { return fixed_ > 0 ? fixed_ : team_[best_]; }

 private:
  static constexpr int kMax = 8;
  static constexpr int kQueue = 8;
  // Time team i on the next call.
  void probe(int i) {
    if (i < 0 || i >= size_ || queued_ + 1 > kQueue) return;
    queue_[queued_++] = i;
  }
  // Where the first calls go: on the whole machine, or on the team another tuner of this
  // process chose last (the machine's load is the same for every plan), then one smaller
  // team; the tuner climbs on from there.
  void start() {
    started_ = starting_ = true;
    hint_ = shared_hint().load(std::memory_order_relaxed);
    int h = 0;
    while (hint_ > 0 && h + 1 < size_ && team_[h] > hint_) ++h;
    best_ = h;
    queued_ = 0;
    probe(h);
    probe(h + 1);
  }
  static std::atomic<int>& shared_hint() {
    static std::atomic<int> team{0};
    return team;
  }
  void choose(int i) {
    best_ = i;
    shared_hint().store(team_[i], std::memory_order_relaxed);
  }
  bool started_ = false, starting_ = false;  // starting_: the first probes are not all timed yet
  int hint_ = 0;
  int fixed_ = 0;
  std::array<int, kMax> team_{};
  std::array<double, kMax> time_{};
  std::array<int, kQueue> queue_{};
  int size_ = 0, best_ = 0, next_ = 0, queued_ = 0, slow_ = 0;
  std::int64_t since_ = 0, interval_ = kReprobe, flips_ = 0;
  bool periodic_ = false;
};

// The team chosen by the enclosing TeamScope on this thread (0: none).
inline int& team_override() {
  thread_local int team = 0;
  return team;
}

// Host threads for a kernel call: the enclosing TeamScope's team, else `requested` (the
// executor's count). Every host kernel call under a plan or an Operator goes through it,
// so one decision covers all the parallel regions of that call.
inline int host_threads(int requested) {
  const int t = team_override();
  return t > 0 ? t : requested;
}

// Times one call on the tuner's team:  TeamScope s(tuner); kernel(..., s.team());
// Nested scopes (a plan solved inside an Operator stage) use the outermost scope's team
// and time nothing: the outer call is the unit that is tuned.
class TeamScope {
 public:
  explicit TeamScope(TeamTuner& t) : tuner_(t), nested_(team_override() > 0) {
    team_ = nested_ ? team_override() : t.pick();
    if (!nested_) {
      team_override() = team_;
      start_ = std::chrono::steady_clock::now();
    }
  }
  ~TeamScope() {
    if (nested_) return;
    team_override() = 0;
    tuner_.record(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  TeamScope(const TeamScope&) = delete;
  TeamScope& operator=(const TeamScope&) = delete;
  int team() const { return team_; }

 private:
  TeamTuner& tuner_;
  bool nested_;
  int team_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace adi::detail
