#pragma once
//! PNG files written with libpng.

#include <string>

#include "render/density_image.h"

namespace nf::render {

//! Writes `image` as an 8-bit RGB PNG, atomically (temporary name, then rename). Throws
//! std::runtime_error if libpng or the file system fails.
void write_png(const std::string& path, const Image& image);

}  // namespace nf::render
