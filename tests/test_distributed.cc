// Distribution over several devices (distributed/), the parts that need no GPU: the loopback
// transports' checks, NEARFIELD_EMULATE_GPUS, --gpus and --cross-pairs checked before any work,
// which kernels send cross pairs once, and where libnccl is looked for.
#include <algorithm>
#include <filesystem>

#include "core/errors.h"
#include "distributed/exchange.h"
#include "distributed/nccl_transport.h"
#include "distributed/spread_method.h"
#include "methods/registry.h"
#include "helpers.h"

using namespace nf;

TEST_CASE("loopback transport refuses unmatched or mismatched messages") {
  LoopbackTransport t;
  int a = 1, b = 0;
  t.group_start();
  t.send(0, 1, &a, sizeof a);
  CHECK_THROWS_AS(t.group_end(), std::logic_error);
  t.group_start();
  t.send(0, 1, &a, sizeof a);
  t.recv(1, 0, &b, 2);
  CHECK_THROWS_AS(t.group_end(), std::logic_error);
  t.group_start();
  t.send(0, 1, &a, sizeof a);
  t.recv(1, 0, &b, sizeof b);
  t.group_end();
  CHECK(b == 1);
  CHECK(t.messages() == 1);
  CHECK_THROWS_AS(t.send(0, 1, &a, sizeof a), std::logic_error);
}

TEST_CASE("loopbacks check every message of a group before they move any; the device one copies on the GPU") {
  int a = 1, b = 2, x = 0, y = 0;
  auto mismatched_group = [&](LoopbackTransport& t) {
    t.group_start();
    t.send(0, 1, &a, sizeof a);
    t.recv(1, 0, &x, sizeof x);  // matches
    t.send(1, 0, &b, sizeof b);
    t.recv(0, 1, &y, 1);  // does not
    CHECK_THROWS_AS(t.group_end(), std::logic_error);
  };
  LoopbackTransport host;
  mismatched_group(host);
  CHECK(x == 0);  // nothing moved
  CHECK(host.messages() == 0);
  DeviceLoopbackTransport device;
  mismatched_group(device);  // refused before any device copy, so also without a GPU
  CHECK(device.messages() == 0);
  device.group_start();
  device.send(0, 1, &a, sizeof a);
  CHECK_THROWS_AS(device.group_end(), std::logic_error);  // a send nobody receives
  if (gpu::available()) {
    MESSAGE("skipped the refusal of a device copy without a GPU: this machine has one");
  } else {  // a matched message is a device copy: refused with the reason
    device.group_start();
    device.send(0, 1, &a, sizeof a);
    device.recv(1, 0, &x, sizeof x);
    CHECK_THROWS_AS(device.group_end(), UsageError);
  }
}

TEST_CASE("NEARFIELD_EMULATE_GPUS=1 is what turns emulation on (0 off, else refused); without a GPU it is refused like --gpus") {
  test::EnvScope emulate("NEARFIELD_EMULATE_GPUS", nullptr);
  CHECK_FALSE(emulating_gpus());
  emulate.set("0");
  CHECK_FALSE(emulating_gpus());
  emulate.set("yes");  // had been taken for 0 without a word
  CHECK_THROWS_WITH_AS(emulating_gpus(), "NEARFIELD_EMULATE_GPUS=yes: expected 0 or 1", UsageError);
  emulate.set("1");
  CHECK(emulating_gpus());
  CHECK_THROWS_AS(check_gpus(find_kernel("cpu-serial"), 2), UsageError);  // still GPU near-field kernels only
  CHECK_THROWS_AS(check_gpus(find_kernel("allpairs-tiled"), 2), UsageError);
  // A GPU full method runs on one GPU for now, a CPU one is a CPU method: refused before anything
  // else is asked of the machine.
  CHECK_THROWS_WITH_AS(check_gpus(find_kernel("fmm"), 2), doctest::Contains("runs on one GPU for now"), UsageError);
  CHECK_THROWS_WITH_AS(check_gpus(find_kernel("cpu-fmm"), 2), doctest::Contains("cpu-fmm is a CPU method"), UsageError);
  CHECK_THROWS_AS(check_gpus(find_kernel("bpb"), 0), UsageError);
  if (gpu::available())
    MESSAGE("skipped the refusal of emulated GPUs without a GPU: this machine has one");
  else
    CHECK_THROWS_WITH_AS(check_gpus(find_kernel("bpb"), 2), doctest::Contains("needs a CUDA GPU"), UsageError);
}

