#pragma once
//! How a multi-GPU evaluation computes the pairs whose particles live on two GPUs
//! (decomposition.h says what each way does).

#include <string>

namespace nf {

//! twice: each GPU computes its particles' forces from own + halo (every cross pair on both
//! sides; any kernel; deterministic kernels match one GPU bit for bit). once: Newton-3 kernels
//! compute each cross pair on one GPU and send the counterforces back. automatic: once for
//! Newton-3 kernels that are not deterministic, twice for all others.
enum class CrossPairs { automatic, twice, once };

//! "auto", "twice" or "once".
const char* to_string(CrossPairs c);
//! Parses "auto", "twice" or "once"; UsageError otherwise.
CrossPairs parse_cross_pairs(const std::string& text);

}  // namespace nf
