#pragma once
//! The CUDA runtime as plain C++: device discovery, memory, copies and event timers. Host code
//! uses this header and never sees a CUDA type; the implementation is gpu_runtime.cu, or
//! gpu_runtime_stub.cc in a CPU-only build, where every call but `available` throws UsageError.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <stdexcept>
#include <vector>

namespace nf::gpu {

//! True when the build has CUDA and a device answers.
bool available();
//! Why `available` is false (empty when it is true).
std::string unavailable_reason();
//! Throws UsageError with a one-line reason unless `available`; `what` names the requester.
void require(const std::string& what);
//! True when the NEARFIELD_REQUIRE_GPU environment variable is set to 1.
bool required_by_environment();

//! What cudaGetDeviceCount's failure means, in words that say what is missing (what
//! unavailable_reason returns, and test skips print): `no_device` for cudaErrorNoDevice or a count
//! of 0, `old_driver` for cudaErrorInsufficientDriver, which the runtime also answers on a machine
//! with no NVIDIA driver at all; `detail` is the call and CUDA's own message. "no CUDA device found
//! (cudaGetDeviceCount: ...)" unless an NVIDIA driver is installed (/proc/driver/nvidia) and older
//! than the runtime needs, or the error is another one ("no usable CUDA device (...)").
std::string missing_device_reason(bool no_device, bool old_driver, const std::string& detail);

//! What a results file records about the device.
struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int sm_clock_mhz = 0, mem_clock_mhz = 0;  //!< maximum clocks reported by the driver
  int runtime_version = 0, driver_version = 0;
  std::size_t total_bytes = 0, free_bytes = 0;
  std::size_t shared_per_block_optin = 0;
};
//! Properties of `device` (-1: the current device, which is device 0 unless a multi-GPU run
//! selected another with set_device or DeviceScope).
DeviceInfo device_info(int device = -1);

//! CUDA devices on this machine (0 without a usable driver or device).
int device_count();
//! The device this thread's allocations, copies and launches go to (cudaGetDevice).
int current_device();
//! Makes `device` current for this thread (cudaSetDevice); every kernel launches on the current
//! device's default stream, so this is how one process drives several GPUs.
void set_device(int device);

//! Makes `device` current for the lifetime of the scope, then restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_;
};

void* allocate(std::size_t bytes);
void release(void* p) noexcept;
//! Complete on return where a StreamScope names a stream other than the default one (its kernels
//! would not wait for a copy from pageable memory still landing).
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);
//! Asynchronous on the thread's current stream (current_stream(): the default stream unless a
//! StreamScope names another).
void copy_on_device(void* dst, const void* src, std::size_t bytes);
void fill_bytes(void* dst, int value, std::size_t bytes);  //!< as copy_on_device
//! Holds the current stream for at least `ms` milliseconds (one thread waiting on the GPU's
//! clock): the tests of stream ordering use it to make a missing wait show.
void delay(double ms);
void synchronize();

//! Typed device allocation that frees itself.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n), p_(n ? static_cast<T*>(allocate(n * sizeof(T))) : nullptr) {}
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { release(p_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : n_(o.n_), p_(o.p_) { o.n_ = 0, o.p_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release(p_);
      n_ = o.n_, p_ = o.p_;
      o.n_ = 0, o.p_ = nullptr;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  void upload(const std::vector<T>& host) {
    if (host.size() != n_) throw std::logic_error("DeviceBuffer::upload: size mismatch");
    if (n_) copy_to_device(p_, host.data(), bytes());
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_) copy_to_host(host.data(), p_, bytes());
    return host;
  }
  //! Fills every byte (0xFF turns floats into NaN: used to poison outputs before a test run).
  void fill(int byte) {
    if (n_) fill_bytes(p_, byte, bytes());
  }

 private:
  std::size_t n_ = 0;
  T* p_ = nullptr;
};

//! Scratch device memory kept between launches and grown on demand (like CUB's temporary
//! storage): kernels with the kScratch trait carve what they need out of it on every launch.
class Workspace {
 public:
  //! At least `bytes` of device memory (contents undefined). Reallocates only when asked for
  //! more than ever before, so repeated launches of one evaluation allocate nothing.
  void* get(std::size_t bytes) {
    if (bytes > buffer_.size()) buffer_ = DeviceBuffer<unsigned char>(bytes);
    return buffer_.data();
  }

 private:
  DeviceBuffer<unsigned char> buffer_;
};

//! A stream of the device current at construction. A blocking stream (the default) orders with
//! the default stream: work there waits for it and it waits for work there. A non-blocking one
//! (`blocking` false) does not, and is joined to the default stream with Events only; `high`
//! gives it the device's greatest priority (its blocks are scheduled first where both wait). The
//! handle is a cudaStream_t, kept opaque so host code sees no CUDA type.
class Stream {
 public:
  explicit Stream(bool blocking = true, bool high = false);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* handle() const { return s_; }

 private:
  void* s_ = nullptr;
};

//! One CUDA event (timing enabled) of the device current at construction. Its record and wait
//! calls need that device current. `stream` null means the default stream.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  //! Records the event on `stream` (default stream when null).
  void record(const Stream* stream = nullptr);
  //! Makes `stream` (default stream when null) of the current device wait for this event; works
  //! across devices, which is how one GPU's work waits for another's.
  void wait_on(const Stream* stream = nullptr) const;
  //! Waits for the event on the host.
  void synchronize() const;
  //! Milliseconds from `start` to this event (both recorded on the same device).
  double elapsed_since(const Event& start) const;

 private:
  void* e_ = nullptr;
};

