// Kernels that measure the device (lib/calibration.cpp).

// Does nothing: its time is the cost of a launch.
__kernel void empty(void) {}
