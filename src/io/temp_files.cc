#include "io/temp_files.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace nf::io {
namespace {

// A slot is free, being filled (its path is not complete yet), or live. The handler reads only
// live slots; atomics on int are lock-free, hence safe to read in a signal handler.
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };
constexpr int kSlots = 64;
constexpr std::size_t kPathBytes = 4096;
struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathBytes];
};
Slot slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

const int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

extern "C" void remove_temp_files_and_reraise(int sig) {
  const int saved = errno;
  for (Slot& s : slots)
    if (s.state.load() == kLive) ::unlink(s.path);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  errno = saved;
  // Blocked while this handler runs; delivered with the default action as soon as it returns.
  ::raise(sig);
}

void install_handlers() {
  for (int sig : kSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
    struct sigaction ours {};
    ours.sa_handler = remove_temp_files_and_reraise;
    sigemptyset(&ours.sa_mask);
    for (int other : kSignals) sigaddset(&ours.sa_mask, other);  // one cleanup at a time
    ::sigaction(sig, &ours, nullptr);
  }
}

}  // namespace

int register_temp_file(const std::string& path) {
  static std::once_flag once;
  std::call_once(once, install_handlers);
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(kLive);
    return i;
  }
  return -1;
}

void unregister_temp_file(int slot) {
  if (slot >= 0 && slot < kSlots) slots[slot].state.store(kFree);
}

int live_temp_files() {
  int n = 0;
  for (const Slot& s : slots) n += s.state.load() == kLive;
  return n;
}

}  // namespace nf::io
