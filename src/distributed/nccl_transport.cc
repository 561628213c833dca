#include "distributed/nccl_transport.h"

#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

#include "core/errors.h"
#include "core/gpu_runtime.h"

#if defined(NF_HAVE_NCCL)
#include <nccl.h>
#endif

namespace nf {
namespace {

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
[[maybe_unused]] bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> glob_files(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i)
      if (is_file(g.gl_pathv[i])) out.push_back(g.gl_pathv[i]);
  ::globfree(&g);
  return out;
}

// The folder the Python package nvidia-nccl-cu* installed its library in, as python3 reports it
// (empty when there is no python3 or no such package).
std::string python_nccl_dir() {
  FILE* f = ::popen(
      "python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], \"lib\"))' 2>/dev/null",
      "r");
  if (!f) return "";
  char buf[4096] = {};
  const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
  ::pclose(f);
  std::string dir = got ? buf : "";
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
  return dir;
}

}  // namespace

std::vector<std::string> nccl_library_candidates() {
  std::vector<std::string> out;
  auto add = [&](const std::string& pattern) {
    for (const std::string& f : glob_files(pattern))
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/local/cuda/targets/*/lib",
                          "/usr/local/cuda-*/lib64", "/usr/local/cuda-*/lib", "/usr/local/cuda-*/targets/*/lib",
                          "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/lib"})
    add(std::string(dir) + "/libnccl.so.2");
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  for (const std::string& site :
       {std::string("/usr/local/lib/python3*/dist-packages"), std::string("/usr/local/lib/python3*/site-packages"),
        std::string("/usr/lib/python3*/dist-packages"), std::string("/usr/lib/python3/dist-packages"),
        std::string("/opt/conda/lib/python3*/site-packages"), std::string("/opt/*/lib/python3*/site-packages"),
        home + "/.local/lib/python3*/site-packages"})
    add(site + "/nvidia/nccl/lib/libnccl.so.2");
  const std::string py = python_nccl_dir();
  if (!py.empty()) add(py + "/libnccl.so.2");
  return out;
}

#if defined(NF_HAVE_NCCL)
namespace {

// The entry points this program calls, from the loaded library. Their types come from nccl.h, so
// a signature mismatch is a compile error here, not a crash at run time.
struct Api {
  std::string path;
  int version = 0;
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;  // NCCL >= 2.13; may stay null
};

template <class F>
void bind(void* handle, const char* name, F& f, const std::string& path, bool required = true) {
  f = reinterpret_cast<F>(::dlsym(handle, name));
  if (!f && required)
    throw UsageError(path + " has no " + name + ": multi-GPU runs need NCCL 2.7 or newer (send/recv)");
}

// Opens the first library that loads; UsageError listing what was tried otherwise.
void* open_library(std::string& path) {
  std::vector<std::string> tried;
  auto attempt = [&](const std::string& p) -> void* {
    ::dlerror();
    void* h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) path = p;
    else {
      const char* why = ::dlerror();
      tried.push_back(p + (why ? " (" + std::string(why) + ")" : ""));
    }
    return h;
  };
  if (const char* env = std::getenv("NEARFIELD_NCCL_LIB"); env && *env) {
    const std::string e = env;
    const std::string file = is_dir(e) ? e + "/libnccl.so.2" : e;
    if (void* h = attempt(file)) return h;
    throw UsageError("NEARFIELD_NCCL_LIB=" + e + ": cannot load " + tried.back());
  }
  if (void* h = attempt("libnccl.so.2")) return h;
  const std::vector<std::string> candidates = nccl_library_candidates();
  for (const std::string& c : candidates)
    if (void* h = attempt(c)) return h;
  std::string list;
  for (const std::string& t : tried) list += "\n  " + t;
  throw UsageError(
      "more than one GPU needs NCCL at run time, and libnccl.so.2 was not found. Tried:" + list +
      "\n  (also searched: /usr/local/cuda*/lib*, /usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/local/lib, the Python "
      "package nvidia-nccl-cu13 in the usual site-packages and through python3)\nSet NEARFIELD_NCCL_LIB to the library "
      "file or its folder, or add that folder to LD_LIBRARY_PATH.");
}

