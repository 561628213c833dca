// Outputs that never destroy (io/output_file.h, docs/design.md §6): a regular file or a new name
// is replaced through a temporary file; devices, FIFOs and standard output are written in place
// with write errors named; symbolic links are followed and kept; temporary files go away when a
// signal ends the process; outputs and inputs are checked before any work.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "core/errors.h"
#include "io/input_path.h"
#include "io/output_file.h"
#include "io/temp_files.h"
#include "helpers.h"

using namespace nf;
using nf::test::read_text;
using nf::test::run_cli;
using nf::test::TempDir;
using nf::test::write_text;

namespace {

bool is_char_device(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

// Names in `dir` that look like temporary files (NAME.tmp.PID.N).
int temp_files_in(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    n += e.path().filename().string().find(".tmp.") != std::string::npos;
  return n;
}

// Standard output sent to `path` for the life of the scope (in-process tests of "-").
class StdoutTo {
 public:
  explicit StdoutTo(const std::string& path) : saved_(::dup(1)) {
    std::fflush(stdout);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::close(fd);
  }
  ~StdoutTo() {
    std::fflush(stdout);
    ::dup2(saved_, 1);
    ::close(saved_);
  }

 private:
  int saved_;
};

const std::vector<std::string> kForces = {"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel",
                                          "cpu-serial", "--output"};
std::vector<std::string> forces_to(const std::string& output) {
  std::vector<std::string> args = kForces;
  args.push_back(output);
  return args;
}

}  // namespace

TEST_CASE("a regular file is replaced through a temporary file, keeping its mode; a new name is created") {
  TempDir dir;
  const std::string path = dir.file("out.csv");
  write_text(path, "old contents\n");
  ::chmod(path.c_str(), 0640);
  {
    OutputFile f(path);
    CHECK(f.kind() == OutputKind::replace);
    f.write("new ");
    CHECK(read_text(path) == "old contents\n");  // the name holds the old file until commit
    CHECK(temp_files_in(dir.path()) == 1);
    f.write("contents\n");
    f.commit();
  }
  CHECK(read_text(path) == "new contents\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(temp_files_in(dir.path()) == 0);

  const std::string fresh = dir.file("fresh.csv");
  { OutputFile f(fresh); f.write("partial"); }  // destroyed without commit: nothing appears
  CHECK_FALSE(std::filesystem::exists(fresh));
  CHECK(temp_files_in(dir.path()) == 0);
  write_output_file(fresh, "complete\n");
  CHECK(read_text(fresh) == "complete\n");
  CHECK(io::live_temp_files() == 0);
}

TEST_CASE("devices are written in place: /dev/null stays a device, /dev/full is a named write error") {
  REQUIRE(is_char_device("/dev/null"));
  {
    OutputFile f("/dev/null");
    CHECK(f.kind() == OutputKind::stream);
    f.write("discarded\n");
    f.commit();
  }
  CHECK(is_char_device("/dev/null"));
  CHECK_NOTHROW(check_output_path("/dev/null"));

  if (!is_char_device("/dev/full")) {
    MESSAGE("skipped the /dev/full cases: no /dev/full on this machine");
    return;
  }
  try {
    OutputFile f("/dev/full");
    f.write(std::string(1 << 16, 'x'));
    f.commit();
    FAIL("writing to /dev/full did not fail");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("/dev/full") != std::string::npos);
    CHECK(msg.find(std::strerror(ENOSPC)) != std::string::npos);
  }
  CHECK(is_char_device("/dev/full"));
  // The command: a non-zero exit naming the path, never "wrote ...".
  const test::CliResult r = run_cli(forces_to("/dev/full"));
  CHECK(r.code == 3);
  CHECK(r.err.find("/dev/full") != std::string::npos);
  CHECK(r.out.find("wrote") == std::string::npos);
  CHECK(is_char_device("/dev/full"));
}

TEST_CASE("a FIFO with a reader receives the data and stays a FIFO") {
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_text(fifo); });
  const test::CliResult r = run_cli(forces_to(fifo));
  reader.join();
  CHECK(r.code == 0);
  CHECK(received.rfind("id,ax,ay\n", 0) == 0);
  CHECK(std::count(received.begin(), received.end(), '\n') == 51);
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(temp_files_in(dir.path()) == 0);
}

