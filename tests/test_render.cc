// Surface density pictures: PNG files decoded back with libpng and checked pixel by pixel against
// positions computed here; edge cases N = 0, one particle, coincident particles, 2D input.
#include <png.h>

#include <filesystem>
#include <map>
#include <set>

#include "core/errors.h"
#include "io/particle_file.h"
#include "render/colormap.h"
#include "render/density_image.h"
#include "render/png_file.h"
#include "helpers.h"

using namespace nf;
using nf::test::TempDir;

namespace {

struct Picture {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
  render::Rgb at(int column, int row) const {
    const std::size_t k = 3 * (std::size_t(row) * width + column);
    return {rgb[k], rgb[k + 1], rgb[k + 2]};
  }
  std::size_t count_not(const render::Rgb& c) const {
    std::size_t n = 0;
    for (int r = 0; r < height; ++r)
      for (int col = 0; col < width; ++col) n += at(col, r) != c;
    return n;
  }
};

// Decodes a PNG with libpng's own reader; fails the test unless it is an 8-bit RGB image.
Picture decode(const std::string& path) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  REQUIRE_MESSAGE(png_image_begin_read_from_file(&img, path.c_str()), img.message);
  CHECK((img.format & PNG_FORMAT_FLAG_COLOR) != 0);
  CHECK((img.format & PNG_FORMAT_FLAG_ALPHA) == 0);
  img.format = PNG_FORMAT_RGB;
  Picture p;
  p.width = static_cast<int>(img.width);
  p.height = static_cast<int>(img.height);
  p.rgb.resize(PNG_IMAGE_SIZE(img));
  REQUIRE_MESSAGE(png_image_finish_read(&img, nullptr, p.rgb.data(), 0, nullptr), img.message);
  return p;
}

const render::Rgb kLowest = {48, 16, 112}, kMiddle = {220, 60, 70}, kHighest = {255, 250, 215};

Particles points(int dim, const std::vector<std::vector<double>>& xyzm) {
  Particles p;
  p.dim = dim;
  for (const auto& q : xyzm) {
    p.x.push_back(q[0]);
    p.y.push_back(q[1]);
    if (dim == 3) p.z.push_back(q[2]);
    p.m.push_back(q[dim]);
  }
  return p;
}

}  // namespace

