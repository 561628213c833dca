#pragma once
//! The registry: the one place where a kernel (a force method) is named. An entry holds the name
//! users type after --kernel, the traits it claims, a summary, and its family's factory. Every
//! command and test goes through it, so a registered kernel is run and checked everywhere without
//! being listed again, and a name that is not registered is an error: it can never fall through
//! to another kernel.
//!
//! Adding a kernel: one file in src/nearfield/ (or src/allpairs/) ending with its export line
//! (NF_EXPORT_CPU_NEAR_FIELD, NF_EXPORT_GPU_NEAR_FIELD, NF_EXPORT_GPU_NEAR_FIELD_DRIVER or
//! NF_EXPORT_GPU_ALL_PAIRS), and one line in the table of registry.cc naming that export with
//! NF_KERNELS. Adding a force method (a new family): a folder with its method class, and a family
//! function here that the table's line calls.

#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "allpairs/allpairs_gpu.h"
#include "core/particles.h"
#include "methods/force_method.h"
#include "methods/host_part_method.h"
#include "methods/part_method.h"
#include "nearfield/nearfield_cpu.h"
#include "nearfield/nearfield_gpu.h"

namespace nf {

struct KernelInfo;

//! What a kernel claims to be and do, as flags (combine with |). Claims, not switches: tests
//! check each claim (a deterministic kernel must repeat bit for bit, a Newton-3 one must conserve
//! momentum), and the code that has a behaviour implements it without reading these.
enum KernelTrait : unsigned {
  kGpu = 1u << 0,            //!< runs on the GPU (else on the CPU)
  kNearField = 1u << 1,      //!< uses the tree (else all-pairs, with --mask)
  kNewton3 = 1u << 2,        //!< computes each pair once and applies it to both particles
  kAtomics = 1u << 3,        //!< accumulates its output with atomics
  kDeterministic = 1u << 4,  //!< repeated runs on the same input give bitwise identical output
  kDenseTree = 1u << 6,      //!< reads the paper's dense box arrays (boxIdx over all 4^K / 8^K boxes)
  kOpenMP = 1u << 7,         //!< CPU kernel using every OpenMP thread (--threads)
  kSmallBoxes = 1u << 8,     //!< boxes under SmallBoxPolicy's size computed one particle per thread,
                             //!< one-sided (so a Newton-3 kernel evaluates their pairs in both directions)
  kFarField = 1u << 9,       //!< a full method: the near field and the far field through expansions
                             //!< (every pair, to the expansions' accuracy; docs/design.md §16)
  kAdaptive = 1u << 10,      //!< a full method on the adaptive tree (tree/adaptive.h, --leaf-size)
};

//! Makes a kernel's method for a setup and particles like `like` (dimension, N and masses).
using MethodFactory = std::function<std::unique_ptr<ForceMethod>(const KernelInfo&, const MethodSetup&, const Particles&)>;
//! Makes a kernel's method as one part of an evaluation spread over several devices (distributed/):
//! only kernels that can be spread have one.
using PartFactory = std::function<std::unique_ptr<PartMethod>(const KernelInfo&, const MethodSetup&, const Particles&)>;
//! The same for the CPU kernels spread over several processes (one part per MPI rank).
using HostPartFactory =
    std::function<std::unique_ptr<HostPartMethod>(const KernelInfo&, const MethodSetup&, const Particles&)>;

//! How a family runs its kernels: the factory, and the part factory where it has one.
struct MethodFamily {
  MethodFactory make;
  PartFactory make_part;
  HostPartFactory make_host_part = {};  // (a default: families without host parts need not name it)
};

//! A kernel as users name it after --kernel.
struct KernelInfo {
  std::string name;
  unsigned traits = 0;
  std::string summary;
  MethodFactory make;
  PartFactory make_part;  //!< empty: the kernel cannot be spread over several devices
  HostPartFactory make_host_part;  //!< empty: the kernel cannot be spread over several CPU processes

  //! The traits, spelled out (read from `traits`, the one place they are kept).
  bool has(unsigned t) const { return (traits & t) == t; }
  bool gpu() const { return has(kGpu); }
  bool near_field() const { return has(kNearField); }
  bool newton3() const { return has(kNewton3); }
  bool atomics() const { return has(kAtomics); }
  bool deterministic() const { return has(kDeterministic); }
  bool dense_tree() const { return has(kDenseTree); }
  bool openmp() const { return has(kOpenMP); }
  bool small_boxes() const { return has(kSmallBoxes); }
  bool far_field() const { return has(kFarField); }
  bool adaptive() const { return has(kAdaptive); }
  //! Reads the tree at a level: a near-field kernel, or a full method (whose leaf level it is).
  bool uses_tree() const { return near_field() || far_field(); }

  KernelInfo() = default;
  KernelInfo(std::string name, unsigned traits, std::string summary, MethodFamily family);
  //! "gpu, near-field, Newton-3, atomics, ..." for listings.
  std::string trait_list() const;
};

//! The families (one method class each, methods/*.cc); a table line passes the kernel's exports.
MethodFamily cpu_near_field(const CpuNearFieldKernels& kernels);
MethodFamily cpu_all_pairs();
MethodFamily gpu_near_field(const GpuNearFieldKernels& kernels);
MethodFamily gpu_all_pairs(const GpuAllPairsKernels& kernels);
//! The CPU fast multipole method (methods/cpu_fmm.cc): far field in the setup's precision, near
//! field by a registered CPU near-field kernel.
MethodFamily cpu_fmm();
//! The GPU fast multipole method (methods/gpu_fmm.cc): the far field's passes on the GPU over the
//! tree of a GPU near-field kernel (--near), which adds the near field into the same output.
MethodFamily gpu_fmm();
//! The adaptive fast multipole methods (tree/adaptive.h): the CPU reference
//! (methods/cpu_fmm_adaptive.cc) and the GPU method (methods/gpu_fmm_adaptive.cc).
MethodFamily cpu_fmm_adaptive();
MethodFamily gpu_fmm_adaptive();

//! Every registered kernel, CPU first, in registration order (a list: registering a test
//! kernel never moves the others, so references stay valid).
const std::list<KernelInfo>& all_kernels();
//! The kernel of this name; UsageError listing the names otherwise.
const KernelInfo& find_kernel(const std::string& name);
//! The near-field kernel a CPU full method (cpu-fmm) runs without --near: the fastest CPU kernel of
//! this build, cpu-simd-omp-n3 (built with Google Highway; 10x to 20x cpu-omp as cpu-fmm's near
//! field, results/cpu-simd and methods/full_level_rule.h's rates), else cpu-omp.
const char* default_cpu_near_kernel();
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
