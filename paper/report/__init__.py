"""The report generator behind paper/make_report.py, one module per section of paper/README.md.

- main.py: SECTIONS, the report in order, and the command line.
- common.py: `Report` (the results, the paper's figures, the nearfield binary), reading rows,
  formatting, and the context label and `Flags` every table carries.
- kernels.py: the kernels named for their role, and every other set of kernels derived from the
  traits `nearfield bench --list` prints.
- facts.py: facts several sections draw on (Table III per machine, the best new Newton-3 kernel, ...).
- figures.py: matplotlib, and the figures several sections draw.
- one module per section: verdict, provenance, paper_brief, experiment_setup, table3,
  newton3_hopper, gpu_perf, model, depth, ppb, validation, nonuniform, simulation, multigpu,
  fmm_hopper, discussion.
"""
