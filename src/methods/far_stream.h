#pragma once
//! The far field beside the near field (docs/design.md §16, "Near and far field at once"), a
//! comparison setting, off by default: with NEARFIELD_OVERLAP=on fmm and fmm-adaptive launch the
//! upward pass, M2L and L2L on a stream of their own, which does not order with the default
//! stream, and the near field on the default stream (and the blocking streams its kernels use), so
//! that each could fill the other's idle SMs (the tails of the level launches, the small coarse
//! levels); `high` gives that stream the device's greatest priority. L2P adds into the output the
//! near field adds into, so it waits for both, on the default stream. Off (unset, or `off`) the
//! same calls run one after the other on the default stream. On an H200 `on` was at most 0.4%
//! faster than off on 3D inputs and 2.2% on 2D uniform 2^22; `high` from 5.4% slower to 2.4%
//! faster (the near field's blocks fill the GPU; results/fmm-overlap/). With either, the stages'
//! timers overlap. Read at construction.
//!
//!   FarStream::Guard guard(far);          // joins on the way out, if nothing did
//!   far.begin();                          // the far stream waits for the zeroed expansions
//!   { gpu::StreamScope s(far.stream());  upward, M2L, L2L }
//!   near field
//!   far.join();                           // the default stream waits for the far stream
//!   L2P
#include <cstdlib>
#include <memory>
#include <string>

#include "core/env.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"

namespace nf {

class FarStream {
 public:
  FarStream() {
    const std::string mode = env::choice("NEARFIELD_OVERLAP", {"on", "high", "off"});
    if (mode.empty() || mode == "off") return;
    high_ = mode == "high";
    stream_ = std::make_unique<gpu::Stream>(false, high_);
    go_ = std::make_unique<gpu::Event>();
    done_ = std::make_unique<gpu::Event>();
  }
  //! The far field's stream; null (the default stream) when off.
  const gpu::Stream* stream() const { return stream_.get(); }
  //! Whether that stream has the device's greatest priority (`high`): M2L's levels, forked from
  //! it, take the same (farfield::M2LOperators::apply_levels).
  bool high() const { return high_; }
  //! The far stream's next work waits for the default stream's work so far.
  void begin() {
    if (!stream_) return;
    go_->record();
    go_->wait_on(stream_.get());
    pending_ = true;
  }
  //! The default stream's next work waits for the far stream's work so far (once after a begin).
  void join() {
    if (!pending_) return;
    pending_ = false;
    done_->record(stream_.get());
    done_->wait_on();
  }
  //! Joins at the end of its scope where join() did not run: a launch that throws between begin()
  //! and join() must not leave far-stream work unjoined, or the next evaluation's zeroing of the
  //! expansions, on the default stream, could overlap it.
  class Guard {
   public:
    explicit Guard(FarStream& far) : far_(far) {}
    ~Guard() {
      try {
        far_.join();
      } catch (...) {  // unwinding already: the first error is the one to report
      }
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    FarStream& far_;
  };

 private:
  std::unique_ptr<gpu::Stream> stream_;
  std::unique_ptr<gpu::Event> go_, done_;
  bool pending_ = false;  // begin() ran, join() not yet
  bool high_ = false;
};

}  // namespace nf
