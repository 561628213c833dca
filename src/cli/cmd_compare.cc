// nearfield compare: how far one acceleration file is from another (a reference), particle by
// particle matched by id. The report uses it to measure the effect of float32 input rounding with
// the project's own kernels.
#include <unordered_map>

#include "cli/commands.h"
#include "io/csv_file.h"
#include "io/input_path.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "measure/validation.h"

namespace nf::cli {

int cmd_compare(const Args& args, std::ostream& out, std::ostream&) {
  std::string test_path, reference_path;
  po::options_description d("compare options");
  d.add_options()("help", "this help")("reference", po::value(&reference_path)->required(),
                                       "accelerations CSV taken as exact (id,ax,ay[,az], as forces writes)")(
      "test", po::value(&test_path)->required(), "accelerations CSV to compare with it");
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield compare --reference A.csv --test B.csv\n\nPrints rel_l2 (||a - ref|| / ||ref||), "
                  "max_rel (largest per-particle relative difference, as validate computes them) and particles."))
    return 0;
  check_input_path(reference_path);
  check_input_path(test_path);
  const Accelerations ref = read_accelerations_csv(reference_path), test = read_accelerations_csv(test_path);
  if (ref.dim != test.dim)
    throw InputError(test_path + " holds " + std::to_string(test.dim) + "D accelerations, " + reference_path + " " +
                     std::to_string(ref.dim) + "D");
  if (ref.id.size() != test.id.size())
    throw InputError(test_path + " has " + std::to_string(test.id.size()) + " rows, " + reference_path + " " +
                     std::to_string(ref.id.size()));
  // The test values in the reference's row order.
  std::unordered_map<std::int64_t, std::size_t> row_of;
  for (std::size_t i = 0; i < test.id.size(); ++i) row_of[test.id[i]] = i;
  const std::size_t d_ = static_cast<std::size_t>(ref.dim);
  std::vector<double> a(ref.acc.size());
  for (std::size_t i = 0; i < ref.id.size(); ++i) {
    const auto it = row_of.find(ref.id[i]);
    if (it == row_of.end())
      throw InputError(test_path + " has no row for id " + std::to_string(ref.id[i]) + " of " + reference_path);
    for (std::size_t k = 0; k < d_; ++k) a[i * d_ + k] = test.acc[it->second * d_ + k];
  }
  const Metrics m = compare(a, ref.acc, std::vector<double>(ref.id.size(), 1.0), ref.dim);
  out << "particles: " << ref.id.size() << "\nrel_l2: " << format_double(m.rel_l2)
      << "\nmax_rel: " << format_double(m.max_rel) << "\n";
  return 0;
}

}  // namespace nf::cli
