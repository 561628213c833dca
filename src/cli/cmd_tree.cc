// nearfield tree: build the tree of a file, print its summary as key: value lines, optionally
// write one CSV row per box.
#include <chrono>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/gpu_runtime.h"
#include "common/numbers.h"
#include "quadtree/morton.h"
#include "quadtree/tree.h"
#include "quadtree/tree_gpu.h"

namespace nf::cli {

namespace {
void write_boxes(const std::string& path, const Tree& t) {
  std::string text = t.dim == 3 ? "box,cx,cy,cz,start,count,full_neighbors,half_neighbors\n"
                                 : "box,cx,cy,start,count,full_neighbors,half_neighbors\n";
  AtomicFile f(path);
  for (std::uint32_t b = 0; b < t.nbox; ++b) {
    text += std::to_string(b);
    if (t.dim == 2) {
      std::uint32_t c[2];
      morton_decode<2>(b, c);
      text += "," + std::to_string(c[0]) + "," + std::to_string(c[1]);
    } else {
      std::uint32_t c[3];
      morton_decode<3>(b, c);
      text += "," + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]);
    }
    text += "," + std::to_string(t.box_start[b]) + "," + std::to_string(t.box_count(b)) + "," +
            std::to_string(t.full.offset[b + 1] - t.full.offset[b]) + "," +
            std::to_string(t.half.offset[b + 1] - t.half.offset[b]) + "\n";
    if (text.size() > (1u << 20)) {
      f.write(text);
      text.clear();
    }
  }
  f.write(text);
  f.commit();
}
}  // namespace

int cmd_tree(const Args& args, std::ostream& out, std::ostream&) {
  InputArgs in;
  std::string level, domain, output, builder = "cpu";
  po::options_description d("tree options");
  d.add_options()("help", "this help")("level", po::value(&level)->required(), "tree level K (2^K boxes per side)")(
      "domain", po::value(&domain), "x0,y0[,z0],side (default: smallest square/cube from the positions)")(
      "output", po::value(&output), "write one CSV row per box: box, coordinates, start, count, neighbor counts")(
      "builder", po::value(&builder)->default_value(builder), "cpu or gpu");
  add_input_options(d, in);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out, "usage: nearfield tree --input FILE.csv --level K [--domain ...] [--output boxes.csv]"))
    return 0;
  const int k = static_cast<int>(single_int(level, "level"));
  const Particles p = load_input(in, in.n.empty() ? -1 : single_int(in.n, "n"), k,
                                 in.ppb.empty() ? -1 : single_int(in.ppb, "ppb"));
  const Domain dom = resolve_domain(p, domain, in.input.empty() ? "generated input" : in.input);

  Tree t;
  double ms = 0;
  if (builder == "cpu") {
    const auto t0 = std::chrono::steady_clock::now();
    t = build_tree(p, k, dom);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } else if (builder == "gpu") {
    gpu::require("--builder gpu");
    const DeviceParticles dp = upload_particles(p);
    GpuTreeBuilder b(p.dim, k, p.size());
    GpuBuildTimes times;
    b.build(dp, domain.empty() ? nullptr : &dom, &times);
    ms = times.total;
    t = download_tree(b.tree());
  } else {
    throw UsageError("--builder must be cpu or gpu, not '" + builder + "'");
  }
  out << "particles: " << t.particles() << "\n"
      << "dim: " << t.dim << "\n"
      << "level: " << t.level << "\n"
      << "domain: " << format_domain(t.domain, t.dim) << "\n"
      << "boxes: " << t.nbox << "\n"
      << "nonempty_boxes: " << t.nonempty.size() << "\n"
      << "neighbor_links_full: " << t.full.links() << "\n"
      << "neighbor_links_half: " << t.half.links() << "\n"
      << "min_box_count: " << t.min_box_count() << "\n"
      << "max_box_count: " << t.max_box_count() << "\n"
      << "mean_box_count: " << format_double(static_cast<double>(t.particles()) / t.nbox) << "\n"
      << "builder: " << builder << "\n"
      << "build_ms: " << fmt("%.3f", ms) << "\n";
  if (!output.empty()) write_boxes(output, t);
  return 0;
}

}  // namespace nf::cli