TEST_CASE("a symbolic link is followed: its target is replaced (or created), the link stays") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("data"));
  const std::string target = dir.file("data/real.csv"), link = dir.file("link.csv");
  write_text(target, "old\n");
  std::filesystem::create_symlink("data/real.csv", link);  // relative to the link's folder
  write_output_file(link, "new\n");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(read_text(target) == "new\n");
  CHECK(temp_files_in(dir.path()) == 0);
  CHECK(temp_files_in(dir.file("data")) == 0);

  // A chain of links, the last one dangling: the file it names is created.
  const std::string dangling = dir.file("dangling.csv"), chain = dir.file("chain.csv");
  std::filesystem::create_symlink(dir.file("data/made.csv"), dangling);
  std::filesystem::create_symlink("dangling.csv", chain);
  write_output_file(chain, "made\n");
  CHECK(std::filesystem::is_symlink(chain));
  CHECK(std::filesystem::is_symlink(dangling));
  CHECK(read_text(dir.file("data/made.csv")) == "made\n");

  // A loop of links is refused before anything is written.
  std::filesystem::create_symlink("b", dir.file("a"));
  std::filesystem::create_symlink("a", dir.file("b"));
  CHECK_THROWS_AS(check_output_path(dir.file("a")), InputError);
}

TEST_CASE("'-' is standard output, and the command's messages go to standard error") {
  TempDir dir;
  const std::string captured = dir.file("stdout.txt");
  test::CliResult r;
  {
    StdoutTo redirect(captured);
    r = run_cli(forces_to("-"));
  }
  CHECK(r.code == 0);
  CHECK(r.out.empty());  // nothing mixed into the data
  CHECK(r.err.find("wrote 50 accelerations") != std::string::npos);
  const std::string data = read_text(captured);
  CHECK(data.rfind("id,ax,ay\n", 0) == 0);
  CHECK(std::count(data.begin(), data.end(), '\n') == 51);
  CHECK(writes_to_standard_output("-"));
  CHECK(writes_to_standard_output("/dev/stdout"));
  CHECK_FALSE(writes_to_standard_output("/dev/null"));
  // A results CSV to standard output: the header and each row as it comes, the table on stderr.
  {
    StdoutTo redirect(captured);
    r = run_cli({"bench", "--dist", "uniform", "--n", "100", "--level", "2", "--kernel", "cpu-serial,cpu-n3",
                 "--reps", "1", "--warmup", "0", "--output", "-"});
  }
  CHECK(r.code == 0);
  CHECK(r.out.empty());
  const std::string rows = read_text(captured);
  CHECK(rows.rfind("kernel,", 0) == 0);
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 3);
  // --resume reads the results file: refused for a stream.
  r = run_cli({"bench", "--dist", "uniform", "--n", "100", "--level", "2", "--kernel", "cpu-serial", "--output",
               "/dev/null", "--resume"});
  CHECK(r.code == 2);
  CHECK(r.err.find("not a file") != std::string::npos);
}

