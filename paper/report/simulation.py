"""Section: simulations (`nearfield simulate`; scripts/simulate-gpu.sh): the energy check, the cost
of a step and a galaxy collision."""
import csv
import glob
import math
import os
from collections import defaultdict

from .common import context_label, distinct, fmt_ms, fmt_x, join, latest, machine, num, table
from .figures import plt

ENERGY_TARGET = 5e-5  # the energy check's bound on |dE/E| (issue 10)
BEYOND_FORCES_TARGET = 0.10  # issue 10: everything beyond the force evaluation under 10% of a step


def read_energy(path):
    """energy.csv: its `#` lines and its rows (dicts)."""
    with open(path) as f:
        lines = f.read().splitlines()
    return ([l[2:] for l in lines if l.startswith("#")],
            list(csv.DictReader([l for l in lines if l and not l.startswith("#")])))


def read_ini(path):
    out = {}
    with open(path) as f:
        for line in f:
            if "=" in line and not line.lstrip().startswith("#"):
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip()
    return out


def simulation_runs(report, name):
    """[(machine, run, run.ini, energy comments, energy rows, frames)] from results/NAME/<machine>/<run>/."""
    runs = []
    for ini in sorted(glob.glob(os.path.join(report.results, name, "*", "*", "run.ini"))):
        d = os.path.dirname(ini)
        energy = os.path.join(d, "energy.csv")
        if not os.path.exists(energy):
            continue
        comments, rows = read_energy(energy)
        runs.append((os.path.basename(os.path.dirname(d)), os.path.basename(d), read_ini(ini), comments, rows,
                     sorted(glob.glob(os.path.join(d, "frame_*.png")))))
    return runs


def device_of(ini):
    """"gpu" or "cpu": the device trait of the run's kernel (run.ini's `traits`, as `bench --list` prints them)."""
    traits = {t.strip() for t in ini.get("traits", "").split(",")}
    return next((d for d in ("gpu", "cpu") if d in traits), "-")


def drift(rows):
    """(final, largest) |rel_energy_error| of energy rows."""
    errs = [abs(num(r, "rel_energy_error")) for r in rows]
    return (errs[-1], max(errs)) if errs else (math.nan, math.nan)


def frame_strip(frames, dt, path, title, count=6):
    """A row of `count` frames spread over the run, each labelled with its time."""
    import matplotlib.image as mpimg
    picks = [frames[round(i * (len(frames) - 1) / (count - 1))] for i in range(count)] if len(frames) > count else frames
    fig, axes = plt.subplots(1, len(picks), figsize=(2.1 * len(picks), 2.4))
    for ax, f in zip(axes if len(picks) > 1 else [axes], picks):
        step = int(os.path.basename(f)[6:12])
        ax.imshow(mpimg.imread(f))
        ax.set_axis_off()
        ax.set_title(f"t = {step * dt:g}", fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)


