// CK(call): a CUDA runtime call that must succeed, or the experiment stops naming it.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e = (x);                                                                  \
        if (e != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)
