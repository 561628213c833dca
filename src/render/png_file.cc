#include "render/png_file.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "io/output_file.h"

namespace nf::render {
namespace {

// libpng hands the encoded bytes to this callback; they collect in memory and go to disk in one
// atomic write, so a failed encoding leaves no file behind.
void append_bytes(png_structp png, png_bytep data, png_size_t length) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), length);
}

void no_flush(png_structp) {}

struct ErrorText {
  char text[256] = "";
};

// libpng's error callback must not return: keep the message and jump back to write_png.
void on_error(png_structp png, png_const_charp message) {
  auto* e = static_cast<ErrorText*>(png_get_error_ptr(png));
  std::snprintf(e->text, sizeof e->text, "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

}  // namespace

void write_png(const std::string& path, const Image& image) {
  if (image.width < 1 || image.height < 1 || image.rgb.size() != std::size_t(image.width) * image.height * 3)
    throw std::logic_error("write_png: inconsistent image");
  // Everything libpng's longjmp may come back to lives on the heap or is not changed after setjmp.
  const auto bytes = std::make_unique<std::string>();
  const auto error = std::make_unique<ErrorText>();
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, error.get(), on_error, on_warning);
  if (!png) throw std::runtime_error("libpng: cannot create a write structure");
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    throw std::runtime_error("libpng: cannot create an info structure");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("cannot write " + path + ": libpng: " + error->text);
  }
  png_set_write_fn(png, bytes.get(), append_bytes, no_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int row = 0; row < image.height; ++row)
    png_write_row(png, image.pixel(0, row));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  write_output_file(path, *bytes);
}

}  // namespace nf::render