def simulation(report):
    parts, missing = [], []
    how = "`scripts/simulate-gpu.sh OUTDIR build-device/bin` on a GPU machine, then copy OUTDIR/results into results/"
    parts.append("`nearfield simulate` integrates with leapfrog kick-drift-kick (velocity Verlet) in float64, forces from "
                 "any registered kernel; GPU kernels keep the particles on the GPU and rebuild the tree there every "
                 "step. All-pairs kernels give the exact softened dynamics; a near-field kernel only the near-field "
                 "part of the force, and its energy.csv says so.")

    # The energy check.
    ec = simulation_runs(report, "energy-check")
    if ec:
        body = []
        for m, run, ini, _, rows, _ in ec:
            final, worst = drift(rows)
            body.append([m, ini.get("kernel", run), device_of(ini), ini.get("precision", "-"),
                         os.path.basename(ini.get("input", "-")), ini.get("n", "-"), ini.get("softening", "-"),
                         ini.get("dt", "-"), ini.get("steps", "-"), f"{final:.2e}", f"{worst:.2e}",
                         "yes" if worst <= ENERGY_TARGET else "**no**"])
        parts.append(f"**Energy check** (issue 10: a Plummer sphere, N = 1024, eps = 0.05, dt = 1/128, 128 steps, "
                     f"|dE/E| within {ENERGY_TARGET:g}; the runs below say what they used). |dE/E| = |E - E0| / |E0| "
                     "from energy.csv, whose potential is over every pair:\n\n" +
                     table(["results", "kernel", "device", "precision", "input", "N", "eps", "dt", "steps",
                            "\\|dE/E\\| at the end", "largest \\|dE/E\\|", f"within {ENERGY_TARGET:g}"], body))
    else:
        missing.append("results/energy-check/ (the energy check on the GPU)")

    # The cost of a step.
    for m, rows in report.tables("simulate"):
        by = latest(rows, lambda r: (r["kernel"], r["n"], r["level"]))
        rs = sorted(by.values(), key=lambda r: (r["kernel"], int(r["n"]), r["level"]))
        body, met, missed = [], [], []
        for r in rs:
            frac, frac_d = num(r, "beyond_forces_fraction"), num(r, "beyond_forces_with_diagnostics_fraction")
            label = f"{r['kernel']} N = {r['n']}" + (f" P = {fmt_x(num(r, 'ppb'))}" if r.get("ppb") else "")
            (met if frac < BEYOND_FORCES_TARGET else missed).append(label)
            body.append([r["kernel"], r["n"], r.get("level") or "-", fmt_x(num(r, "ppb")) if r.get("ppb") else "-",
                         r["steps"], f"{fmt_ms(num(r, 'step_median_ms'))} [{fmt_ms(num(r, 'step_min_ms'))}-"
                                     f"{fmt_ms(num(r, 'step_max_ms'))}]",
                         fmt_ms(num(r, "forces_median_ms")),
                         fmt_ms(num(r, "tree_median_ms") + num(r, "plan_median_ms")), fmt_ms(num(r, "transfer_median_ms")),
                         fmt_ms(num(r, "integrate_median_ms")), fmt_ms(num(r, "other_median_ms")),
                         f"{fmt_ms(num(r, 'diagnostics_median_ms'))} ({r.get('diagnostics_count', '-')})",
                         f"{frac:.1%}", f"{frac_d:.1%}"])
        verdict_text = (f"Everything beyond the force evaluation stays under {BEYOND_FORCES_TARGET:.0%} of the step for "
                        f"{join(met) or 'none of the runs'}" +
                        (f"; it does not for {join(missed)}." if missed else "."))
        parts.append(f"**Cost of a step** on {machine(rs)} (`simulate --timing`; {distinct(rs, 'precision')} forces, "
                     f"float64 integration; inputs: {distinct(rs, 'input')}; ms, median [min-max] over the steps; the "
                     "parts are medians of their own). "
                     "*Tree + plan*: the GPU tree rebuilt from the moved particles and the kernel's work lists; *in/out*: "
                     "for near-field kernels the particles' state (positions, masses, velocities, input rows) moved "
                     "into the new tree's order together with the kernel's bodies, and the accelerations widened to "
                     "float64 in that order (the state stays in tree order between snapshot steps); for all-pairs "
                     "kernels the bodies packed and the accelerations widened; "
                     "*other*: the rest of the step's wall time (launches, synchronisation). Diagnostics (potential, "
                     "kinetic energy, momentum, with the copy to the host) run only at snapshot steps: their time is "
                     "per evaluation (how many), and the last column spreads them over the steps of the run.\n\n" +
                     context_label(report, rs) + "\n\n" +
                     table(["kernel", "N", "level", "P", "steps", "step", "forces", "tree + plan", "in/out",
                            "integration", "other", "diagnostics (count)", "beyond forces",
                            "beyond forces, with diagnostics"], body) + "\n\n" + verdict_text +
                     step_floor_text(rs))
    if not report.rows("simulate"):
        missing.append("results/simulate/ (the cost of a step)")

    # The galaxy collision.
    col = simulation_runs(report, "collision")
    timing = {(r["_table"], r["kernel"], r["subsample"]): r for r in report.rows("collision")}
    by_machine = defaultdict(list)
    for run in col:
        by_machine[run[0]].append(run)
    for m, runs in sorted(by_machine.items()):
        text = []
        exact = next((r for r in runs if r[2].get("forces") == "all-pairs"), None)
        if exact and exact[5]:
            fig = f"collision-{m}.png"
            frame_strip(exact[5], float(exact[2]["dt"]), os.path.join(report.figdir, fig),
                        f"{exact[2]['kernel']}, {exact[2]['n']} particles, {exact[2]['precision']}, {m}")
            text.append(f"![galaxy collision, {exact[2]['kernel']}](figures/{fig})")
        body = []
        for _, run, ini, _, rows, _ in runs:
            final, worst = drift(rows)
            t = timing.get((m, ini.get("kernel"), ini.get("subsample", "1")))
            ferr = [num(r, "force_rel_error") for r in rows if r.get("force_rel_error")]
            body.append([run, ini.get("forces_described", "-").split(":")[0], ini.get("precision", "-"),
                         ini.get("level", "-"), f"{final:.2e}", f"{worst:.2e}",
                         f"{statistics_median(ferr):.3f}" if ferr else "-",
                         fmt_ms(num(t, "step_median_ms")) if t else "-", fmt_ms(num(t, "forces_median_ms")) if t else "-"])
        if exact:
            final, worst = drift(exact[4])
            where = "GPU" if device_of(exact[2]) == "gpu" else "CPU"
            text.append(f"Energy drift of the {where} {exact[2].get('precision')} all-pairs run ({exact[2]['kernel']}, "
                        f"{exact[2]['n']} particles, {exact[2]['steps']} steps "
                        f"of dt = {exact[2]['dt']}, eps = {exact[2]['softening']}): |dE/E| = {final:.2e} at the end, at "
                        f"most {worst:.2e}.")
        sub = [r for r in runs if r[2].get("forces") == "subsampled"]
        if exact and sub:
            for _, run, ini, _, rows, _ in sub:
                ferr = [num(r, "force_rel_error") for r in rows if r.get("force_rel_error")]
                tx, ts = timing.get((m, exact[2]["kernel"], "1")), timing.get((m, ini["kernel"], ini["subsample"]))
                speed = (f", {num(tx, 'forces_median_ms') / num(ts, 'forces_median_ms'):.1f}x faster forces"
                         if tx and ts else "")
                text.append(f"Sub-sampling every {ini['subsample']}th source (001's approximation): relative L2 force "
                            f"error against every source {min(ferr):.3f} to {max(ferr):.3f} over the snapshot steps, "
                            f"largest |dE/E| {drift(rows)[1]:.2e} against {drift(exact[4])[1]:.2e} for the exact "
                            f"run{speed}.")
        full = [r for r in runs if r[2].get("kernel") in ("fmm", "fmm-adaptive", "cpu-fmm")]
        accuracy = {r["kernel"]: r for r in report.rows("collision-accuracy") if r["_table"] == m}
        for _, run, ini, _, rows, frames in full:
            kernel = ini["kernel"]
            if frames:
                fig = f"collision-{kernel}-{m}.png"
                frame_strip(frames, float(ini["dt"]), os.path.join(report.figdir, fig),
                            f"{kernel}, {ini['n']} particles, {ini['precision']}, {m}")
                text.append(f"![galaxy collision, {kernel}](figures/{fig})")
            a, tf, tx = accuracy.get(kernel), timing.get((m, kernel, "1")), (
                timing.get((m, exact[2]["kernel"], "1")) if exact else None)
            err = (f"its accelerations on the initial galaxies against float64 all pairs: relative L2 "
                   f"{num(a, 'rel_l2'):.2e}, 99th percentile {num(a, 'p99_rel'):.2e}, max {num(a, 'max_rel'):.2e} "
                   f"(order {a.get('p') or a.get('order')}, level {a['level']}); " if a else "")
            step = (f"a step {fmt_ms(num(tf, 'step_median_ms'))} ms against {fmt_ms(num(tx, 'step_median_ms'))} ms "
                    f"for {exact[2]['kernel']} (forces {fmt_ms(num(tf, 'forces_median_ms'))} against "
                    f"{fmt_ms(num(tx, 'forces_median_ms'))} ms; tree + plan, the far field's lists included, "
                    f"{fmt_ms(num(tf, 'tree_median_ms') + num(tf, 'plan_median_ms'))} ms a step)" if tf and tx else "")
            final, worst = drift(rows)
            text.append(f"The same collision with `{kernel}` (a full method: {ini.get('forces_described', '-')}): "
                        f"{err}|dE/E| = {final:.2e} at the end, at most {worst:.2e}" +
                        (f" (the exact run: at most {drift(exact[4])[1]:.2e})" if exact else "") +
                        (f"; {step}" if step else "") + "." + (verdict_step(kernel, exact[2]["kernel"], tf, tx)
                                                                if tf and tx else ""))
        near = [r for r in runs if r[2].get("forces") == "near-field"]
        if near:
            text.append("The near-field run is there for its cost only: it drops every pair beyond the adjacent "
                        "boxes, so the two galaxies do not attract each other, and its energy (over near pairs only, "
                        "which change as particles cross box faces) is not conserved.")
        text.append(table(["run", "forces", "precision", "level", "\\|dE/E\\| at the end", "largest \\|dE/E\\|",
                           "force error (median)", "step ms (median)", "forces ms (median)"], body))
        trows = [r for r in report.rows("collision") if r["_table"] == m]
        if trows:
            text.append(context_label(report, trows))
        parts.append(f"**Galaxy collision** (`generate --dist galaxies`, then `simulate` with frames every "
                     f"{runs[0][2].get('render_every', '?')} steps, window {runs[0][2].get('render_window', '-')}):\n\n" +
                     "\n\n".join(text))
    if not col:
        missing.append("results/collision/ (the galaxy collision)")
    if missing:
        parts.append("**Not measured yet:** " + join(missing) + ". To produce them: " + how + ".")
    return "\n\n".join(parts)


