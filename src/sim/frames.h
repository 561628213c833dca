#pragma once
//! The pictures of a simulation (docs/design.md §12, §14): frame_NNNNNN.png, every frame with the
//! view and density range of step 0, so that the frames of a run line up.

#include <cstdint>
#include <optional>
#include <string>

#include "core/particles.h"
#include "render/density_image.h"

namespace nf::sim {

//! The fixed picture frame of a run and its frames.
class Frames {
 public:
  //! `options`: width and plane, and for a resumed run the view and density range it recorded.
  explicit Frames(render::RenderOptions options) : options_(std::move(options)) {}
  //! A fresh run: fixes the view (`window`, "U0,U1,V0,V1", or a square around p) and the density
  //! range from the picture of p, rendered now (so a plane p lacks is refused before any file is
  //! written) and kept as the frame of step 0.
  void fix(const Particles& p, const std::string& window);
  //! Width, plane, view and density range of every frame.
  const render::RenderOptions& options() const { return options_; }
  //! Writes DIR/frame_NNNNNN.png of the particles p at step `step`.
  void write(const std::string& dir, std::uint64_t step, const Particles& p);

 private:
  render::RenderOptions options_;
  std::optional<render::Rendering> first_;  // fix()'s picture, the frame of step 0
};

}  // namespace nf::sim
