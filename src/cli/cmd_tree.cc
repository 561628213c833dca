// nearfield tree: build the tree of a file, print its summary as key: value lines, optionally
// write one CSV row per non-empty box (or per box, with --dense).
#include <chrono>

#include "cli/commands.h"
#include "io/output_file.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "methods/auto_level.h"
#include "methods/memory_estimate.h"
#include "tree/morton.h"
#include "tree/tree.h"
#include "tree/tree_gpu.h"

namespace nf::cli {

namespace {

// Rows are written in chunks so that a deep dense tree never holds its whole CSV in memory.
class RowWriter {
 public:
  explicit RowWriter(const std::string& path) : f_(path) {}
  std::string& text() { return text_; }
  void row_done() {
    if (text_.size() > (1u << 20)) {
      f_.write(text_);
      text_.clear();
    }
  }
  void commit() {
    f_.write(text_);
    f_.commit();
  }

 private:
  OutputFile f_;
  std::string text_;
};

void append_coords(std::string& text, int dim, std::uint64_t key) {
  std::uint32_t c[3] = {0, 0, 0};
  if (dim == 2) {
    std::uint32_t c2[2];
    morton_coords<2>(key, c2);
    c[0] = c2[0], c[1] = c2[1];
  } else {
    morton_coords<3>(key, c);
  }
  for (int a = 0; a < dim; ++a) text += "," + std::to_string(c[a]);
}

std::string header(int dim, const char* neighbors) {
  return std::string("box,cx,cy") + (dim == 3 ? ",cz" : "") + ",start,count," + neighbors + "\n";
}

// One row per non-empty box; its neighbor counts are those of the compact lists (non-empty
// neighbors only).
void write_compact_boxes(const std::string& path, const Tree& t) {
  RowWriter w(path);
  w.text() = header(t.dim, "nonempty_neighbors,nonempty_half_neighbors");
  for (std::uint32_t k = 0; k < t.nonempty_boxes(); ++k) {
    std::string& text = w.text();
    text += std::to_string(t.box_key[k]);
    append_coords(text, t.dim, t.box_key[k]);
    text += "," + std::to_string(t.box_first[k]) + "," + std::to_string(t.compact_count(k)) + "," +
            std::to_string(t.near_full.offset[k + 1] - t.near_full.offset[k]) + "," +
            std::to_string(t.near_half.offset[k + 1] - t.near_half.offset[k]) + "\n";
    w.row_done();
  }
  w.commit();
}

// One row per box of the dense layout, empty ones included, with the paper's neighbor lists.
void write_dense_boxes(const std::string& path, const Tree& t) {
  RowWriter w(path);
  w.text() = header(t.dim, "full_neighbors,half_neighbors");
  for (std::uint32_t b = 0; b < t.nbox; ++b) {
    std::string& text = w.text();
    text += std::to_string(b);
    append_coords(text, t.dim, b);
    text += "," + std::to_string(t.box_start[b]) + "," + std::to_string(t.box_count(b)) + "," +
            std::to_string(t.full.offset[b + 1] - t.full.offset[b]) + "," +
            std::to_string(t.half.offset[b + 1] - t.half.offset[b]) + "\n";
    w.row_done();
  }
  w.commit();
}

}  // namespace

int cmd_tree(const Args& args, std::ostream& out, std::ostream&) {
  InputArgs in;
  std::string level, domain, output, builder = "cpu";
  bool dense = false;
  po::options_description d("tree options");
  d.add_options()("help", "this help")(
      "level", po::value(&level)->required(),
      "tree level K (2^K boxes per side; 2D up to 31, 3D up to 21), or auto (README: Choosing the level)")(
      "domain", po::value(&domain), "x0,y0[,z0],side (default: smallest square/cube from the positions)")(
      "dense", po::bool_switch(&dense),
      "also build the paper's dense layout (arrays over all 4^K / 8^K boxes; 2D up to 14, 3D up to 9)")(
      "output", po::value(&output),
      "write one CSV row per non-empty box: box key, coordinates, start, count, non-empty neighbor counts; "
      "with --dense one row per box with the counts of all neighbors")(
      "builder", po::value(&builder)->default_value(builder), "cpu or gpu");
  add_input_options(d, in);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield tree --input FILE.csv --level K|auto [--dense] [--domain ...] [--output boxes.csv]"))
    return 0;
  if (builder != "cpu" && builder != "gpu") throw UsageError("--builder must be cpu or gpu, not '" + builder + "'");
  check_input_args(in);
  if (!output.empty()) check_output_path(output, in.input);
  const bool automatic = level == "auto";
  if (automatic && !in.ppb.empty()) throw UsageError("--level auto needs --input or --n: with --ppb the level defines the input");
  int k = automatic ? kAutoLevel : static_cast<int>(single_int(level, "level", 0, kLevelOptionMax));
  const std::int64_t n = in.n.empty() ? -1 : single_int(in.n, "n"), ppb = in.ppb.empty() ? -1 : single_int(in.ppb, "ppb");
  if (in.input.empty() && !automatic) {  // a generated input and its tree, before either is made
    const GenerateOptions g = generator_options(in, n, k, ppb);
    const auto count = static_cast<std::uint64_t>(generated_count(g));
    check_level(g.dim, k, count, ~0ull, "memory", dense);  // a bad level first, in its own words
    MemoryNeed need;
    need.host = {{"particles", generated_bytes(g)}, {"tree", tree_bytes(g.dim, k, count, dense)}};
    check_memory(need, "the tree of " + std::to_string(count) + " particles at level " + std::to_string(k));
  }
  const Particles p = load_input(in, n, k, ppb);
  const Domain dom = resolve_domain(p, domain, in.input.empty() ? "generated input" : in.input);
  if (automatic) {
    const LevelChoice c = choose_level(p, dom, deepest_auto_level(p.dim, dense));
    out << describe(c) << "\n";
    k = c.level;
  }

  Tree t;
  double ms = 0;
  if (builder == "cpu") {
    const auto t0 = std::chrono::steady_clock::now();
    t = build_tree(p, k, dom, dense);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } else {
    gpu::require("--builder gpu");
    const DeviceParticles dp = upload_particles(p);
    GpuTreeBuilder b(p.dim, k, p.size(), dense);
    GpuBuildTimes times;
    b.build(dp, domain.empty() ? nullptr : &dom, &times);
    ms = times.total;
    t = download_tree(b.tree());
  }
  const std::uint32_t m = t.nonempty_boxes();
  out << "particles: " << t.particles() << "\n"
      << "dim: " << t.dim << "\n"
      << "level: " << t.level << "\n"
      << "domain: " << format_domain(t.domain, t.dim) << "\n"
      << "layout: " << (t.dense ? "compact+dense" : "compact") << "\n"
      << "boxes: " << t.nbox << "\n"
      << "nonempty_boxes: " << m << "\n"
      << "neighbor_links_full: " << full_link_count_text(t.dim, t.level) << "\n"
      << "neighbor_links_half: " << full_link_count_text(t.dim, t.level, true) << "\n"
      << "neighbor_links_nonempty: " << t.near_full.links() << "\n"
      << "neighbor_links_nonempty_half: " << t.near_half.links() << "\n"
      << "min_box_count: " << t.min_box_count() << "\n"
      << "max_box_count: " << t.max_box_count() << "\n"
      << "mean_box_count: " << format_double(static_cast<double>(t.particles()) / static_cast<double>(t.nbox)) << "\n"
      << "mean_nonempty_box_count: " << format_double(m ? static_cast<double>(t.particles()) / m : 0.0) << "\n"
      << "tree_bytes: " << t.heap_bytes() << "\n"
      << "builder: " << builder << "\n"
      << "build_ms: " << format_number("%.3f", ms) << "\n";
  if (t.dense && t.full.links() != full_link_count(t.dim, t.level))
    throw std::logic_error("dense neighbor lists disagree with B = (3n-2)^d - n^d");
  if (!output.empty()) {
    if (t.dense)
      write_dense_boxes(output, t);
    else
      write_compact_boxes(output, t);
  }
  return 0;
}

}  // namespace nf::cli