TEST_CASE("--gpus and --cross-pairs are checked before any work") {
  test::TempDir dir;
  auto r = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial", "--gpus",
                          "2", "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("CPU kernel") != std::string::npos);
  r = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial", "--gpus", "0",
                     "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("at least 1") != std::string::npos);
  r = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial",
                     "--cross-pairs", "thrice", "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("thrice") != std::string::npos);
  // A valid --cross-pairs on one GPU would have been dropped without a word.
  r = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial",
                     "--cross-pairs", "twice", "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("applies with --gpus above 1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("a.csv")));
  r = test::run_cli({"bench", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial",
                     "--cross-pairs", "once"});
  CHECK(r.code == 2);
  CHECK(r.err.find("applies with --gpus above 1") != std::string::npos);
  r = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-fmm", "--gpus", "2",
                     "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("cpu-fmm is a CPU method") != std::string::npos);
  r = test::run_cli({"bench", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial,cpu-n3", "--gpus",
                     "1,2", "--output", dir.file("r.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("--gpus 2") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("r.csv")));
  // Without a GPU (this build or machine) every GPU kernel is refused with the reason.
  if (gpu::available()) {
    MESSAGE("skipped the refusal of --gpus without a GPU: this machine has one");
  } else {
    r = test::run_cli({"validate", "--dist", "uniform", "--n", "50", "--level", "2", "--gpus", "2"});
    CHECK(r.code == 2);
    CHECK(r.err.find("GPU") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_cross_pairs("both"), UsageError);
  CHECK(parse_cross_pairs("once") == CrossPairs::once);
  CHECK(std::string(to_string(CrossPairs::automatic)) == "auto");
}

TEST_CASE("cross pairs: auto is once for Newton-3 kernels with atomics, twice otherwise; once needs Newton-3") {
  for (const KernelInfo* k : kernels_with(kGpu | kNearField)) {
    CAPTURE(k->name);
    const CrossPairs a = resolve_cross_pairs(*k, CrossPairs::automatic);
    CHECK(a == (k->newton3() && !k->deterministic() ? CrossPairs::once : CrossPairs::twice));
    CHECK(resolve_cross_pairs(*k, CrossPairs::twice) == CrossPairs::twice);
    if (k->newton3())
      CHECK(resolve_cross_pairs(*k, CrossPairs::once) == CrossPairs::once);
    else
      CHECK_THROWS_AS(resolve_cross_pairs(*k, CrossPairs::once), UsageError);
    CHECK(matches_one_gpu_bitwise(*k, CrossPairs::automatic) == k->deterministic());
    if (k->newton3()) CHECK_FALSE(matches_one_gpu_bitwise(*k, CrossPairs::once));
  }
}

TEST_CASE("libnccl candidates: existing files only, the CUDA toolkit's copy among them when it is there") {
  const std::vector<std::string> c = nccl_library_candidates();
  for (const std::string& f : c) {
    CHECK(std::filesystem::is_regular_file(f));
    CHECK(f.size() >= 12);
    CHECK(f.substr(f.size() - 12) == "libnccl.so.2");
  }
  for (const char* known : {"/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda-13.0/lib/libnccl.so.2"})
    if (std::filesystem::exists(known)) CHECK(std::find(c.begin(), c.end(), std::string(known)) != c.end());
  if (!nccl_compiled()) CHECK_THROWS_AS(load_nccl(), UsageError);
}