TEST_CASE("outputs are checked before any work, naming the path as given") {
  TempDir dir;
  CHECK_THROWS_AS(check_output_path(dir.path().string()), InputError);  // a folder, not a file
  CHECK_NOTHROW(check_output_path(dir.file("fine.csv")));
  CHECK_NOTHROW(check_output_path("relative-name.csv"));
  CHECK(temp_files_in(dir.path()) == 0);  // the probe file is gone
  const std::string missing = dir.file("no/such/folder/out.csv");
  try {
    OutputFile f(missing);
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.rfind(missing + ": ", 0) == 0);
    CHECK(msg.find("does not exist") != std::string::npos);
    CHECK(msg.find(".tmp.") == std::string::npos);
  }
  write_text(dir.file("plain"), "x");
  CHECK_THROWS_AS(check_output_path(dir.file("plain/out.csv")), InputError);  // under a file
  // A folder where no file can be made, even by root: bench refuses before measuring anything.
  if (std::filesystem::is_directory("/proc")) {
    const test::CliResult r = run_cli({"bench", "--dist", "uniform", "--n", "100", "--level", "2", "--kernel",
                                       "cpu-serial", "--output", "/proc/nearfield-results.csv"});
    CHECK(r.code == 2);
    CHECK(r.err.find("/proc/nearfield-results.csv: cannot write") != std::string::npos);
    CHECK(r.out.empty());  // no table: nothing was measured
    const test::CliResult s = run_cli({"simulate", "--dist", "uniform", "--n", "10", "--kernel", "cpu-allpairs",
                                       "--dt", "0.1", "--steps", "1", "--output-dir", "/proc/nearfield/run"});
    CHECK(s.code == 2);
    CHECK(s.err.find("/proc/nearfield/run: cannot create this folder") != std::string::npos);
  }
  // A read-only folder (only meaningful when permissions bind this process: not for root).
  if (::geteuid() != 0) {
    std::filesystem::create_directories(dir.file("ro"));
    ::chmod(dir.file("ro").c_str(), 0555);
    CHECK_THROWS_AS(check_output_path(dir.file("ro/r.csv")), InputError);
    CHECK_THROWS_AS(check_output_folder(dir.file("ro/run")), InputError);
    ::chmod(dir.file("ro").c_str(), 0755);
  }
  CHECK_NOTHROW(check_output_folder(dir.file("new/run")));
  CHECK_FALSE(std::filesystem::exists(dir.file("new")));  // checked, not made
  CHECK_THROWS_AS(check_output_folder(dir.file("plain")), InputError);
}

TEST_CASE("inputs: a folder is named as one, a device or FIFO is not a particle file") {
  TempDir dir;
  try {
    check_input_path(dir.path().string());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("is a folder, not a file") != std::string::npos);
  }
  CHECK_THROWS_AS(check_input_path("/dev/null"), InputError);
  CHECK_THROWS_AS(check_input_path(dir.file("missing.csv")), InputError);
  const test::CliResult r = run_cli({"forces", "--input", dir.path().string(), "--level", "2", "--kernel",
                                     "cpu-serial", "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("is a folder, not a file") != std::string::npos);
  CHECK(r.err.find("empty file") == std::string::npos);
}

// A child process writes an output and gets the signal from its parent in the middle: it must end
// by that signal (its parent sees the usual status) and leave no temporary file.
TEST_CASE("temporary files are removed when SIGINT, SIGTERM or SIGHUP ends the process mid-write") {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(sig);
    TempDir dir;
    const std::string path = dir.file("big.csv");
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(ready[0]);
      // The test framework's own handlers, which it swaps per test case, stand in for a plain
      // program's default actions here; then the cleanup goes on top, as in `nearfield`.
      for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(s, SIG_DFL);
      io::install_temp_file_cleanup();
      try {
        OutputFile f(path);
        f.write(std::string(1 << 20, 'x'));
        const char one = 1;
        if (::write(ready[1], &one, 1) != 1) ::_exit(2);
        for (;;) f.write(std::string(1 << 12, 'y')), ::usleep(1000);  // still writing when the signal comes
      } catch (...) {
        ::_exit(3);
      }
    }
    ::close(ready[1]);
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    ::close(ready[0]);
    CHECK(temp_files_in(dir.path()) == 1);
    ::kill(child, sig);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == sig);
    CHECK(temp_files_in(dir.path()) == 0);
    CHECK_FALSE(std::filesystem::exists(path));
  }
}
