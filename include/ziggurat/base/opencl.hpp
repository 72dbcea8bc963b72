#pragma once
// The one place that configures the OpenCL C++ bindings for ziggurat and its users.
//
// OpenCL 1.2 is the API level: every device ziggurat targets (NVIDIA, AMD, Intel, PoCL, Oclgrind)
// implements it, and nothing here needs 2.0. (opencl-clhpp-headers 2023.02 accepts target/minimum
// 120/120 or 300/200, but not 300/120.) The bindings' own exceptions stay off: ziggurat checks every
// return code itself and throws its own, more informative, errors (see error.hpp).
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#endif
#include <CL/opencl.hpp>
