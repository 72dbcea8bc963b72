// The prologue of every ziggurat kernel file: lib/base/program.cpp puts it in front of each one
// (the CLBlast approach), so that no kernel file repeats it. Build options: -DREAL=float|double,
// and -DREAL_IS_DOUBLE=1 for double (BuildOptions::real_type).

#ifndef REAL
#error "ziggurat kernels are built with -DREAL=float or -DREAL=double (BuildOptions::real_type)"
#endif
#ifdef REAL_IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// CONCAT(a, b): a and b pasted after both are expanded (CONCAT(REAL, 4) is double4 in double).
#define CONCAT_(a, b) a##b
#define CONCAT(a, b) CONCAT_(a, b)

// With -DVW (1, 2, 4, 8 or 16): REALV, VW values of REAL as one OpenCL vector, and LOADV(i, p) /
// STOREV(v, i, p), the VW values from p + i * VW (aligned to REAL only, as vloadn needs).
#ifdef VW
#if VW == 1
#define REALV REAL
#define LOADV(i, p) ((p)[i])
#define STOREV(v, i, p) ((p)[i] = (v))
#else
#define REALV CONCAT(REAL, VW)
#define LOADV(i, p) CONCAT(vload, VW)(i, p)
#define STOREV(v, i, p) CONCAT(vstore, VW)(v, i, p)
#endif
#endif
