#include "measure/model.h"

#include <cmath>
#include <sstream>

#include "tree/tree.h"

namespace nf {

const char* const kAccessKindNames[6] = {"GR", "GW", "SR", "SW", "RR", "RW"};
const char* const kProcedureNames[3] = {"father", "neighbor", "return"};

OperationModel operation_model(int dim, int level, std::uint64_t ppb) {
  OperationModel m;
  m.dim = dim;
  m.level = level;
  m.ppb = ppb;
  m.nbox = std::uint64_t(1) << (dim * level);
  m.n = m.nbox * ppb;
  m.links = full_link_count(dim, level);
  const double N = static_cast<double>(m.n), P = static_cast<double>(ppb), B = static_cast<double>(m.links);
  const double w = dim + 1, a = dim;  // words per particle (position + mass) and per acceleration
  enum { F, NB, R };

  auto& o = m.bpb.count;
  o[F][kGR] = w * N;
  o[F][kSR] = w * N * (P - 1);
  o[F][kSW] = w * N;
  o[F][kRW] = a * N * (P - 1);
  o[NB][kGR] = w * B * P;
  o[NB][kSR] = w * B * P * P;
  o[NB][kSW] = w * B * P;
  o[NB][kRW] = a * B * P * P;
  o[R][kGW] = a * N;
  o[R][kRR] = a * N;
  m.bpb.cp[F] = N * (P - 1);
  m.bpb.cp[NB] = B * P * P;

  auto& i = m.bpb_n3.count;
  i[F][kGR] = w * N;
  i[F][kGW] = a * N;
  i[F][kSR] = w * N * (P - 1) / 2 + a * N;
  i[F][kSW] = w * N + a * N + a * N * (P - 1) / 2;
  i[F][kRW] = a * N * (P - 1) / 2;
  i[NB][kGR] = w * B * P / 2;
  i[NB][kGW] = a * B * P / 2;
  i[NB][kSR] = w * B * P * P / 2 + a * B * P / 2;
  i[NB][kSW] = w * B * P / 2 + a * B * P / 2 + a * B * P * P / 2;
  i[NB][kRW] = a * B * P * P / 2;
  i[R][kGW] = a * N;
  i[R][kRR] = a * N;
  m.bpb_n3.cp[F] = N * (P - 1) / 2;
  m.bpb_n3.cp[NB] = B * P * P / 2;
  return m;
}

double OperationModel::change_computation() const { return bpb_n3.pairs() - bpb.pairs(); }
double OperationModel::change_register() const {
  return bpb_n3.total(kRR) + bpb_n3.total(kRW) - bpb.total(kRR) - bpb.total(kRW);
}
double OperationModel::change_shared() const {
  return bpb_n3.total(kSR) + bpb_n3.total(kSW) - bpb.total(kSR) - bpb.total(kSW);
}
double OperationModel::change_global() const {
  return bpb_n3.total(kGR) + bpb_n3.total(kGW) - bpb.total(kGR) - bpb.total(kGW);
}

std::uint64_t cp_bpb(int dim, int level, std::uint64_t ppb) {
  const std::uint64_t n = (std::uint64_t(1) << (dim * level)) * ppb;
  return n * (ppb - (ppb > 0 ? 1 : 0)) + full_link_count(dim, level) * ppb * ppb;
}

std::uint64_t cp_bpb_n3(int dim, int level, std::uint64_t ppb) { return cp_bpb(dim, level, ppb) / 2; }

std::vector<PrintedTable2Row> printed_table2(std::uint64_t ppb) {
  const OperationModel m = operation_model(2, 7, ppb);
  const double P = static_cast<double>(ppb);
  auto row = [](const char* q, const char* f, double printed, double recomputed) {
    PrintedTable2Row r{q, f, printed, recomputed, false};
    r.matches = std::abs(printed - recomputed) <= 1e-9 * std::max(1.0, std::abs(printed));
    return r;
  };
  return {row("computation", "P(145924P-16384)/2", P * (145924 * P - 16384) / 2, -m.change_computation()),
          row("register", "P(145924P-16384)", P * (145924 * P - 16384), -m.change_register()),
          row("shared", "P(146462P-89346)", P * (146462 * P - 89346), -m.change_shared()),
          row("global", "32002P", 32002 * P, -m.change_global())};
}

namespace {
std::string num(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}
}  // namespace

std::string model_report(const OperationModel& m) {
  std::ostringstream o;
  o << "dim: " << m.dim << "\nlevel: " << m.level << "\nppb: " << m.ppb << "\nN: " << m.n << "\nboxes: " << m.nbox
    << "\nB: " << m.links << "\nwords_per_particle: " << m.dim + 1 << "\nwords_per_acceleration: " << m.dim << "\n";
  o << "cp_bpb: " << num(m.bpb.pairs()) << "\ncp_bpb_n3: " << num(m.bpb_n3.pairs()) << "\n";
  const std::pair<const char*, const AccessCounts*> kernels[2] = {{"bpb", &m.bpb}, {"bpb_n3", &m.bpb_n3}};
  for (const auto& [name, c] : kernels) {
    for (int p = 0; p < 3; ++p) {
      for (int k = 0; k < 6; ++k)
        if (c->count[p][k] != 0) o << name << "." << kProcedureNames[p] << "." << kAccessKindNames[k] << ": " << num(c->count[p][k]) << "\n";
      if (c->cp[p] != 0) o << name << "." << kProcedureNames[p] << ".CP: " << num(c->cp[p]) << "\n";
    }
    for (int k = 0; k < 6; ++k) o << name << ".total." << kAccessKindNames[k] << ": " << num(c->total(k)) << "\n";
  }
  o << "table2.computation: " << num(m.change_computation()) << "\ntable2.register: " << num(m.change_register())
    << "\ntable2.shared: " << num(m.change_shared()) << "\ntable2.global: " << num(m.change_global()) << "\n";
  if (m.dim == 2 && m.level == 7)
    for (const PrintedTable2Row& r : printed_table2(m.ppb))
      o << "paper_table2." << r.quantity << ".printed: " << r.printed_formula << " = " << num(r.printed) << "\npaper_table2."
        << r.quantity << ".from_table1: " << num(r.from_table1) << "\npaper_table2." << r.quantity
        << ".matches: " << (r.matches ? "yes" : "no") << "\n";
  return o.str();
}

}  // namespace nf