//! The stream this thread's kernels launch on where a launch site reads it (the far field's:
//! farfield/*.cu launch on gpu::launch_stream(), core/launch.cuh): the default stream (null)
//! unless a StreamScope of this thread names another.
void* current_stream();

//! Makes `stream` (the default stream when null) the thread's current stream while it lives (the
//! previous one after).
class StreamScope {
 public:
  explicit StreamScope(const Stream* stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  void* previous_;
};

//! Independent work forked from one stream onto streams of its own and joined back to it: the
//! levels of the far field's M2L (each reads its own level's moments and adds to its own locals),
//! so that a small level's few blocks run beside another level's instead of after them. The
//! streams are non-blocking, made on the first fork (again if the priority asked changes; `high`:
//! the device's greatest, as the far field's own stream under NEARFIELD_OVERLAP=high); Events order
//! them both ways, whether `from` is the default stream or not.
//!
//!   fork.run(s, n, [&](int i) { launch item i });   // item i on stream i % size(), under a
//!                                                   // StreamScope; s waits for them all after
class StreamFork {
 public:
  explicit StreamFork(int count) : count_(count < 1 ? 1 : count) {}
  int size() const { return count_; }
  const Stream* stream(int i) const { return streams_.at(std::size_t(i)).get(); }
  //! Every stream waits for the work of `from` (null: the default stream) so far.
  void fork(const Stream* from, bool high = false) {
    if (streams_.empty() || high != high_) {
      streams_.clear();
      done_.clear();
      go_ = std::make_unique<Event>();
      high_ = high;
      for (int i = 0; i < count_; ++i) {
        streams_.push_back(std::make_unique<Stream>(false, high));
        done_.push_back(std::make_unique<Event>());
      }
    }
    go_->record(from);
    for (const auto& s : streams_) go_->wait_on(s.get());
  }
  //! `into` waits for every stream's work so far.
  void join(const Stream* into) {
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      done_[i]->record(streams_[i].get());
      done_[i]->wait_on(into);
    }
  }
  //! fork(from, high), then f(i) for i = 0 .. n - 1 with stream i % size() current, then
  //! join(from), also when an f throws (so that no forked work is left running unordered with
  //! `from`'s later work; the first error is the one reported).
  template <class F>
  void run(const Stream* from, int n, F&& f, bool high = false) {
    fork(from, high);
    struct Join {
      StreamFork& fork;
      const Stream* into;
      bool joined = false;
      ~Join() {
        if (joined) return;
        try {
          fork.join(into);
        } catch (...) {  // unwinding already
        }
      }
    } on_exit{*this, from};
    for (int i = 0; i < n; ++i) {
      const StreamScope scope(stream(i % count_));
      f(i);
    }
    on_exit.joined = true;
    join(from);
  }

 private:
  int count_;
  bool high_ = false;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::unique_ptr<Event> go_;
  std::vector<std::unique_ptr<Event>> done_;
};

//! A pair of CUDA events: start(), stop(), then elapsed_ms() waits for stop. Each is recorded on
//! `stream` (the default stream when null).
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(const Stream* stream = nullptr);
  void stop(const Stream* stream = nullptr);
  double elapsed_ms();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nf::gpu
