// nearfield: command-line entry point.
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  nf::cli::Args args(argv + 1, argv + argc);
  return nf::cli::run(args, std::cout, std::cerr);
}