// NVLink multicast stays off: send/recv never uses it, and on shared machines it must not run.
void disable_multicast() { ::setenv("NCCL_NVLS_ENABLE", "0", 1); }

const Api& api() {
  static std::once_flag once;
  static Api a;
  static std::string failure;
  std::call_once(once, [] {
    disable_multicast();  // before the library reads its environment
    try {
      void* h = open_library(a.path);
      bind(h, "ncclGetVersion", a.get_version, a.path);
      bind(h, "ncclGetErrorString", a.error_string, a.path);
      bind(h, "ncclGetUniqueId", a.get_unique_id, a.path);
      bind(h, "ncclCommInitAll", a.comm_init_all, a.path);
      bind(h, "ncclCommInitRank", a.comm_init_rank, a.path);
      bind(h, "ncclCommDestroy", a.comm_destroy, a.path);
      bind(h, "ncclGroupStart", a.group_start, a.path);
      bind(h, "ncclGroupEnd", a.group_end, a.path);
      bind(h, "ncclSend", a.send, a.path);
      bind(h, "ncclRecv", a.recv, a.path);
      bind(h, "ncclGetLastError", a.last_error, a.path, false);
      Dl_info where{};  // the file the loader picked, when it searched by name
      if (::dladdr(reinterpret_cast<void*>(a.get_version), &where) && where.dli_fname) a.path = where.dli_fname;
      a.get_version(&a.version);
      if (a.version < 2700)
        throw UsageError(a.path + " is NCCL version code " + std::to_string(a.version) +
                         ": multi-GPU runs need NCCL 2.7 or newer (send/recv)");
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw UsageError(failure);
  return a;
}

std::string version_text(int code) {
  // 2.9 and later: major * 10000 + minor * 100 + patch; earlier: major * 1000 + minor * 100 + patch.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

void check(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  const Api& a = api();
  std::string msg = std::string("NCCL ") + what + " failed: " + a.error_string(r);
  if (a.last_error) {
    const char* last = a.last_error(comm);
    if (last && *last) msg += std::string(" (") + last + ")";
  }
  throw std::runtime_error(msg);
}

}  // namespace

bool nccl_compiled() { return true; }

std::string load_nccl() {
  const Api& a = api();
  return a.path + " (NCCL " + version_text(a.version) + ")";
}

struct NcclTransport::Local {
  int part = 0, device = 0;
  ncclComm_t comm = nullptr;
  std::unique_ptr<gpu::Stream> stream;
  std::unique_ptr<gpu::Event> ready, done;  // default stream -> NCCL stream, and back
  void make_stream() {
    gpu::DeviceScope scope(device);
    stream = std::make_unique<gpu::Stream>();
    ready = std::make_unique<gpu::Event>();
    done = std::make_unique<gpu::Event>();
  }
};

std::shared_ptr<NcclTransport> NcclTransport::for_devices(int gpus) {
  static std::mutex mutex;
  // Kept for the life of the process on purpose: tearing communicators down in static
  // destructors races the library's own teardown at exit.
  static auto* made = new std::map<int, std::shared_ptr<NcclTransport>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& t = (*made)[gpus];
  if (t) return t;
  api();
  disable_multicast();
  std::vector<ncclComm_t> comms(gpus, nullptr);
  std::vector<int> devices(gpus);
  for (int g = 0; g < gpus; ++g) devices[g] = g;
  {
    gpu::DeviceScope keep(gpu::current_device());  // ncclCommInitAll changes the current device
    check(api().comm_init_all(comms.data(), gpus, devices.data()), "ncclCommInitAll");
  }
  std::shared_ptr<NcclTransport> made_now(new NcclTransport());
  for (int g = 0; g < gpus; ++g) {
    auto l = std::make_unique<Local>();
    l->part = g;
    l->device = g;
    l->comm = comms[g];
    l->make_stream();
    made_now->local_.push_back(std::move(l));
  }
  t = made_now;
  return t;
}

NcclTransport::NcclTransport(int rank, int ranks, int device, const std::string& unique_id) {
  if (unique_id.size() != sizeof(ncclUniqueId)) throw std::logic_error("NcclTransport: an ncclUniqueId has 128 bytes");
  disable_multicast();
  ncclUniqueId id;
  std::copy(unique_id.begin(), unique_id.end(), id.internal);
  auto l = std::make_unique<Local>();
  l->part = rank;
  l->device = device;
  {
    gpu::DeviceScope scope(device);
    check(api().comm_init_rank(&l->comm, ranks, id, rank), "ncclCommInitRank");
  }
  l->make_stream();
  local_.push_back(std::move(l));
}

NcclTransport::~NcclTransport() {
  for (auto& l : local_)
    if (l->comm) api().comm_destroy(l->comm);
}

NcclTransport::Local& NcclTransport::local(int part) {
  for (auto& l : local_)
    if (l->part == part) return *l;
  throw std::logic_error("NcclTransport: part " + std::to_string(part) + " is not driven by this process");
}

void NcclTransport::group_start() {
  for (auto& l : local_) {
    gpu::DeviceScope scope(l->device);
    l->ready->record();                  // after everything on the default stream so far
    l->ready->wait_on(l->stream.get());  // the transfers wait for it
  }
  check(api().group_start(), "ncclGroupStart");
}

void NcclTransport::send(int part, int peer, const void* data, std::size_t bytes) {
  Local& l = local(part);
  check(api().send(data, bytes, ncclUint8, peer, l.comm, static_cast<cudaStream_t>(l.stream->handle())), "ncclSend",
        l.comm);
}

void NcclTransport::recv(int part, int peer, void* data, std::size_t bytes) {
  Local& l = local(part);
  check(api().recv(data, bytes, ncclUint8, peer, l.comm, static_cast<cudaStream_t>(l.stream->handle())), "ncclRecv",
        l.comm);
}

void NcclTransport::group_end() {
  check(api().group_end(), "ncclGroupEnd");
  for (auto& l : local_) {
    gpu::DeviceScope scope(l->device);
    l->done->record(l->stream.get());  // after the transfers
    l->done->wait_on();                // the default stream's next kernels wait for them
  }
}

std::string nccl_unique_id() {
  ncclUniqueId id;
  check(api().get_unique_id(&id), "ncclGetUniqueId");
  return std::string(id.internal, sizeof id.internal);
}

#else  // no nccl.h at configure time

namespace {
const char* kNoNccl =
    "this build has no NCCL support (nccl.h was not found beside the CUDA toolkit when it was configured): "
    "--gpus above 1 is not available";
}

bool nccl_compiled() { return false; }
std::string load_nccl() { throw UsageError(kNoNccl); }
struct NcclTransport::Local {};
std::shared_ptr<NcclTransport> NcclTransport::for_devices(int) { throw UsageError(kNoNccl); }
NcclTransport::NcclTransport(int, int, int, const std::string&) { throw UsageError(kNoNccl); }
NcclTransport::~NcclTransport() = default;
NcclTransport::Local& NcclTransport::local(int) { throw UsageError(kNoNccl); }
void NcclTransport::group_start() { throw UsageError(kNoNccl); }
void NcclTransport::send(int, int, const void*, std::size_t) { throw UsageError(kNoNccl); }
void NcclTransport::recv(int, int, void*, std::size_t) { throw UsageError(kNoNccl); }
void NcclTransport::group_end() { throw UsageError(kNoNccl); }
std::string nccl_unique_id() { throw UsageError(kNoNccl); }

#endif

}  // namespace nf
