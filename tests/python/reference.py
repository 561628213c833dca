"""Independent float64 references in numpy (docs/design.md §1, §2): direct sums over every pair or
over the near field, whose box coordinates come from the positions by the box rule, never from the
module's tree."""
import numpy as np


def default_domain(pos):
    """(origin, side): the componentwise minimum and the largest extent (1 when it is 0)."""
    if len(pos) == 0:
        return np.zeros(pos.shape[1]), 1.0
    origin = pos.min(axis=0)
    side = float((pos.max(axis=0) - origin).max())
    return origin, side if side > 0 else 1.0


def cells(pos, level, origin, side):
    """Integer box coordinates per particle: floor((x - x0) / side * 2^K), clamped to [0, 2^K - 1]."""
    n = 2 ** level
    c = np.floor((pos - origin) / side * n)
    return np.clip(c, 0, n - 1).astype(np.int64)


def near_mask(pos, level, origin=None, side=None):
    """(N, N) bool: i != j and their boxes equal or adjacent along every axis."""
    if origin is None:
        origin, side = default_domain(pos)
    c = cells(pos, level, origin, side)
    near = np.all(np.abs(c[:, None, :] - c[None, :, :]) <= 1, axis=2)
    np.fill_diagonal(near, False)
    return near


def accelerations(targets, pos, m, eps, mask=None):
    """a_i = sum_j m_j r_ij / (|r_ij|^2 + eps^2)^(3/2), r_ij = x_j - x_i; a pair at zero distance
    without softening contributes 0. mask (M, N): only the pairs it holds."""
    r = pos[None, :, :] - targets[:, None, :]
    d2 = (r * r).sum(axis=2) + eps * eps
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(d2 > 0, m[None, :] / (d2 * np.sqrt(d2)), 0.0)
    if mask is not None:
        w = np.where(mask, w, 0.0)
    return (w[:, :, None] * r).sum(axis=1)


def potential(pos, m, eps, mask=None):
    """-sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) over every pair (or the pairs of mask)."""
    r = pos[None, :, :] - pos[:, None, :]
    d2 = (r * r).sum(axis=2) + eps * eps
    with np.errstate(divide="ignore"):
        w = np.where(d2 > 0, m[:, None] * m[None, :] / np.sqrt(np.where(d2 > 0, d2, 1.0)), 0.0)
    np.fill_diagonal(w, 0.0)
    if mask is not None:
        w = np.where(mask, w, 0.0)
    return -0.5 * w.sum()


def rel_l2(a, ref):
    """||a - ref|| / ||ref|| (0 when both vanish)."""
    den = np.linalg.norm(ref)
    num = np.linalg.norm(a - ref)
    return num / den if den > 0 else num


def morton_keys(c, dim):
    """Morton keys of integer coordinates: bit d*k + a holds bit k of axis a (x lowest)."""
    keys = np.zeros(len(c), dtype=np.uint64)
    for k in range(21):
        for a in range(dim):
            keys |= ((c[:, a].astype(np.uint64) >> np.uint64(k)) & np.uint64(1)) << np.uint64(dim * k + a)
    return keys
