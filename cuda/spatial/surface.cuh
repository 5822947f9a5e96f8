// surface.cuh -- what a grip_surface_cuda (src/spatial/neighborhood_cuda.h) holds, for the CUDA code that searches
// or fills it (cuda/spatial/neighborhood.cu, cuda/descriptor/normals.cu). The C side sees the opaque type and its view
// only.
#ifndef GRIP_CUDA_SURFACE_CUH
#define GRIP_CUDA_SURFACE_CUH

#include "cuda/spatial/grid3d.cuh"

extern "C" {
#include "spatial/neighborhood_cuda.h"
}

struct grip_surface_cuda {
    uint32_t n;
    int device;               // CUDA ordinal of every array below
    int has_normals;
    float *xyz;               // n x 3, as uploaded
    float *normals;           // n x 4 (nx, ny, nz, curvature)
    grip_grid3d_bounds bounds; // of the finite points; bounds.finite == 0: no grid
    grip_grid3d grid;          // planned for k-nearest search (a few points per occupied cell)
};

#endif
