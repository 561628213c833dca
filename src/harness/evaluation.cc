#include "harness/evaluation.h"

#include <chrono>
#include <sstream>

#include "allpairs/allpairs_cpu.h"
#include "allpairs/allpairs_gpu.h"
#include "common/errors.h"
#include "common/gpu_runtime.h"
#include "common/interaction.h"
#include "nearfield/nearfield_cpu.h"
#include "nearfield/nearfield_gpu.h"

namespace nf {

const char* to_string(Mask m) { return m == Mask::all ? "all" : "near"; }

Mask parse_mask(const std::string& text) {
  if (text == "all") return Mask::all;
  if (text == "near") return Mask::near;
  throw UsageError("unknown mask '" + text + "' (expected all or near)");
}

const std::vector<KernelInfo>& all_kernels() {
  static const std::vector<KernelInfo> kernels = {
      {"cpu-serial", false, true, false, false, "one thread, boxes in Z-order, own box then each neighbor (the paper's CPU)"},
      {"cpu-n3", false, true, true, false, "one thread, half lists, each pair once (Newton's third law)"},
      {"cpu-omp", false, true, false, false, "OpenMP over boxes, full lists", true},
      {"cpu-omp-n3", false, true, true, false, "OpenMP, Newton-3 with per-thread buffers merged at the end", true},
      {"cpu-allpairs", false, false, false, false, "float64 O(N^2) reference (--mask all|near)", true},
      {"allpairs-naive", true, false, false, false, "thread per body, sources from global memory"},
      {"allpairs-tiled", true, false, false, false, "GPU Gems 3 ch. 31 shared-memory tiles"},
      {"allpairs-2d", true, false, false, false, "2D-tiled: source slices with partial sums, then a reduction"},
      {"ppt", true, true, false, false, "particle per thread, neighbors from global memory"},
      {"bpt", true, true, false, false, "box per thread"},
      {"bpb", true, true, false, false, "box per block, boxes staged in shared memory (original BPB)"},
      {"bpb-n3", true, true, true, true, "improved BPB: half lists, shared counterforce array + atomics"},
  };
  return kernels;
}

const KernelInfo& find_kernel(const std::string& name) {
  for (const KernelInfo& k : all_kernels())
    if (k.name == name) return k;
  std::string names;
  for (const KernelInfo& k : all_kernels()) names += (names.empty() ? "" : ", ") + k.name;
  throw UsageError("unknown kernel '" + name + "' (kernels: " + names + ")");
}

std::vector<std::string> available_kernels() {
  std::vector<std::string> names;
  const bool gpu = gpu::available();
  for (const KernelInfo& k : all_kernels())
    if (!k.gpu || gpu) names.push_back(k.name);
  return names;
}

std::vector<std::string> parse_kernel_list(const std::string& text) {
  if (text.empty() || text == "all") return available_kernels();
  std::vector<std::string> names;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    find_kernel(item);
    names.push_back(item);
  }
  if (names.empty()) throw UsageError("--kernel: no kernel named in '" + text + "'");
  return names;
}

std::uint64_t near_field_interactions(const Tree& t) {
  std::uint64_t total = 0;
  for (std::uint32_t b = 0; b < t.nbox; ++b) {
    const std::uint64_t n = t.box_count(b);
    if (n == 0) continue;
    std::uint64_t around = 0;
    for (std::uint32_t k = t.full.offset[b]; k < t.full.offset[b + 1]; ++k) around += t.box_count(t.full.ids[k]);
    total += n * (n - 1) + n * around;
  }
  return total;
}

