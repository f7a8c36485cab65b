// hostdev.cuh: lets an index header compile both in kernels (nvcc) and on the host
// (the `cc` crate, for layout-viz and the CPU tests). Only pure integer functions live
// in headers that include this one, so the host build sees exactly the kernels' code.
#pragma once

#if defined(__CUDACC__)
#define FL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FL_HOST_DEVICE inline
#endif
