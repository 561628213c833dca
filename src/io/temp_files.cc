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
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];
struct sigaction previous[kSignalCount];  // what each signal did before the handler came

extern "C" void remove_temp_files_and_reraise(int sig) {
  const int saved = errno;
  for (Slot& s : slots)
    if (s.state.load() == kLive) ::unlink(s.path);
  for (int i = 0; i < kSignalCount; ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &previous[i], nullptr);
  errno = saved;
  // Blocked while this handler runs; delivered to the previous action (the default one: the
  // process ends by this signal) as soon as it returns.
  ::raise(sig);
}

}  // namespace

void install_temp_file_cleanup() {
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction now {};
    if (::sigaction(kSignals[i], nullptr, &now) != 0 || now.sa_handler == SIG_IGN) continue;
    if (now.sa_handler == remove_temp_files_and_reraise) continue;  // installed already
    previous[i] = now;
    struct sigaction ours {};
    ours.sa_handler = remove_temp_files_and_reraise;
    sigemptyset(&ours.sa_mask);
    for (int other : kSignals) sigaddset(&ours.sa_mask, other);  // one cleanup at a time
    ::sigaction(kSignals[i], &ours, nullptr);
  }
}

int register_temp_file(const std::string& path) {
  static std::once_flag once;
  std::call_once(once, install_temp_file_cleanup);
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
