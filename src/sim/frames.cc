// The pictures of a simulation (sim/frames.h, docs/design.md §12, §14).
#include "sim/frames.h"

#include <utility>

#include "render/png_file.h"
#include "sim/run_config.h"
#include "sim/run_files.h"

namespace nf::sim {

void Frames::fix(const Particles& p, const std::string& window) {
  if (!window.empty()) options_.view = render::parse_view(window, "--render-window");
  first_ = render::render_density(p, options_);
  options_.view = first_->view;
  // A window that holds no particle at step 0 fixes no colour range (0 < lo <= hi is refused);
  // every frame then takes its own.
  if (first_->density_hi > 0) options_.density_range = std::make_pair(first_->density_lo, first_->density_hi);
}

void Frames::write(const std::string& dir, std::uint64_t step, const Particles& p) {
  const render::Rendering r = step == 0 && first_ ? std::move(*first_) : render::render_density(p, options_);
  render::write_png(in_dir(dir, frame_name(step)), r.image);
}

}  // namespace nf::sim
