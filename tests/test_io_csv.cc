// CSV files (io/csv_file.h): particle files with their headers, optional and ignored columns,
// blank lines and every input error in the project's words; acceleration files as forces writes
// them; exact round trips (how outputs are written: test_io_output.cc).
#include <tuple>

#include "core/errors.h"
#include "io/csv_file.h"
#include "helpers.h"

using namespace nf;
using nf::test::bits_of;
using nf::test::TempDir;
using nf::test::write_text;

namespace {
// The InputError message of reading `text` as a CSV file (empty if it reads fine).
std::string read_error(const std::string& text) {
  TempDir dir;
  const std::string path = dir.file("in.csv");
  write_text(path, text);
  try {
    read_particles_csv(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("CSV particles: 2D and 3D headers, optional and ignored columns") {
  TempDir dir;
  SUBCASE("2D with m, extra columns ignored, CRLF and blanks") {
    write_text(dir.file("a.csv"), "name,x, y ,m,colour\r\np,0.1,0.2,1.5,red\r\nq,1e-3,-2,0,blue\r\n");
    const Particles p = read_particles_csv(dir.file("a.csv"));
    REQUIRE(p.size() == 2);
    CHECK(p.dim == 2);
    CHECK(p.x[0] == 0.1);
    CHECK(p.y[1] == -2.0);
    CHECK(p.m[0] == 1.5);
    CHECK(p.m[1] == 0.0);
    CHECK(p.id.empty());
    CHECK(p.id_of(1) == 1);
  }
  SUBCASE("3D with mass, ids and velocities in any column order") {
    write_text(dir.file("b.csv"), "id,mass,z,y,x,vx,vy,vz\n17,2,3,2,1,0.5,0.25,0.125\n-4,1,0,0,0,0,0,0\n");
    const Particles p = read_particles_csv(dir.file("b.csv"));
    REQUIRE(p.size() == 2);
    CHECK(p.dim == 3);
    CHECK(p.x[0] == 1.0);
    CHECK(p.y[0] == 2.0);
    CHECK(p.z[0] == 3.0);
    CHECK(p.m[0] == 2.0);
    CHECK(p.id_of(0) == 17);
    CHECK(p.id_of(1) == -4);
    CHECK(p.vz[0] == 0.125);
  }
  SUBCASE("a header and no rows is a valid empty input") {
    write_text(dir.file("c.csv"), "x,y,m\n");
    CHECK(read_particles_csv(dir.file("c.csv")).size() == 0);
  }
}

TEST_CASE("CSV errors name the file, the line and the problem") {
  auto has = [](const std::string& msg, const std::string& what) {
    INFO(msg);
    CHECK(msg.find(what) != std::string::npos);
  };
  has(read_error(""), "empty file");
  has(read_error("x,m\n1,2\n"), "missing column 'y'");
  has(read_error("x,y\n1,2\n"), "missing column 'm'");
  has(read_error("x,y,m,mass\n1,2,3,4\n"), "both 'm' and 'mass'");
  const std::string bad = read_error("x,y,m\n1,2,3\n4,oops,6\n");
  has(bad, "in.csv:3");
  has(bad, "'oops' is not a number");
  has(read_error("x,y,m\n1,nan,1\n"), "not finite");
  has(read_error("x,y,m\n1,2,inf\n"), "not finite");
  has(read_error("x,y,m\n1,2,-1\n"), "negative mass");
  has(read_error("x,y,m\n1,2,3\n1,2\n"), "in.csv:3: too few fields");
  has(read_error("x,y,m\n1,2,\n"), "empty");
  has(read_error("x,y,m,id\n1,2,3,4.5\n"), "not an integer");
  has(read_error("x,y,z,m,vx\n1,2,3,4,5\n"), "vx, vy, vz");
  try {
    read_particles_csv("/nonexistent/dir/p.csv");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cannot open") != std::string::npos);
  }
}

TEST_CASE("CSV: blank lines are skipped (LF and CRLF, trailing too); line numbers stay the file's") {
  for (const char* text : {"x,y,m\n1,2,3\n\n", "x,y,m\r\n1,2,3\r\n\r\n", "x,y,m\n1,2,3\n \t\n",
                           "\nx,y,m\n\n1,2,3\n", "x,y,m\r\n\r\n1,2,3\r\n \r\n\r\n", "x,y,m\n1,2,3",
                           // CR CR LF (Python's csv module through a text-mode file on Windows), a
                           // blank after a CR, and CRs at the very end
                           "x,y,m\r\r\n1,2,3\r\r\n", "x,y,m\r \n1,2,3\r\r"}) {
    CAPTURE(text);
    TempDir dir;
    write_text(dir.file("in.csv"), text);
    Particles p;
    CHECK_NOTHROW(p = read_particles_csv(dir.file("in.csv")));
    CHECK(p.size() == 1);
    CHECK(p.m[0] == 3.0);
  }
  // Errors after blank lines point at the physical line.
  CHECK(read_error("x,y,m\n\n\n1,oops,3\n").find("in.csv:4: column 'y'") != std::string::npos);
  CHECK(read_error("\n\nx,y,m,x\n1,2,3,4\n").find("in.csv:3: column 'x' appears twice") != std::string::npos);
  CHECK(read_error("\n \n\r\n").find("no header row") != std::string::npos);
}

TEST_CASE("CSV: every input error reads file:line: problem in the project's words") {
  // (text, line, problem): the parser's own cases (short and long rows, duplicated header names,
  // open quotes), out-of-range numbers and repeated ids.
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"x,y,m\n1,2,3\n1,2\n", 3, "too few fields"},
      {"x,y,m\n1,2,3,4\n", 2, "more fields than the header has columns"},
      {"x,y,m,y\n1,2,3,4\n", 1, "column 'y' appears twice in the header"},
      {"x,y,m\n1,\"2,3\n", 2, "a quoted field is not closed"},
      {"x,y,m\n1e999,2,3\n", 2, "column 'x': '1e999' is out of range"},
      {"x,y,m,id\n1,2,3,99999999999999999999\n", 2, "column 'id': '99999999999999999999' is out of range"},
      {"x,y,m,id\n0,0,1,5\n1,1,1,6\n\n2,2,1,5\n", 5, "id 5 is already the id of line 2"},
      {"x,y,m\n1,2,-0.5\n", 2, "column 'm': negative mass -0.5"},
      {"\n\nx,m\n1,2\n", 3, "missing column 'y'"},
      {"x,y,m,vx,vy,vz\n1,2,3,0,0,1\n", 1, "a 'vz' column without 'z'"},  // had been dropped
      // A NUL byte had ended the parser's line: a row starting with one was dropped, particle and all.
      {std::string("x,y,m\n0.1,0.2,1\n\0" "0.5,0.5,1\n0.3,0.4,1\n", 37), 3, "a NUL byte"},
      {std::string("x,y,m\n0.1,0.2,1\n0.5,0.5,1\0junk\n", 31), 3, "a NUL byte"},
      // Classic Mac line endings: one long line to the parser, "missing column 'm'" had been all it said.
      {"x,y,m\r0.1,0.2,1\r0.5,0.5,1\r", 1, "a carriage return inside a line"},
      {"x,y,m\r\n0.1,0.2,1\r\n0.5,\r0.5,1\r\n", 3, "a carriage return inside a line"},
      {"x,y,m\r\r\n0.1,0.2,1\r \r\n0.5,\r 0.5,1\r\n", 3, "a carriage return inside a line"},
  };
  for (const auto& c : cases) {  // (not a structured binding: clang 14 cannot capture one in CAPTURE)
    const std::string& text = std::get<0>(c);
    const int line = std::get<1>(c);
    const std::string& problem = std::get<2>(c);
    CAPTURE(text);
    TempDir dir;
    const std::string path = dir.file("in.csv");
    write_text(path, text);
    std::string msg;
    try {
      read_particles_csv(path);
    } catch (const InputError& e) {
      msg = e.what();
    }
    CHECK(msg.rfind(path + ":" + std::to_string(line) + ": " + problem, 0) == 0);
    // Nothing of the CSV library's own wording ("Too few columns in line 3 in file \"...\".").
    CHECK(msg.find('"') == std::string::npos);
    CHECK(msg.find("in file") == std::string::npos);
    // The same text in memory (what fuzz/fuzz_csv.cc reads) gets the same message.
    std::string in_memory;
    try {
      parse_particles_csv(path, text);
    } catch (const InputError& e) {
      in_memory = e.what();
    }
    CHECK(in_memory == msg);
  }
}

TEST_CASE("acceleration files read back as forces writes them, with the same error wording") {
  TempDir dir;
  Particles p = test::make("uniform", 3, 5);
  p.id = {4, 0, -2, 7, 9};
  std::vector<double> acc(15);
  for (std::size_t k = 0; k < acc.size(); ++k) acc[k] = 0.1 * static_cast<double>(k) - 0.7;
  write_accelerations_csv(dir.file("a.csv"), p, acc);
  const Accelerations a = read_accelerations_csv(dir.file("a.csv"));
  CHECK(a.dim == 3);
  CHECK(a.id == p.id);
  CHECK(a.acc == acc);
  write_text(dir.file("b.csv"), "id,ax,ay\n1,0,0\n1,2,3\n");
  CHECK_THROWS_WITH_AS(read_accelerations_csv(dir.file("b.csv")), (dir.file("b.csv") + ":3: id 1 is already the id of line 2").c_str(),
                       InputError);
  write_text(dir.file("c.csv"), "id,ax\n1,0\n");
  CHECK_THROWS_WITH_AS(read_accelerations_csv(dir.file("c.csv")), (dir.file("c.csv") + ":1: missing column 'ay' in the header").c_str(),
                       InputError);
}

TEST_CASE("particle files round-trip bit for bit") {
  TempDir dir;
  for (int dim : {2, 3}) {
    Particles p = test::make("plummer", dim, 1000, 5);
    p.id.resize(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) p.id[i] = static_cast<std::int64_t>(3 * i) - 7;
    write_particles_csv(dir.file("p.csv"), p);
    const Particles q = read_particles_csv(dir.file("p.csv"));
    REQUIRE(q.size() == p.size());
    CHECK(q.dim == dim);
    for (std::size_t i = 0; i < p.size(); ++i) {
      CHECK(bits_of(q.x[i]) == bits_of(p.x[i]));
      CHECK(bits_of(q.y[i]) == bits_of(p.y[i]));
      if (dim == 3) CHECK(bits_of(q.z[i]) == bits_of(p.z[i]));
      CHECK(bits_of(q.m[i]) == bits_of(p.m[i]));
      CHECK(bits_of(q.vx[i]) == bits_of(p.vx[i]));
      CHECK(q.id[i] == p.id[i]);
    }
  }
}
