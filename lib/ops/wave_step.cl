// Explicit FEM wave steps (method notes, section 5), m u3 = dt^2 f - K1 u2 - K2 u1, on vectors of n
// DOFs. K1 is a symmetric half-stored DIA matrix: diagonal d holds K1(i, i + o) at k1[d n + i]
// and is used a second time as K1(i, i - o) = k1[d n + i - o]. The arithmetic of each DOF is fixed
// (wave_step_reference() repeats it on the host), so that every split of the vector and every walk
// over it gives the same bits.
//
// Built per system and walk (ops/wave_step.cpp): WAVE_DIAGONALS and WAVE_OFFSETS (K1's offsets,
// 0 first, ascending) as constants, so that the interior's loop unrolls into independent loads;
// WAVE_PER_PART, the diagonals a buffer of K1 holds; WAVE_ROWS, the DOFs a work-item computes, a
// work-group's size apart; WAVE_PLANE and WAVE_STRIP, the DOFs of a plane of nodes and of a strip
// of its rows (WAVE_STRIP 0: the DOFs in order); WAVE_POINTS_IN_STEP, 1 where the step adds the
// source and records the receivers itself (GPUs), 0 where wave_points does (CPU devices).
#pragma OPENCL FP_CONTRACT OFF

__constant int wave_offsets[WAVE_DIAGONALS] = {WAVE_OFFSETS};

// K1's diagonals in up to four buffers (one allocation may not hold them all: NVIDIA allows a
// quarter of the memory); diagonal d is diagonal d % WAVE_PER_PART of part d / WAVE_PER_PART.
#define K1_PARTS __global const REAL* restrict k1_0, __global const REAL* restrict k1_1, \
                 __global const REAL* restrict k1_2, __global const REAL* restrict k1_3

inline __global const REAL* k1_diagonal(uint d, uint stride, __global const REAL* k1_0, __global const REAL* k1_1,
                                        __global const REAL* k1_2, __global const REAL* k1_3) {
  const uint p = d / WAVE_PER_PART;
  __global const REAL* part = p == 0 ? k1_0 : p == 1 ? k1_1 : p == 2 ? k1_2 : k1_3;
  return part + (size_t)(d % WAVE_PER_PART) * stride;
}

// The local position that walk position w stands for, or false when it stands for none. The
// walk covers the global DOFs [a, a + count), a = first + lo: in order, or (WAVE_STRIP > 0)
// strip by strip of each plane, every plane of the range's `planes` in turn within a strip, so
// that the second read of a diagonal that reaches across a plane comes a strip's DOFs after the
// first, not a plane's: from the cache.
inline bool walk_position(uint w, uint first, uint lo, uint count, uint planes, uint* l) {
#if WAVE_STRIP > 0
  const uint a = first + lo, span = planes * WAVE_STRIP;
  const uint strip = w / span, within = w - strip * span, z = within / WAVE_STRIP;
  const uint in_plane = strip * WAVE_STRIP + (within - z * WAVE_STRIP);
  const uint i = (a / WAVE_PLANE + z) * WAVE_PLANE + in_plane;
  *l = i - first;
  return in_plane < WAVE_PLANE && i >= a && i - a < count;
#else
  *l = lo + w;
  return w < count;
#endif
}

// u3 at local position l (global DOF first + l) near the vector's ends: every term tested.
inline REAL wave_edge(uint l, uint first, uint n, uint stride, K1_PARTS, __global const REAL* restrict k2,
                      __global const REAL* restrict inverse_mass, __global const REAL* restrict u1,
                      __global const REAL* restrict u2) {
  const uint i = first + l;
  REAL acc = 0;
  for (uint d = 0; d < WAVE_DIAGONALS; ++d) {
    const uint o = (uint)wave_offsets[d];
    __global const REAL* diagonal = k1_diagonal(d, stride, k1_0, k1_1, k1_2, k1_3);
    if (i + o < n) acc += diagonal[l] * u2[l + o];
    if (o > 0 && i >= o) acc += diagonal[l - o] * u2[l - o];
  }
  acc += k2[l] * u1[l];
  return -acc * inverse_mass[l];  // m's inverse: OpenCL's float division need not round correctly
}

// The source DOFs and the receiver DOFs, each sorted (local positions), with each source's weight
// (dt^2 g / m) and each receiver's slot in `recorded` past `offset`; the source's amplitude this step.
#define POINTS_ARGS __global const uint* restrict source_dofs, __global const REAL* restrict weights, \
                    const uint sources, const REAL amplitude, __global const uint* restrict receiver_dofs, \
                    __global const uint* restrict slots, const uint receivers, __global REAL* restrict recorded, \
                    const uint offset
#define POINTS source_dofs, weights, sources, amplitude, receiver_dofs, slots, receivers, recorded, offset

