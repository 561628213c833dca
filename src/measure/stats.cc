#include "measure/stats.h"

#include <algorithm>

namespace nf {

TimingStats summarize(std::vector<double> ms) {
  TimingStats s;
  s.reps = static_cast<int>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const std::size_t h = ms.size() / 2;
  s.median = ms.size() % 2 ? ms[h] : 0.5 * (ms[h - 1] + ms[h]);
  s.min = ms.front();
  s.max = ms.back();
  return s;
}

}  // namespace nf
