// Explicit FEM wave steps (method notes, section 5), m u3 = dt^2 f - K1 u2 - K2 u1, on vectors of n
// DOFs. K1 is a symmetric half-stored DIA matrix: diagonal d holds K1(i, i + o) at k1[d n + i]
// and is used a second time as K1(i, i - o) = k1[d n + i - o]; its offsets sit in constant
// memory. The arithmetic of each DOF is fixed (wave_step_reference() repeats it on the host), so
// that every split of the vector gives the same bits.
#pragma OPENCL FP_CONTRACT OFF

// K1's diagonals in up to four buffers (one allocation may not hold them all: NVIDIA allows a
// quarter of the memory), `per_part` consecutive diagonals each; diagonal d is part d / per_part.
#define K1_PARTS __global const REAL* restrict k1_0, __global const REAL* restrict k1_1, \
                 __global const REAL* restrict k1_2, __global const REAL* restrict k1_3, const uint per_part

inline __global const REAL* k1_part(uint p, __global const REAL* k1_0, __global const REAL* k1_1,
                                    __global const REAL* k1_2, __global const REAL* k1_3) {
  return p == 0 ? k1_0 : p == 1 ? k1_1 : p == 2 ? k1_2 : k1_3;
}

// One work-item per DOF of local positions [lo, lo + count): u3 = -(K1 u2 + K2 u1) / m, the
// source added by wave_inject afterwards. The buffers hold the global DOFs [first, first + stride)
// (one device's part of the vector with its halos; first = 0 and stride = n for the whole);
// bounds are global, so each DOF sums exactly the terms it sums in the whole vector, diagonal by
// diagonal in ascending order whichever part holds them.
__kernel void wave_step(__constant const int* offsets, const uint diagonals, K1_PARTS,
                        __global const REAL* restrict k2, __global const REAL* restrict inverse_mass,
                        __global const REAL* restrict u1, __global const REAL* restrict u2,
                        __global REAL* restrict u3, const uint n, const uint first, const uint stride, const uint lo,
                        const uint count) {
  if (get_global_id(0) >= count) return;
  const uint l = lo + (uint)get_global_id(0), i = first + l, band = (uint)offsets[diagonals - 1];
  const bool inside = i >= band && i + band < n;
  REAL acc = 0;
  for (uint p = 0, d0 = 0; d0 < diagonals; ++p, d0 += per_part) {
    __global const REAL* part = k1_part(p, k1_0, k1_1, k1_2, k1_3);
    const uint d1 = min(diagonals, d0 + per_part);
    if (inside) {
      // Away from the vector's ends every term exists: the same sums without the bounds tests
      // (diagonal 0, offset 0, used once).
      uint d = d0;
      if (d == 0) {
        acc += part[l] * u2[l];
        d = 1;
      }
      for (; d < d1; ++d) {
        const uint o = (uint)offsets[d];
        __global const REAL* diagonal = part + (size_t)(d - d0) * stride;
        acc += diagonal[l] * u2[l + o];
        acc += diagonal[l - o] * u2[l - o];
      }
    } else {
      for (uint d = d0; d < d1; ++d) {
        const uint o = (uint)offsets[d];
        __global const REAL* diagonal = part + (size_t)(d - d0) * stride;
        if (i + o < n) acc += diagonal[l] * u2[l + o];
        if (o > 0 && i >= o) acc += diagonal[l - o] * u2[l - o];
      }
    }
  }
  acc += k2[l] * u1[l];
  u3[l] = -acc * inverse_mass[l];  // m's inverse: OpenCL's float division need not round correctly
}

// u3[dofs[s]] += weights[s] * amplitude for the `count` source DOFs (weights = dt^2 g / m).
__kernel void wave_inject(__global REAL* u3, __global const uint* restrict dofs, __global const REAL* restrict weights,
                          const uint count, const REAL amplitude) {
  const uint s = (uint)get_global_id(0);
  if (s < count) u3[dofs[s]] += weights[s] * amplitude;
}

// out[offset + r] = u[dofs[r]] for the `count` receiver DOFs.
__kernel void wave_record(__global const REAL* restrict u, __global const uint* restrict dofs, const uint count,
                          __global REAL* restrict out, const uint offset) {
  const uint r = (uint)get_global_id(0);
  if (r < count) out[offset + r] = u[dofs[r]];
}