#if WAVE_POINTS_IN_STEP
// The first of the `count` sorted positions at or past l (count when none).
inline uint first_at_or_past(__global const uint* restrict sorted, uint count, uint l) {
  uint lo = 0, hi = count;
  while (lo < hi) {
    const uint mid = (lo + hi) / 2;
    if (sorted[mid] < l) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Stores u3 at l: the step's value plus each source's term at l (after the step, in the source's
// order, as wave_step_reference() adds them), and copies it to the receivers at l. One launch does
// the step, the source and the receivers (two kernels less a step).
inline void wave_store(uint l, REAL value, __global REAL* restrict u3, POINTS_ARGS) {
  if (sources > 0 && l >= source_dofs[0] && l <= source_dofs[sources - 1])
    for (uint s = first_at_or_past(source_dofs, sources, l); s < sources && source_dofs[s] == l; ++s)
      value += weights[s] * amplitude;
  u3[l] = value;
  if (receivers > 0 && l >= receiver_dofs[0] && l <= receiver_dofs[receivers - 1])
    for (uint r = first_at_or_past(receiver_dofs, receivers, l); r < receivers && receiver_dofs[r] == l; ++r)
      recorded[offset + slots[r]] = value;
}
#else
// On CPU devices the step stores its values only: the searches above, loops of their own in every
// work-item, cost PoCL 10-16 % of a step. wave_points adds the source and records the receivers once
// every part of the step is done.
inline void wave_store(uint l, REAL value, __global REAL* restrict u3, POINTS_ARGS) { u3[l] = value; }

// One work-item: u3 at each source DOF += its term, in the sources' order (as
// wave_step_reference() adds them, a DOF named twice included); then every receiver's value.
__kernel void wave_points(__global REAL* restrict u3, POINTS_ARGS) {
  if (get_global_id(0) != 0) return;
  for (uint s = 0; s < sources; ++s) u3[source_dofs[s]] += weights[s] * amplitude;
  for (uint r = 0; r < receivers; ++r) recorded[offset + slots[r]] = u3[receiver_dofs[r]];
}
#endif

// WAVE_ROWS DOFs a work-item of the global DOFs [first + lo, first + lo + count): u3 = -(K1 u2 +
// K2 u1) / m, the source added and the receivers recorded (wave_store). The buffers hold the global DOFs
// [first, first + stride) (one device's part of the vector with its halos; first = 0 and stride =
// n for the whole); bounds are global, so each DOF sums exactly the terms it sums in the whole
// vector, diagonal by diagonal in ascending order. `planes`: the planes of nodes the range touches.
__kernel void wave_step(K1_PARTS, __global const REAL* restrict k2, __global const REAL* restrict inverse_mass,
                        __global const REAL* restrict u1, __global const REAL* restrict u2,
                        __global REAL* restrict u3, const uint n, const uint first, const uint stride, const uint lo,
                        const uint count, const uint planes, POINTS_ARGS) {
  const uint group = (uint)get_local_size(0);
  const uint w0 = (uint)get_group_id(0) * WAVE_ROWS * group + (uint)get_local_id(0);
  const uint band = (uint)wave_offsets[WAVE_DIAGONALS - 1];
  uint l[WAVE_ROWS];
  bool valid[WAVE_ROWS], interior = true;
  for (uint r = 0; r < WAVE_ROWS; ++r) {
    valid[r] = walk_position(w0 + r * group, first, lo, count, planes, &l[r]);
    const uint i = first + l[r];
    interior = interior && valid[r] && i >= band && i + band < n;
  }
  if (!interior) {
    for (uint r = 0; r < WAVE_ROWS; ++r)
      if (valid[r])
        wave_store(l[r], wave_edge(l[r], first, n, stride, k1_0, k1_1, k1_2, k1_3, k2, inverse_mass, u1, u2), u3, POINTS);
    return;
  }
  // Away from the vector's ends every term exists: the same sums without the bounds tests
  // (diagonal 0, offset 0, used once), every load of the rows independent of the sums.
  REAL acc[WAVE_ROWS];
#pragma unroll
  for (uint r = 0; r < WAVE_ROWS; ++r) {
    acc[r] = 0;
    acc[r] += k1_0[l[r]] * u2[l[r]];
  }
#pragma unroll
  for (uint d = 1; d < WAVE_DIAGONALS; ++d) {
    const uint o = (uint)wave_offsets[d];
    __global const REAL* diagonal = k1_diagonal(d, stride, k1_0, k1_1, k1_2, k1_3);
#pragma unroll
    for (uint r = 0; r < WAVE_ROWS; ++r) {
      acc[r] += diagonal[l[r]] * u2[l[r] + o];
      acc[r] += diagonal[l[r] - o] * u2[l[r] - o];
    }
  }
#pragma unroll
  for (uint r = 0; r < WAVE_ROWS; ++r) {
    acc[r] += k2[l[r]] * u1[l[r]];
    wave_store(l[r], -acc[r] * inverse_mass[l[r]], u3, POINTS);
  }
}

#if !WAVE_POINTS_IN_STEP
// On CPU devices the interior, one DOF a work-item, `count` in order from `lo`, with none of the bounds
// tests, walk or loop of wave_step: the same sums in the same order, which PoCL vectorises across
// work-items (wave_step it does not). The vector's ends go through wave_step.
__kernel void wave_step_flat(K1_PARTS, __global const REAL* restrict k2, __global const REAL* restrict inverse_mass,
                             __global const REAL* restrict u1, __global const REAL* restrict u2,
                             __global REAL* restrict u3, const uint stride, const uint lo, const uint count) {
  if ((uint)get_global_id(0) >= count) return;
  const uint l = lo + (uint)get_global_id(0);
  REAL acc = 0;
  acc += k1_0[l] * u2[l];
#pragma unroll
  for (uint d = 1; d < WAVE_DIAGONALS; ++d) {
    const uint o = (uint)wave_offsets[d];
    __global const REAL* diagonal = k1_diagonal(d, stride, k1_0, k1_1, k1_2, k1_3);
    acc += diagonal[l] * u2[l + o];
    acc += diagonal[l - o] * u2[l - o];
  }
  acc += k2[l] * u1[l];
  u3[l] = -acc * inverse_mass[l];
}
#endif
