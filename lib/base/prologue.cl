// The prologue of every ziggurat kernel file: lib/base/program.cpp puts it in front of each one
// (the CLBlast approach), so that no kernel file repeats it. Build options: -DREAL=float|double,
// and -DREAL_IS_DOUBLE=1 for double (BuildOptions::real_type).

#ifndef REAL
#error "ziggurat kernels are built with -DREAL=float or -DREAL=double (BuildOptions::real_type)"
#endif
#ifdef REAL_IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
