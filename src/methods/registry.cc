#include "methods/registry.h"

#include <algorithm>
#include <sstream>

#include "core/errors.h"
#include "core/gpu_runtime.h"

namespace nf {

KernelInfo::KernelInfo(std::string n, unsigned t, std::string s, MethodFamily f)
    : name(std::move(n)), traits(t), summary(std::move(s)), make(std::move(f.make)), make_part(std::move(f.make_part)),
      make_host_part(std::move(f.make_host_part)) {}

std::string KernelInfo::trait_list() const {
  std::string s = gpu() ? "gpu" : "cpu";
  s += far_field() ? ", far-field" : near_field() ? ", near-field" : ", all-pairs";
  if (adaptive()) s += ", adaptive tree";
  if (newton3()) s += ", Newton-3";
  if (atomics()) s += ", atomics";
  s += deterministic() ? ", deterministic" : ", not deterministic";
  if (dense_tree()) s += ", dense tree";
  if (openmp()) s += ", OpenMP";
  if (small_boxes()) s += ", small boxes one-sided";
  return s;
}

// NF_KERNELS(Type, id): the exports named `id`_kernels of a kernel file (its last line,
// NF_EXPORT_...(id, ...)), declared here on the spot, so that a table line is all the registry
// needs of a new kernel. A CPU-only build has no GPU exports: their lines name empty tables and
// the family refuses to run them.
#define NF_KERNELS(Type, id) ([]() -> const Type& { extern const Type id##_kernels; return id##_kernels; }())
#if defined(NF_HAVE_CUDA)
#define NF_GPU_KERNELS(Type, id) NF_KERNELS(Type, id)
#else
#define NF_GPU_KERNELS(Type, id) (Type{})
#endif

// The table. Traits that follow from the family (gpu, near-field) are added here, the rest are
// the kernel's own claims. Summaries are what `bench --list` prints. (In namespace nf, not an
// unnamed one: NF_KERNELS's declarations name the exports of the innermost enclosing namespace.)
static std::list<KernelInfo> builtin_kernels() {
  const unsigned cpu_nf = kNearField | kDeterministic | kDenseTree;
  const unsigned gpu_nf = kGpu | kNearField | kDenseTree;
  const unsigned gpu_ap = kGpu | kDeterministic;
  const unsigned gpu_n3 = kGpu | kNearField | kNewton3;  // compact tree: any level
  return {
      {"cpu-serial", cpu_nf, "one thread, boxes in Z-order, own box then each neighbor (the paper's CPU)",
       cpu_near_field(NF_KERNELS(CpuNearFieldKernels, cpu_serial))},
      {"cpu-n3", cpu_nf | kNewton3, "one thread, half lists, each pair once (Newton's third law)",
       cpu_near_field(NF_KERNELS(CpuNearFieldKernels, cpu_n3))},
      {"cpu-omp", cpu_nf | kOpenMP, "OpenMP over boxes, full lists", cpu_near_field(NF_KERNELS(CpuNearFieldKernels, cpu_omp))},
      {"cpu-omp-n3", cpu_nf | kNewton3 | kOpenMP,
       "OpenMP, Newton-3: per-thread buffers over work-balanced static box ranges, merged in thread order",
       cpu_near_field(NF_KERNELS(CpuNearFieldKernels, cpu_omp_n3))},
#if defined(NF_HAVE_HWY)
      {"cpu-simd", kNearField | kDeterministic | kNewton3,
       "one thread, vectorized (Google Highway, instruction set chosen at run time), Newton-3: tiles of targets "
       "against the box's gathered half near field, a vector of sources at a time",
       cpu_near_field(NF_KERNELS(CpuNearFieldKernels, cpu_simd))},
      {"cpu-simd-omp", kNearField | kDeterministic | kOpenMP,
       "cpu-simd's vectors with full lists (each pair both ways), OpenMP over boxes: no shared writes",
       cpu_near_field(NF_KERNELS(CpuNearFieldKernels, cpu_simd_omp))},
      {"cpu-simd-omp-n3", kNearField | kDeterministic | kNewton3 | kOpenMP,
       "cpu-simd (Newton-3) with OpenMP over blocks of 2^D boxes in 2^D colour phases (blocks of one colour never "
       "write the same particle); repeatable at any thread count",
       cpu_near_field(NF_KERNELS(CpuNearFieldKernels, cpu_simd_omp_n3))},
#endif
      {"cpu-allpairs", kDeterministic | kOpenMP, "float64 O(N^2) reference (--mask all|near)", cpu_all_pairs()},
      {"cpu-fmm", kFarField | kDeterministic | kOpenMP,
       "fast multipole method: Cartesian expansions of the softened kernel (--order, --accuracy) over the tree with "
       "levels, near field by a CPU near-field kernel (--near)",
       cpu_fmm()},
      {"cpu-fmm-adaptive", kFarField | kAdaptive | kDeterministic | kOpenMP,
       "cpu-fmm's expansions on an adaptive tree: boxes split while they hold more than --leaf-size particles, "
       "each leaf's near field summed directly at its own level",
       cpu_fmm_adaptive()},
      {"allpairs-naive", gpu_ap, "thread per body, sources from global memory",
       gpu_all_pairs(NF_GPU_KERNELS(GpuAllPairsKernels, allpairs_naive))},
      {"allpairs-tiled", gpu_ap, "GPU Gems 3 ch. 31 shared-memory tiles (ground truth)",
       gpu_all_pairs(NF_GPU_KERNELS(GpuAllPairsKernels, allpairs_tiled))},
      {"allpairs-2d", gpu_ap, "2D-tiled: source slices with partial sums, then a reduction",
       gpu_all_pairs(NF_GPU_KERNELS(GpuAllPairsKernels, allpairs_2d))},
      {"ppt", gpu_nf | kDeterministic, "particle per thread, neighbors from global memory",
       gpu_near_field(NF_GPU_KERNELS(GpuNearFieldKernels, ppt))},
      {"bpt", gpu_nf | kDeterministic, "box per thread", gpu_near_field(NF_GPU_KERNELS(GpuNearFieldKernels, bpt))},
      {"bpb", gpu_nf | kDeterministic, "box per block, boxes staged in shared memory (original BPB)",
       gpu_near_field(NF_GPU_KERNELS(GpuNearFieldKernels, bpb))},
      {"bpb-n3", gpu_nf | kNewton3 | kAtomics, "improved BPB as the paper: half lists, shared counterforce array + atomics",
       gpu_near_field(NF_GPU_KERNELS(GpuNearFieldKernels, bpb_n3))},
      {"bpb-lb", kGpu | kNearField | kDeterministic | kSmallBoxes,
       "BPB over bounded work items (target chunks x source segments) in block-size classes: load-balanced",
       gpu_near_field(NF_GPU_KERNELS(GpuNearFieldKernels, bpb_lb))},
      {"n3-shfl", gpu_n3 | kAtomics | kSmallBoxes,
       "Newton-3, warp per work item: reaction summed in registers, reduced by warp shuffles; red.add out",
       gpu_near_field(NF_GPU_KERNELS(GpuNearFieldKernels, n3_shfl))},
      {"n3-rotate", gpu_n3 | kAtomics | kSmallBoxes,
       "Newton-3, warp per work item: reaction accumulators rotate lane to lane (no reduction); red.add out",
       gpu_near_field(NF_GPU_KERNELS(GpuNearFieldKernels, n3_rotate))},
      {"n3-colour", gpu_n3 | kDeterministic | kSmallBoxes,
       "Newton-3, lane rotation over box pairs in conflict-free colours: plain loads and stores, no atomics, bitwise "
       "repeatable",
       gpu_near_field(NF_GPU_KERNELS(GpuNearFieldKernels, n3_colour))},
      {"fmm", kGpu | kFarField,
       "fast multipole method on the GPU: cpu-fmm's expansions and lists, M2L by offset in shared memory, near field "
       "by a GPU near-field kernel (--near, default n3-rotate)",
       gpu_fmm()},
      {"fmm-adaptive", kGpu | kFarField | kAdaptive,
       "fmm's expansions and M2L on an adaptive tree: boxes split while they hold more than --leaf-size particles, "
       "each leaf's near field summed directly at its own level (a warp per chunk of targets and segment of sources)",
       gpu_fmm_adaptive()},
  };
}

namespace {

std::list<KernelInfo>& registry() {
  static std::list<KernelInfo> kernels = builtin_kernels();
  return kernels;
}

}  // namespace

const std::list<KernelInfo>& all_kernels() { return registry(); }

const char* default_cpu_near_kernel() {
#if defined(NF_HAVE_HWY)
  return "cpu-simd-omp-n3";
#else
  return "cpu-omp";
#endif
}

const KernelInfo& find_kernel(const std::string& name) {
  for (const KernelInfo& k : registry())
    if (k.name == name) return k;
#if !defined(NF_HAVE_HWY)
  if (name.rfind("cpu-simd", 0) == 0)
    throw UsageError("kernel '" + name + "' is not in this build: it needs Google Highway at configure time (Debian "
                     "package libhwy-dev)");
#endif
  std::string names;
  for (const KernelInfo& k : registry()) names += (names.empty() ? "" : ", ") + k.name;
  throw UsageError("unknown kernel '" + name + "' (kernels: " + names + ")");
}

std::vector<std::string> available_kernels() {
  std::vector<std::string> names;
  const bool gpu = gpu::available();
  for (const KernelInfo& k : registry())
    if (!k.gpu() || gpu) names.push_back(k.name);
  return names;
}

std::vector<std::string> parse_kernel_list(const std::string& text) {
  if (text.empty() || text == "all") return available_kernels();
  std::vector<std::string> names;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    find_kernel(item);
    // A kernel listed twice had been measured twice, its rows appended twice.
    if (std::find(names.begin(), names.end(), item) != names.end())
      throw UsageError("--kernel: '" + item + "' is listed twice");
    names.push_back(item);
  }
  if (names.empty()) throw UsageError("--kernel: no kernel named in '" + text + "'");
  return names;
}

std::vector<const KernelInfo*> kernels_with(unsigned required, unsigned excluded) {
  std::vector<const KernelInfo*> out;
  for (const KernelInfo& k : registry())
    if ((k.traits & required) == required && (k.traits & excluded) == 0) out.push_back(&k);
  return out;
}

KernelRegistration::KernelRegistration(KernelInfo k) : name_(k.name) {
  for (const KernelInfo& e : registry())
    if (e.name == k.name) throw UsageError("kernel '" + k.name + "' is already registered");
  registry().push_back(std::move(k));
}

KernelRegistration::~KernelRegistration() {
  registry().remove_if([this](const KernelInfo& k) { return k.name == name_; });
}

}  // namespace nf