TEST_CASE("render: mass lands in the pixel that holds it, log-scaled; background elsewhere") {
  TempDir dir;
  // View [0,10]^2 at 10 x 10 pixels: pixel (column, row) covers u in [c, c+1), v in [9-r, 10-r).
  const Particles p = points(3, {{0.5, 0.5, 0, 1},     // column 0, row 9: density 1
                                 {3.5, 7.5, 0, 2},     // column 3, row 2: 2 + 2 = 4
                                 {3.2, 7.9, 5, 2},     //
                                 {9.99, 9.99, 0, 1},   // column 9, row 0: 1 + 1 = 2
                                 {10.0, 10.0, 0, 1},   // the view's upper edges belong to the last pixel
                                 {11, 5, 0, 7},        // outside
                                 {-0.1, 2, 0, 7}});    // outside
  io::write_particles(dir.file("p.bin"), p);
  const auto r = test::run_cli({"render", "--input", dir.file("p.bin"), "--output", dir.file("p.png"), "--size", "10",
                                "--window", "0,10,0,10"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("5 particles drawn, 2 outside") != std::string::npos);
  const Picture pic = decode(dir.file("p.png"));
  REQUIRE(pic.width == 10);
  REQUIRE(pic.height == 10);
  const std::map<std::pair<int, int>, render::Rgb> expected = {
      {{0, 9}, kLowest}, {{3, 2}, kHighest}, {{9, 0}, kMiddle}};  // log(2)/log(4) = 1/2
  for (int row = 0; row < 10; ++row)
    for (int col = 0; col < 10; ++col) {
      CAPTURE(col);
      CAPTURE(row);
      const auto it = expected.find({col, row});
      CHECK(pic.at(col, row) == (it == expected.end() ? render::kBackground : it->second));
    }
}

TEST_CASE("render: no particles, one particle, coincident particles") {
  TempDir dir;
  SUBCASE("N = 0: a background picture of the requested size") {
    test::write_text(dir.file("e.csv"), "x,y,z,m\n");
    const auto r =
        test::run_cli({"render", "--input", dir.file("e.csv"), "--output", dir.file("e.png"), "--size", "33"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const Picture pic = decode(dir.file("e.png"));
    CHECK(pic.width == 33);
    CHECK(pic.height == 33);
    CHECK(pic.count_not(render::kBackground) == 0);
  }
  SUBCASE("one particle or a thousand at one point: one lit pixel at the centre, top colour") {
    for (int n : {1, 1000}) {
      Particles p;
      p.dim = 3;
      for (int i = 0; i < n; ++i) p.x.push_back(1e6), p.y.push_back(-3), p.z.push_back(2), p.m.push_back(0.5);
      io::write_particles(dir.file("one.tab"), p);
      const auto r = test::run_cli({"render", "--input", dir.file("one.tab"), "--output", dir.file("one.png"),
                                    "--size", "64", "--plane", "yz"});
      INFO(r.err);
      REQUIRE(r.code == 0);
      const Picture pic = decode(dir.file("one.png"));
      CHECK(pic.count_not(render::kBackground) == 1);
      CHECK(pic.at(32, 31) == kHighest);  // centre of a 64-pixel side: column 32, row 63 - 32
    }
  }
  SUBCASE("massless particles: counts are drawn instead") {
    const Particles p = points(2, {{0, 0, 0}, {1, 1, 0}, {1, 1, 0}});
    const render::Rendering r = render::render_density(p, {});
    CHECK(r.counts);
    CHECK(r.drawn == 3);
    std::size_t lit = 0;
    for (std::size_t k = 0; k < r.image.rgb.size(); k += 3) lit += r.image.rgb[k] != 0;
    CHECK(lit == 2);
  }
}

TEST_CASE("render: planes and 2D input") {
  TempDir dir;
  // One particle per plane position: u, v from the plane's axes.
  const Particles p = points(3, {{1.5, 2.5, 3.5, 1}});
  for (const char* plane : {"xy", "xz", "yz"}) {
    CAPTURE(plane);
    render::RenderOptions opt;
    opt.width = 5;
    opt.plane = render::parse_plane(plane);
    opt.view = render::View{0, 5, 0, 5};
    const render::Rendering r = render::render_density(p, opt);
    const double u = plane[0] == 'x' ? 1.5 : 2.5, v = plane[1] == 'y' ? 2.5 : 3.5;
    const int col = static_cast<int>(u), row = 4 - static_cast<int>(v);
    for (int rr = 0; rr < 5; ++rr)
      for (int c = 0; c < 5; ++c) {
        const std::uint8_t* px = r.image.pixel(c, rr);
        const render::Rgb got = {px[0], px[1], px[2]};
        CHECK(got == (c == col && rr == row ? kHighest : render::kBackground));
      }
  }
  const Particles flat = test::make("uniform", 2, 500, 4);
  io::write_particles(dir.file("flat.csv"), flat);
  auto r = test::run_cli({"render", "--input", dir.file("flat.csv"), "--output", dir.file("flat.png"), "--size", "50"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("500 particles drawn, 0 outside") != std::string::npos);
  CHECK(decode(dir.file("flat.png")).count_not(render::kBackground) > 0);
  r = test::run_cli({"render", "--input", dir.file("flat.csv"), "--output", dir.file("xz.png"), "--plane", "xz"});
  CHECK(r.code == 2);
  CHECK(r.err.find("2D particles have no z") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("xz.png")));
  for (const char* bad : {"0", "20000"}) {
    r = test::run_cli({"render", "--input", dir.file("flat.csv"), "--output", dir.file("s.png"), "--size", bad});
    CHECK(r.code == 2);
  }
  CHECK(test::run_cli({"render", "--input", dir.file("flat.csv"), "--output", dir.file("s.png"), "--window", "1,0,0,1"})
            .code == 2);
  CHECK(test::run_cli({"render", "--input", dir.file("flat.csv"), "--output", dir.file("s.png"), "--plane", "xw"})
            .code == 2);
  // A view whose pixels' area overflows (it had drawn every pixel empty), and one too tall for
  // square pixels at this width (its height had been cut to the limit without a word).
  r = test::run_cli({"render", "--input", dir.file("flat.csv"), "--output", dir.file("s.png"),
                     "--window=-1e300,1e300,-1e300,1e300"});
  CHECK(r.code == 2);
  CHECK(r.err.find("not a finite positive number") != std::string::npos);
  r = test::run_cli({"render", "--input", dir.file("flat.csv"), "--output", dir.file("s.png"), "--window",
                     "0,1e-300,0,1", "--size", "100"});
  CHECK(r.code == 2);
  CHECK(r.err.find("more than 16384") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("s.png")));
}

TEST_CASE("render: lit pixels are exactly the occupied ones; brighter where denser; fixed ranges clamp") {
  const Particles p = test::make("plummer", 3, 100000, 8);
  render::RenderOptions opt;
  opt.width = 200;
  const render::Rendering r = render::render_density(p, opt);
  CHECK(r.drawn == p.size());  // the default view holds every particle
  CHECK(r.outside == 0);
  CHECK(r.image.height == 200);
  // Occupied pixels and their mass, computed here from the view the renderer reports.
  std::map<std::pair<int, int>, double> mass;
  const render::View& v = r.view;
  for (std::size_t i = 0; i < p.size(); ++i) {
    int c = static_cast<int>(std::floor((p.x[i] - v.u0) / (v.u1 - v.u0) * 200));
    int row = static_cast<int>(std::floor((p.y[i] - v.v0) / (v.v1 - v.v0) * 200));
    c = std::min(c, 199), row = std::min(row, 199);
    mass[{c, 199 - row}] += p.m[i];
  }
  std::size_t lit = 0;
  for (int row = 0; row < 200; ++row)
    for (int c = 0; c < 200; ++c) lit += r.image.pixel(c, row)[0] != 0 || r.image.pixel(c, row)[2] != 0;
  CHECK(lit == mass.size());
  // Luminance rises with density: the densest pixel is the brightest.
  auto luma = [&](std::pair<int, int> k) {
    const std::uint8_t* px = r.image.pixel(k.first, k.second);
    return 0.3 * px[0] + 0.59 * px[1] + 0.11 * px[2];
  };
  auto densest = mass.begin(), lightest = mass.begin();
  for (auto it = mass.begin(); it != mass.end(); ++it) {
    if (it->second > densest->second) densest = it;
    if (it->second < lightest->second) lightest = it;
  }
  CHECK(luma(densest->first) > luma(lightest->first));
  const std::uint8_t* top = r.image.pixel(densest->first.first, densest->first.second);
  CHECK(render::Rgb{top[0], top[1], top[2]} == kHighest);
  // A fixed density range: everything above it gets the top colour, below it the lowest.
  opt.density_range = std::make_pair(1e30, 1e31);
  const render::Rendering low = render::render_density(p, opt);
  const std::uint8_t* px = low.image.pixel(densest->first.first, densest->first.second);
  CHECK(render::Rgb{px[0], px[1], px[2]} == kLowest);
  opt.density_range = std::make_pair(1e-30, 1e-29);
  const render::Rendering high = render::render_density(p, opt);
  px = high.image.pixel(lightest->first.first, lightest->first.second);
  CHECK(render::Rgb{px[0], px[1], px[2]} == kHighest);
}

TEST_CASE("write_png: the API writes what the renderer drew") {
  TempDir dir;
  render::Image img;
  img.width = 3;
  img.height = 2;
  img.rgb = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
  render::write_png(dir.file("a.png"), img);
  const Picture pic = decode(dir.file("a.png"));
  CHECK(pic.width == 3);
  CHECK(pic.height == 2);
  CHECK(pic.rgb == img.rgb);
  CHECK_THROWS_AS(render::write_png(dir.file("missing/dir/a.png"), img), std::runtime_error);
}