def step_floor_text(rs):
    """Why the rows that miss the step target miss it, from their own parts: the state's passes
    (in/out and integration: memory traffic, no tree) against the forces, and the part of tree +
    plan that does not grow with N (the intercept of a straight line through each kernel's rows of
    one dimension at two or more N)."""
    missed = [r for r in rs if num(r, "beyond_forces_fraction") >= BEYOND_FORCES_TARGET]
    if not missed:
        return ""
    tp = lambda r: num(r, "tree_median_ms") + num(r, "plan_median_ms")
    lines = []
    for r in missed:
        forces, state = num(r, "forces_median_ms"), state_of(r)
        lines.append(f"{r['kernel']} N = {r['n']}: the state's passes {fmt_ms(state)} ms ({state / forces:.1%} of the "
                     f"forces), tree + plan {fmt_ms(tp(r))} ms ({tp(r) / forces:.1%})")
    fits = []
    groups = defaultdict(list)
    for r in rs:
        if tp(r) > 0:
            groups[(r["kernel"], r.get("dim", ""))].append(r)
    for (kernel, dim), g in sorted(groups.items()):
        ns = [float(r["n"]) / 1e6 for r in g]
        if len(set(ns)) < 2:
            continue
        ys = [tp(r) for r in g]
        mn, my = sum(ns) / len(ns), sum(ys) / len(ys)
        slope = sum((x - mn) * (y - my) for x, y in zip(ns, ys)) / sum((x - mn) ** 2 for x in ns)
        fits.append(f"{kernel} ({dim}D, {len(g)} rows): {fmt_ms(my - slope * mn)} ms + {slope:.3f} ms per million "
                    "particles")
    text = ("\n\nWhere the step goes in the rows that miss (their own parts): " + "; ".join(lines) + ". "
            "In/out and integration are passes over the float64 state (positions, velocities, masses, rows) with no "
            "tree work, so they shrink only with the bytes moved; ")
    if fits:
        text += ("tree + plan, as a straight line in N through each kernel's rows, is " + "; ".join(fits) +
                 ": the first term does not grow with N (launches and the build's and plan's waits for the counts "
                 "on the device), so it weighs most where the forces are shortest. ")
    text += (f"At {BEYOND_FORCES_TARGET:.0%} the target leaves "
             f"{join(fmt_ms(BEYOND_FORCES_TARGET * num(r, 'forces_median_ms')) + ' ms' for r in missed)} for "
             "all of it in these rows.")
    over = [r for r in missed if state_of(r) >= BEYOND_FORCES_TARGET * num(r, "forces_median_ms")]
    if over:
        text += (f" In {join(r['kernel'] + ' N = ' + str(r['n']) for r in over)} the state's passes alone take more "
                 "than that, with no tree built at all.")
    return text


def state_of(r):
    """The state's passes of a step row (in/out and integration), ms."""
    return num(r, "transfer_median_ms") + num(r, "integrate_median_ms")


def verdict_step(kernel, other, tf, tx):
    """Which of a full method's and the all-pairs run's steps is the shorter, from their rows."""
    a, b = num(tf, "step_median_ms"), num(tx, "step_median_ms")
    lists = num(tf, "tree_median_ms") + num(tf, "plan_median_ms")
    if a < b:
        return f" `{kernel}` takes the shorter step, {b / a:.2f}x."
    forces = ("faster" if num(tf, "forces_median_ms") < num(tx, "forces_median_ms") else "slower too")
    return (f" At this N `{other}` takes the shorter step ({a / b:.2f}x): `{kernel}`'s forces are {forces}, and its "
            f"tree and lists, rebuilt every step, add {fmt_ms(lists)} ms.")


def statistics_median(values):
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else math.nan