std::vector<Body<double>> bodies_as_seen(const Particles& p, Precision precision) {
  std::vector<Body<double>> b(p.size());
  const bool f32 = precision == Precision::f32;
  auto seen = [f32](double v) { return f32 ? static_cast<double>(static_cast<float>(v)) : v; };
  for (std::size_t i = 0; i < p.size(); ++i)
    b[i] = {seen(p.x[i]), seen(p.y[i]), p.dim == 3 ? seen(p.z[i]) : 0.0, seen(p.m[i])};
  return b;
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Sorted-order T accelerations back to input-order float64 values.
template <int D, class T>
std::vector<double> scatter(const std::vector<Acc4<T>>& sorted, const std::vector<std::uint32_t>& order) {
  std::vector<double> out(sorted.size() * D);
  for (std::size_t s = 0; s < sorted.size(); ++s) {
    double* o = &out[std::size_t(order[s]) * D];
    o[0] = sorted[s].x;
    o[1] = sorted[s].y;
    if constexpr (D == 3) o[2] = sorted[s].z;
  }
  return out;
}

template <class T>
std::vector<Body<T>> sorted_bodies(const Particles& p, const Tree& t) {
  std::vector<Body<T>> b(p.size());
  for (std::size_t s = 0; s < b.size(); ++s) {
    const std::uint32_t i = t.order[s];
    b[s] = {T(p.x[i]), T(p.y[i]), p.dim == 3 ? T(p.z[i]) : T(0), T(p.m[i])};
  }
  return b;
}

template <class T>
T softening_squared(double eps) {
  return static_cast<T>(eps * eps);
}

// --- CPU near-field kernels ----------------------------------------------------------------------
template <int D, class T>
class CpuNearField : public Evaluation {
 public:
  CpuNearField(const std::string& name, const Particles& p, const ForceSetup& s) : name_(name), count_(s.count_interactions) {
    const auto t0 = Clock::now();
    tree_ = build_tree(p, s.level, s.domain);
    tree_ms = ms_since(t0);
    bodies_ = sorted_bodies<T>(p, tree_);
    acc_.resize(p.size());
    view_ = {&tree_, bodies_.data(), acc_.data(), softening_squared<T>(s.softening), nullptr};
  }
  void run() override {
    unsigned long long count = 0;
    view_.counter = count_ ? &count : nullptr;
    if (name_ == "cpu-serial")
      cpu_serial<D, T>(view_);
    else if (name_ == "cpu-n3")
      cpu_n3<D, T>(view_);
    else if (name_ == "cpu-omp")
      cpu_omp<D, T>(view_);
    else
      cpu_omp_n3<D, T>(view_, buffers_);
    counted_ = count;
  }
  double run_timed_ms() override {
    const auto t0 = Clock::now();
    run();
    return ms_since(t0);
  }
  std::vector<double> accelerations() override { return scatter<D, T>(acc_, tree_.order); }
  void poison_output() override {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::fill(acc_.begin(), acc_.end(), Acc4<T>{nan, nan, nan, nan});
  }

 private:
  std::string name_;
  bool count_;
  Tree tree_;
  std::vector<Body<T>> bodies_;
  std::vector<Acc4<T>> acc_;
  std::vector<std::vector<Acc4<T>>> buffers_;
  HostNearField<T> view_;
};

// --- cpu-allpairs ----------------------------------------------------------------------------------
class CpuAllPairs : public Evaluation {
 public:
  CpuAllPairs(const Particles& p, const ForceSetup& s) : dim_(p.dim), softening_(s.softening) {
    bodies_ = bodies_as_seen(p, s.round_inputs_to_float ? Precision::f32 : s.precision);
    if (s.mask == Mask::near) cells_ = cells_from_positions(p, s.level, s.domain);
    masked_ = s.mask == Mask::near;
  }
  void run() override { acc_ = cpu_allpairs(dim_, bodies_, masked_ ? &cells_ : nullptr, softening_); }
  double run_timed_ms() override {
    const auto t0 = Clock::now();
    run();
    return ms_since(t0);
  }
  std::vector<double> accelerations() override { return acc_; }
  void poison_output() override { acc_.assign(bodies_.size() * dim_, std::numeric_limits<double>::quiet_NaN()); }

 private:
  int dim_;
  double softening_;
  bool masked_ = false;
  std::vector<Body<double>> bodies_;
  std::vector<Cell> cells_;
  std::vector<double> acc_;
};

#if defined(NF_HAVE_CUDA)
// --- GPU near-field kernels -----------------------------------------------------------------------
template <int D, class T>
class GpuNearField : public Evaluation {
 public:
  GpuNearField(const KernelInfo& k, const Particles& p, const ForceSetup& s)
      : name_(k.name), atomics_(k.atomics), particles_(upload_particles(p)), builder_(D, s.level, p.size()) {
    builder_.build(particles_, &s.domain, &gpu_build);
    tree_ms = gpu_build.total;
    const DeviceTree& t = builder_.tree();
    gather_bodies<T>(particles_, t, bodies_);
    acc_ = gpu::DeviceBuffer<Acc4<T>>(p.size());
    order_ = t.order.download();
    if (s.count_interactions) counter_ = gpu::DeviceBuffer<unsigned long long>(1);
    view_.bodies = bodies_.data();
    view_.acc = acc_.data();
    view_.box_start = t.box_start.data();
    view_.particle_box = t.particle_box.data();
    view_.nonempty = t.nonempty.data();
    view_.nonempty_count = t.nonempty_count;
    const bool half = k.newton3;
    view_.neighbor_offset = half ? t.half_offset.data() : t.full_offset.data();
    view_.neighbor_ids = half ? t.half_ids.data() : t.full_ids.data();
    view_.n = t.n;
    view_.max_box_count = t.max_box_count;
    view_.eps2 = softening_squared<T>(s.softening);
    view_.guarded = !unguarded_is_safe<T>(s.softening, p.max_mass());
    view_.counter = s.count_interactions ? counter_.data() : nullptr;
    gpu::synchronize();
  }
  void launch() {
    if (view_.counter) counter_.fill(0);
    if (atomics_) acc_.fill(0);  // part of the evaluation: the kernel only adds into acc
    if (name_ == "ppt")
      launch_ppt<D, T>(view_);
    else if (name_ == "bpt")
      launch_bpt<D, T>(view_);
    else if (name_ == "bpb")
      launch_bpb<D, T>(view_);
    else
      launch_bpb_n3<D, T>(view_);
  }
  void finish() {
    gpu::synchronize();
    if (view_.counter) counted_ = counter_.download()[0];
  }
  void run() override {
    launch();
    finish();
  }
  double run_timed_ms() override {
    timer_.start();
    launch();
    timer_.stop();
    const double ms = timer_.elapsed_ms();
    finish();
    return ms;
  }
  std::vector<double> accelerations() override { return scatter<D, T>(acc_.download(), order_); }
  void poison_output() override { acc_.fill(0xFF); }

 private:
  std::string name_;
  bool atomics_;
  DeviceParticles particles_;
  GpuTreeBuilder builder_;
  gpu::DeviceBuffer<Body<T>> bodies_;
  gpu::DeviceBuffer<Acc4<T>> acc_;
  gpu::DeviceBuffer<unsigned long long> counter_;
  std::vector<std::uint32_t> order_;
  NearFieldView<T> view_;
  gpu::EventTimer timer_;
};

// --- GPU all-pairs kernels ------------------------------------------------------------------------
template <int D, class T>
class GpuAllPairs : public Evaluation {
 public:
  GpuAllPairs(const std::string& name, const Particles& p, const ForceSetup& s) : name_(name), n_(p.size()) {
    gpu::require("kernel " + name);
    std::vector<Body<T>> host(p.size());
    const std::vector<Body<double>> seen = bodies_as_seen(p, s.round_inputs_to_float ? Precision::f32 : Precision::f64);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = {T(seen[i].x), T(seen[i].y), T(seen[i].z), T(seen[i].m)};
    bodies_ = gpu::DeviceBuffer<Body<T>>(host);
    if (s.mask == Mask::near) cells_ = gpu::DeviceBuffer<Cell>(cells_from_positions(p, s.level, s.domain));
    acc_ = gpu::DeviceBuffer<Acc4<T>>(p.size());
    const std::uint32_t n = static_cast<std::uint32_t>(p.size());
    if (name == "allpairs-2d" && allpairs_2d_slices(n) > 1) partial_ = gpu::DeviceBuffer<Acc4<T>>(std::size_t(allpairs_2d_slices(n)) * n);
    view_.bodies = bodies_.data();
    view_.cells = s.mask == Mask::near ? cells_.data() : nullptr;
    view_.acc = acc_.data();
    view_.n = n;
    view_.eps2 = softening_squared<T>(s.softening);
    view_.guarded = !unguarded_is_safe<T>(s.softening, p.max_mass());
  }
  void launch() {
    if (name_ == "allpairs-naive")
      allpairs_naive<D, T>(view_);
    else if (name_ == "allpairs-tiled")
      allpairs_tiled<D, T>(view_);
    else
      allpairs_2d<D, T>(view_, partial_.data());
  }
  void run() override {
    launch();
    gpu::synchronize();
  }
  double run_timed_ms() override {
    timer_.start();
    launch();
    timer_.stop();
    return timer_.elapsed_ms();
  }
  std::vector<double> accelerations() override {
    const std::vector<Acc4<T>> a = acc_.download();
    std::vector<double> out(n_ * D);
    for (std::size_t i = 0; i < n_; ++i) {
      out[i * D] = a[i].x;
      out[i * D + 1] = a[i].y;
      if constexpr (D == 3) out[i * D + 2] = a[i].z;
    }
    return out;
  }
  void poison_output() override { acc_.fill(0xFF); }

 private:
  std::string name_;
  std::size_t n_;
  gpu::DeviceBuffer<Body<T>> bodies_;
  gpu::DeviceBuffer<Cell> cells_;
  gpu::DeviceBuffer<Acc4<T>> acc_, partial_;
  AllPairsView<T> view_;
  gpu::EventTimer timer_;
};
#endif

template <template <int, class> class E, class... Args>
std::unique_ptr<Evaluation> make(int dim, Precision p, Args&&... args) {
  if (dim == 2) {
    if (p == Precision::f32) return std::make_unique<E<2, float>>(std::forward<Args>(args)...);
    return std::make_unique<E<2, double>>(std::forward<Args>(args)...);
  }
  if (p == Precision::f32) return std::make_unique<E<3, float>>(std::forward<Args>(args)...);
  return std::make_unique<E<3, double>>(std::forward<Args>(args)...);
}

}  // namespace

std::unique_ptr<Evaluation> prepare(const KernelInfo& k, const Particles& p, const ForceSetup& s) {
  if (p.dim != 2 && p.dim != 3) throw UsageError("particles must be 2D or 3D");
  if (!(s.softening >= 0.0) || !std::isfinite(s.softening))
    throw UsageError("--softening must be a finite number >= 0");
  if (k.near_field || s.mask == Mask::near) check_level(p.dim, s.level, p.size(), ~0ull, "memory");
  if (k.gpu) gpu::require("kernel " + k.name);
  if (s.count_interactions && !k.near_field) throw UsageError("counting mode is for near-field kernels");
  if (k.name == "cpu-allpairs") return std::make_unique<CpuAllPairs>(p, s);
  if (!k.gpu) return make<CpuNearField>(p.dim, s.precision, k.name, p, s);
#if defined(NF_HAVE_CUDA)
  if (k.near_field) return make<GpuNearField>(p.dim, s.precision, k, p, s);
  return make<GpuAllPairs>(p.dim, s.precision, k.name, p, s);
#else
  throw UsageError("kernel " + k.name + " needs a CUDA GPU: " + gpu::unavailable_reason());
#endif
}

}  // namespace nf
