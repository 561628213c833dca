"""Section: the paper in brief, and what this repository implements of it."""
from .common import FULL_LEVEL, PAPER_DEVICE


def paper_brief(report):
    return f"""Shan & Lei (*A novel parallel algorithm for near-field computation in N-body problem on GPU*) compute
the near-field part of an N-body tree method on a GPU. Space is cut by a quadtree of level K into
4^K equal boxes numbered along the Z-order curve; each particle interacts directly with the particles
of its own box and of the (up to 8) boxes around it. Particles are sorted by box, `boxIdx` holds where
each box starts, and every box has a neighbor list. Their earlier *BPB* kernel (box per block) gives
each box a CUDA block and one thread per particle; the block stages its own box and then each
neighbor box in shared memory and every thread sums the forces on its particle. The *improved BPB*
uses Newton's third law: each pair is computed once, the box's own pairs triangularly and only
neighbors with a larger Z-order index (a half list), and the reaction on the other particle goes
into a shared array B with shared-memory atomics, then into global memory with atomics. Their Table
III times both on a {PAPER_DEVICE} for level {FULL_LEVEL} ({4 ** FULL_LEVEL} boxes) with {min(report.paper)} to
{max(report.paper)} particles per box; Tables I and II count computations and memory accesses; Fig. 8 plots
the two runtimes against P.

This repository implements both kernels exactly as described (`src/nearfield/bpb.cu`,
`src/nearfield/bpb_n3.cu`), the other two mappings of their earlier work (particle per thread `ppt`,
box per thread `bpt`), CPU versions, and an all-pairs ground truth, and reruns their experiments."""
