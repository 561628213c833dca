#pragma once
//! The kernel registry: the one place where a kernel is named. An entry holds the name users
//! type after --kernel, the kernel's traits, and how to run it (a factory that prepares an
//! Evaluation). `forces`, `validate`, `bench`, the experiments and the tests all go through it,
//! so a kernel registered here is run and checked everywhere without being listed again, and a
//! name that is not registered is an error: it can never fall through to another kernel.
//!
//! Adding a kernel: write it (a CPU function in src/nearfield/, or a GPU driver in a .cu file),
//! then add one line to the table in kernels.cc with `cpu_near_field`, `gpu_near_field`, ...

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "allpairs/allpairs_gpu.h"
#include "core/particles.h"
#include "nearfield/nearfield_cpu.h"
#include "nearfield/nearfield_gpu.h"

namespace nf {

class Evaluation;
class ForceField;
struct FieldSetup;
struct ForceSetup;
struct KernelInfo;

//! What a kernel is and does, as flags (combine with |).
enum KernelTrait : unsigned {
  kGpu = 1u << 0,            //!< runs on the GPU (else on the CPU)
  kNearField = 1u << 1,      //!< uses the tree (else all-pairs, with --mask)
  kNewton3 = 1u << 2,        //!< computes each pair once and applies it to both particles
  kAtomics = 1u << 3,        //!< accumulates its output with atomics (zeroed inside each evaluation)
  kDeterministic = 1u << 4,  //!< repeated runs on the same input give bitwise identical output
  kScratch = 1u << 5,        //!< needs scratch memory beyond its output (allocated by the harness)
  kDenseTree = 1u << 6,      //!< reads the paper's dense box arrays (boxIdx over all 4^K / 8^K boxes)
  kOpenMP = 1u << 7,         //!< CPU kernel using every OpenMP thread (--threads)
  kSmallBoxes = 1u << 8,     //!< boxes under SmallBoxPolicy's size computed one particle per thread,
                             //!< one-sided (so a Newton-3 kernel evaluates their pairs in both directions)
};

//! Prepares one evaluation of a kernel on particles (inputs converted and uploaded, tree built).
using KernelFactory = std::function<std::unique_ptr<Evaluation>(const KernelInfo&, const Particles&, const ForceSetup&)>;

//! Makes a kernel's force field for a simulation (force_field.h) of particles like `initial`
//! (dimension, N and masses do not change during a simulation).
using ForceFieldFactory =
    std::function<std::unique_ptr<ForceField>(const KernelInfo&, const Particles& initial, const FieldSetup&)>;

//! How a kernel family runs its kernels: one prepared evaluation (forces, validate, bench), and a
//! force field that follows moving particles (simulate).
struct KernelFamily {
  KernelFactory make;
  ForceFieldFactory make_field;  //!< empty: the kernel cannot drive a simulation
  KernelFamily(KernelFactory m, ForceFieldFactory f = {}) : make(std::move(m)), make_field(std::move(f)) {}
};

//! A kernel as users name it after --kernel.
struct KernelInfo {
  std::string name;
  unsigned traits = 0;
  std::string summary;
  KernelFactory make;            //!< empty for a GPU kernel in a CPU-only build
  ForceFieldFactory make_field;  //!< empty for a GPU kernel in a CPU-only build

  //! The traits, spelled out (read from `traits`, the one place they are kept).
  bool has(unsigned t) const { return (traits & t) == t; }
  bool gpu() const { return has(kGpu); }
  bool near_field() const { return has(kNearField); }
  bool newton3() const { return has(kNewton3); }
  bool atomics() const { return has(kAtomics); }
  bool deterministic() const { return has(kDeterministic); }
  bool scratch() const { return has(kScratch); }
  bool dense_tree() const { return has(kDenseTree); }
  bool openmp() const { return has(kOpenMP); }
  bool small_boxes() const { return has(kSmallBoxes); }

  KernelInfo() = default;
  KernelInfo(std::string name, unsigned traits, std::string summary, KernelFamily family);
  //! "gpu, near-field, Newton-3, atomics, ..." for listings.
  std::string trait_list() const;
};

//! One driver per (dimension, scalar type): what a registry line hands to a family's factory.
template <template <class> class Fn>
struct PerShape {
  Fn<float> f2 = nullptr, f3 = nullptr;
  Fn<double> d2 = nullptr, d3 = nullptr;
  template <int D, class T>
  Fn<T> get() const {
    if constexpr (std::is_same_v<T, float>) return D == 2 ? f2 : f3;
    else return D == 2 ? d2 : d3;
  }
};
template <class T>
using CpuNearFieldFn = void (*)(const HostNearField<T>&);
template <class T>
using GpuNearFieldFn = void (*)(const NearFieldView<T>&);
template <class T>
using GpuNearFieldMakerFn = std::unique_ptr<GpuNearFieldKernel<T>> (*)();
template <class T>
using GpuAllPairsFn = void (*)(const AllPairsView<T>&);

//! The four instantiations of a driver template, for a PerShape.
#define NF_PER_SHAPE(fn) {&fn<2, float>, &fn<3, float>, &fn<2, double>, &fn<3, double>}
#if defined(NF_HAVE_CUDA)
#define NF_GPU_PER_SHAPE(fn) NF_PER_SHAPE(fn)
#else
#define NF_GPU_PER_SHAPE(fn) {}
#endif

//! The kernel families (methods/eval_*.cc): a family owns the data layout and the timing of its
//! kernels, for one evaluation and for a simulation's force field; the driver computes.
KernelFamily cpu_near_field(PerShape<CpuNearFieldFn> drivers);
KernelFamily cpu_all_pairs();
KernelFamily gpu_near_field(PerShape<GpuNearFieldFn> drivers);
//! GPU near-field kernels with a plan (GpuNearFieldKernel): `makers` create one per evaluation.
KernelFamily gpu_near_field_planned(PerShape<GpuNearFieldMakerFn> makers);
KernelFamily gpu_all_pairs(PerShape<GpuAllPairsFn> drivers);

//! Every registered kernel, CPU first, in registration order (a list: registering a test
//! kernel never moves the others, so references stay valid).
const std::list<KernelInfo>& all_kernels();
//! The kernel of this name; UsageError listing the names otherwise.
const KernelInfo& find_kernel(const std::string& name);
//! Kernels this machine can run (GPU ones only with a device).
std::vector<std::string> available_kernels();
//! Splits "a,b,c" and checks every name (empty or "all": every available kernel).
std::vector<std::string> parse_kernel_list(const std::string& text);
//! Registered kernels with all of `required` and none of `excluded` traits (tests iterate these).
std::vector<const KernelInfo*> kernels_with(unsigned required, unsigned excluded = 0);

//! Adds a kernel to the registry for the lifetime of this object (tests register deliberately
//! wrong kernels this way). Throws UsageError on a duplicate name.
class KernelRegistration {
 public:
  explicit KernelRegistration(KernelInfo k);
  ~KernelRegistration();
  KernelRegistration(const KernelRegistration&) = delete;
  KernelRegistration& operator=(const KernelRegistration&) = delete;

 private:
  std::string name_;
};

}  // namespace nf
