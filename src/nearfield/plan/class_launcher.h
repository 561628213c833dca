#pragma once
// How the planned kernels launch their work: one launch per non-empty class of a WorkList, plus
// optionally one "thread path" launch (small boxes, one particle per thread), each on a stream of
// its own so that they overlap instead of each launch's tail idling the GPU. The streams are
// blocking streams: they start after the default stream's earlier work, and its later work (a
// second pass, the timing event) waits for them, so callers see one launch on the default stream.
// A single launch goes on the default stream itself: joining another stream costs a few
// microseconds, ~5% of a 0.09 ms evaluation (H100, table3 P = 32).
//
// Order: the thread path first, then the classes from the biggest items down, so that the
// launches whose blocks run longest do not start last and leave the GPU a long tail. On the H100
// (float, N = 2M, medians of 15) against the classes upwards: n3-rotate 2D clusters level 10 1.19
// against 1.45 ms, level 11 0.49-0.50 against 0.55-0.57, 3D Plummer level 8 1.48 against 1.55;
// bpb-lb 2D clusters level 11 0.50 against 0.53-0.56, 3D Plummer level 8 1.72 against 1.89
// (2D clusters level 10 1.73 against 1.69-1.70, the one point it costs). The Newton-3 warp kernels
// launch their classes of at most 32 targets first (`first`; n3_common.cuh says why).
#include <cstdint>

#include "core/gpu_runtime.h"

namespace nf::plan {

//! Streams for up to `Classes` class launches and one thread-path launch.
template <int Classes>
class ClassLauncher {
 public:
  //! Calls thread_path(stream) when `thread_path_busy`, then class_launch(c, stream) for every
  //! class c with class_size(c) > 0: the classes below `first` upwards, then the others from
  //! c = Classes - 1 down. `stream` is a cudaStream_t as void* (null: the default stream).
  template <class Sizes, class ThreadPath, class ClassLaunch>
  void launch(bool thread_path_busy, const Sizes& class_size, ThreadPath&& thread_path, ClassLaunch&& class_launch,
              int first = 0) {
    int launches = thread_path_busy ? 1 : 0;
    for (int c = 0; c < Classes; ++c) launches += class_size(c) > 0;
    const auto stream = [&](int s) -> void* { return launches > 1 ? streams_[s].handle() : nullptr; };
    if (thread_path_busy) thread_path(stream(Classes));
    for (int c = 0; c < first; ++c)
      if (class_size(c) > 0) class_launch(c, stream(c));
    for (int c = Classes - 1; c >= first; --c)
      if (class_size(c) > 0) class_launch(c, stream(c));
  }

 private:
  gpu::Stream streams_[Classes + 1];  // one per class, and the thread path's
};

}  // namespace nf::plan
