"""Shared figures and helpers of the fmm report section (fmm_hopper.py): the targets it checks,
the device facts it assumes, and row helpers."""
import math

from .common import machine, num

AUTO_TARGET = 1.15  # the target: the automatic level within 15% of the best measured level's time
FIGURE_ORDER = 8    # the order of the level figure (and of the near-kernel comparison); else the middle one
NEAR_FACTORS = (2, 4)  # "a near field k times faster": the what-ifs computed from the level sweep
# The FP32 peak of M2L's multiply-adds: SMs x FMA lanes per SM x the SM clock of the row. The clock is
# in every GPU row; the SM count is not (a column `sm_count` is used where a row has one), so it is
# taken from the device name, and the text says so.
FMA_PER_SM_CLOCK = {"9.0": 128}  # FP32 lanes (one FMA each per clock) per SM, by compute capability
SM_COUNT_BY_NAME = (("H100 80GB HBM3", 132), ("H100 SXM", 132), ("H100 NVL", 132), ("H100 PCIe", 114), ("H200", 132))
# The memory bus in bits by device name (not in the CSV either): with the row's memory clock, the
# nominal bandwidth = clock x 2 (double data rate) x bits / 8.
BUS_BITS_BY_NAME = (("H100 80GB HBM3", 5120), ("H100 SXM", 5120), ("H100 NVL", 6144), ("H100 PCIe", 5120),
                    ("H200", 6144))
STAGES = (("near_ms", "near field", "tab:red"), ("m2l_ms", "M2L", "tab:blue"),
          ("upward_ms", "upward (P2M + M2M)", "tab:green"), ("downward_ms", "downward (L2L + L2P)", "tab:olive"))
DIST_STYLE = {"uniform": "tab:blue", "plummer": "tab:red", "clusters": "tab:green"}
HOW = "`scripts/fmm-bench.sh build/bin results SECTION` on a GPU machine (sections: {})"


# --- rows --------------------------------------------------------------------------------------
def full_method(report, r):
    """A full method's row: a kernel with the far-field trait (or, for a kernel no longer listed, a row
    that records the order it ran)."""
    k = r.get("kernel", "")
    return k in report.kernels.where("far-field") or (not report.kernels.traits(k) and bool(r.get("p")))


def on(report, name, m):
    """" on MACHINE" where results/NAME holds more than one machine's file, else nothing."""
    return f" on {m}" if len(report.tables(name)) > 1 else ""


def bench_rows(report, rows):
    return [r for r in rows if full_method(report, r) and r.get("median_ms")]


def order_of(r):
    v = r.get("p") or r.get("order") or ""
    return int(v) if v.isdigit() else None


def is_auto(r):
    return r.get("level_rule", "") == "auto"


def stage_sum(r):
    return sum(num(r, c) for c, _, _ in STAGES)


def share(r, col="near_ms"):
    return num(r, col) / num(r, "median_ms")


def per_s(count, ms_):
    return count / (ms_ / 1e3) if ms_ > 0 else math.nan


def fmt_rate(v, unit=""):
    return "-" if v is None or math.isnan(v) else f"{v:.3g}{unit}"


def pct(v):
    return "-" if v is None or math.isnan(v) else f"{100 * v:.0f}%" if v >= 0.1 else f"{100 * v:.1f}%"


def sm_count(r):
    """(SMs, assumed?) of a GPU row: its `sm_count` column, else the device name's; (None, _) unknown."""
    if r.get("sm_count"):
        return int(float(r["sm_count"])), False
    name = r.get("device", "")
    return next(((n, True) for key, n in SM_COUNT_BY_NAME if key in name), (None, True))


def fp32_peak(r):
    """FP32 multiply-adds per second at the row's SM clock, or nan where the device is not known."""
    sms, _ = sm_count(r)
    lanes = FMA_PER_SM_CLOCK.get(r.get("compute_capability", ""))
    clock = num(r, "sm_clock_mhz")
    return sms * lanes * clock * 1e6 if sms and lanes and not math.isnan(clock) else math.nan


def memory_bandwidth(r):
    """Nominal bytes per second at the row's memory clock, or nan where the device is not known."""
    bits = next((b for key, b in BUS_BITS_BY_NAME if key in r.get("device", "")), None)
    clock = num(r, "mem_clock_mhz")
    return clock * 1e6 * 2 * bits / 8 if bits and not math.isnan(clock) else math.nan


def case_name(r):
    return f"{r['distribution']} {r['dim']}D, N = {r['n']}, {r['precision']}"


def spread(rows):
    """The largest (max - min) / median over the rows."""
    v = [(num(r, "max_ms") - num(r, "min_ms")) / num(r, "median_ms") for r in rows]
    v = [x for x in v if not math.isnan(x)]
    return max(v) if v else math.nan


def coverage_text(rows):
    """What the evaluation time holds: the stage columns' sum against median_ms over the rows."""
    c = [stage_sum(r) / num(r, "median_ms") for r in rows]
    c = [x for x in c if not math.isnan(x)]
    if not c:
        return ""
    lo, hi = f"{100 * min(c):.0f}%", f"{100 * max(c):.0f}%"
    return (f"The evaluation time (median_ms) is the near field and the three far-field passes: their stage times "
            f"add up to {lo if lo == hi else lo + ' to ' + hi} of it in these rows. The tree and the interaction "
            "lists, built once per tree, are timed apart (tree_ms, lists_ms) and are not in it.")


# --- the level sweep -----------------------------------------------------------------------------
