#pragma once
// Everything ziggurat offers, in one include.

#include "ziggurat/binary_cache.hpp"
#include "ziggurat/context.hpp"
#include "ziggurat/device.hpp"
#include "ziggurat/error.hpp"
#include "ziggurat/grid.hpp"
#include "ziggurat/heat.hpp"
#include "ziggurat/heat_solver.hpp"
#include "ziggurat/calibration.hpp"
#include "ziggurat/model.hpp"
#include "ziggurat/matrix_market.hpp"
#include "ziggurat/memory.hpp"
#include "ziggurat/npy.hpp"
#include "ziggurat/program.hpp"
#include "ziggurat/sparse.hpp"
#include "ziggurat/spmm.hpp"
#include "ziggurat/version.hpp"
