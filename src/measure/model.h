#pragma once
//! The operation-count model of Shan & Lei's Tables I and II for the original BPB and the
//! improved (Newton-3) BPB with N = nbox P particles, P per box, and B neighbor links.
//!
//! Counts are per single-precision word, as in the paper. In 2D a particle is w = 3 words
//! (x, y, m) and an acceleration a = 2 words; the 3D model is the same with w = 4, a = 3 and the
//! 3D B. Table I's entries for the original BPB, in words:
//!   father box:   GR wN, SR wN(P-1), SW wN, RW aN(P-1)
//!   neighbor box: GR wBP, SR wBP^2, SW wBP, RW aBP^2
//!   return d_acc: GW aN, RR aN
//! and for the improved BPB (half the pairs; counterforces through shared array B):
//!   father box:   GR wN, GW aN, SR wN(P-1)/2 + aN, SW wN + aN + aN(P-1)/2, RW aN(P-1)/2
//!   neighbor box: GR wBP/2, GW aBP/2, SR wBP^2/2 + aBP/2, SW wBP/2 + aBP/2 + aBP^2/2, RW aBP^2/2
//!   return d_acc: GW aN, RR aN

#include <cstdint>
#include <string>
#include <vector>

namespace nf {

//! Word counts of one kernel, per procedure and kind of access.
struct AccessCounts {
  // [procedure][kind]: procedures father, neighbor, return; kinds GR, GW, SR, SW, RR, RW
  double count[3][6] = {};
  double cp[3] = {};  //!< pair interactions per procedure
  double total(int kind) const { return count[0][kind] + count[1][kind] + count[2][kind]; }
  double pairs() const { return cp[0] + cp[1] + cp[2]; }
};

enum AccessKind { kGR, kGW, kSR, kSW, kRR, kRW };
extern const char* const kAccessKindNames[6];
extern const char* const kProcedureNames[3];

//! The model at one level and P.
struct OperationModel {
  int dim = 2, level = 7;
  std::uint64_t ppb = 1, n = 0, nbox = 0, links = 0;  // links = B
  AccessCounts bpb, bpb_n3;
  //! Improved minus original: computation, register, shared, global (Table II; negative = fewer).
  double change_computation() const;
  double change_register() const;
  double change_shared() const;
  double change_global() const;
};

OperationModel operation_model(int dim, int level, std::uint64_t ppb);

//! Pair interactions: the original BPB's N(P-1) + B P^2 and the improved one's half of it.
std::uint64_t cp_bpb(int dim, int level, std::uint64_t ppb);
std::uint64_t cp_bpb_n3(int dim, int level, std::uint64_t ppb);

//! One row of Table II as printed in the paper (2D, level 7, N = 16384 P, B = 129540), the
//! reduction recomputed from Table I, and whether they agree.
struct PrintedTable2Row {
  std::string quantity, printed_formula;
  double printed = 0, from_table1 = 0;
  bool matches = false;
};
//! The four printed rows evaluated at P (only meaningful for dim 2, level 7).
std::vector<PrintedTable2Row> printed_table2(std::uint64_t ppb);

//! `key: value` lines of the whole model (what `nearfield model` prints).
std::string model_report(const OperationModel& m);

}  // namespace nf
