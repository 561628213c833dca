#pragma once
//! Wall-clock timing on the host (the GPU's own timings are CUDA events: gpu_runtime.h).

#include <chrono>

namespace nf {

//! A steady-clock stopwatch: started at construction or restart(), read in milliseconds.
class Stopwatch {
 public:
  using Clock = std::chrono::steady_clock;
  Stopwatch() : t0_(Clock::now()) {}
  void restart() { t0_ = Clock::now(); }
  double ms() const { return std::chrono::duration<double, std::milli>(Clock::now() - t0_).count(); }
  double seconds() const { return ms() * 1e-3; }

 private:
  Clock::time_point t0_;
};

}  // namespace nf
