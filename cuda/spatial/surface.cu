// surface.cu -- a cloud resident on the device (src/spatial/neighborhood_cuda.h): upload, its grid, its normals,
// gathering its points.
#include "cuda/core/device.cuh"
#include "cuda/spatial/surface.cuh"

#include <stdlib.h>

namespace {

constexpr int kThreads = 256;

__global__ void gather_xyz_kernel(const float *__restrict__ xyz, uint32_t n, const uint32_t *__restrict__ idx,
                                  size_t count, float *out, unsigned int *bad)
{
    const size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e >= count)
        return;
    const uint32_t i = idx[e];
    if (i >= n) {
        atomicAdd(bad, 1u);
        return;
    }
    out[3 * e] = xyz[3 * (size_t)i];
    out[3 * e + 1] = xyz[3 * (size_t)i + 1];
    out[3 * e + 2] = xyz[3 * (size_t)i + 2];
}

// Copies the points in (from host or device memory), allocates the normals, measures the bounds and builds the
// k-nearest grid.
grip_status surface_fill(grip_ctx *ctx, grip_surface_cuda *s, const float *xyz, bool xyz_on_device)
{
    void *dev = NULL;
    const size_t bytes = (size_t)s->n * 3 * sizeof(float);
    grip_status st;
    if (xyz_on_device) {
        st = grip_cuda_alloc(ctx, bytes ? bytes : sizeof(float), &dev);
        s->device = ctx->device;
        if (st == GRIP_OK)
            st = bytes ? grip_cuda_copy_on_device(ctx, dev, xyz, bytes) : GRIP_OK;
    } else {
        st = grip_cuda_upload(ctx, xyz, bytes, &dev, &s->device);
    }
    s->xyz = (float *)dev;
    if (st != GRIP_OK)
        return st;
    st = grip_cuda_alloc(ctx, (size_t)s->n * 4 * sizeof(float), &dev);
    if (st != GRIP_OK)
        return st;
    s->normals = (float *)dev;
    st = grip_grid3d_measure(ctx, s->xyz, s->n, &s->bounds);
    if (st != GRIP_OK || s->bounds.finite == 0)
        return st;
    return grip_grid3d_build_for_knn(ctx, s->xyz, s->n, s->bounds, &s->grid);
}

grip_status gather_run(grip_ctx *ctx, const grip_surface_cuda *s, const uint32_t *idx, size_t count, float *out,
                       unsigned int *bad)
{
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(bad, 0, sizeof *bad, 0));
    gather_xyz_kernel<<<(unsigned int)((count + kThreads - 1) / kThreads), kThreads>>>(s->xyz, s->n, idx, count, out,
                                                                                       bad);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    unsigned int host_bad = 0;
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, &host_bad, bad, sizeof host_bad, cudaMemcpyDeviceToHost));
    if (host_bad)
        return grip_fail(ctx, GRIP_EINVAL, "surface gather (cuda): %u of %zu indices are >= the surface's %u points",
                         host_bad, count, s->n);
    return GRIP_OK;
}

// Host normals of 3 columns become the surface's rows of 4 (curvature NaN, all-ones bits) on the device: one
// contiguous upload and a widening kernel. (A pitched cudaMemcpy2D of 12-byte rows costs a DMA descriptor per row,
// several times the time of moving the same bytes at once.)
__global__ void widen_normals_kernel(const float *__restrict__ in3, uint32_t n, float4 *out4)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out4[i] = make_float4(in3[3 * (size_t)i], in3[3 * (size_t)i + 1], in3[3 * (size_t)i + 2],
                          __uint_as_float(0xffffffffu));
}

grip_status widen_normals_run(grip_ctx *ctx, grip_surface_cuda *s, const float *staged3)
{
    widen_normals_kernel<<<(s->n + kThreads - 1) / kThreads, kThreads>>>(staged3, s->n, (float4 *)s->normals);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

grip_status set_normals_run(grip_ctx *ctx, grip_surface_cuda *s, const float *normals, size_t stride)
{
    const size_t n = s->n;
    if (n == 0)
        return GRIP_OK;
    if (stride == 4) {
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, s->normals, normals, n * 4 * sizeof(float), cudaMemcpyHostToDevice));
        return GRIP_OK;
    }
    void *staged = NULL; // n x 3 on the device, freed here on every path
    int device = -1;
    grip_status st = grip_cuda_upload(ctx, normals, n * 3 * sizeof(float), &staged, &device);
    if (st == GRIP_OK)
        st = widen_normals_run(ctx, s, (const float *)staged);
    grip_cuda_free(staged);
    return st;
}

// grip_surface_cuda_create and grip_surface_cuda_create_on_device.
grip_status surface_create(grip_ctx *ctx, const float *xyz, bool xyz_on_device, size_t n, grip_surface_cuda **out)
{
    *out = NULL;
    if (!xyz && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "surface (cuda): xyz is NULL with %zu points", n);
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "surface (cuda): %zu points, more than the GPU indexes", n);
    grip_surface_cuda *s = (grip_surface_cuda *)calloc(1, sizeof *s);
    if (!s)
        return grip_fail(ctx, GRIP_ENOMEM, "surface (cuda): no host memory for the surface");
    s->n = (uint32_t)n;
    s->device = -1;
    grip_status st = surface_fill(ctx, s, xyz, xyz_on_device);
    if (st != GRIP_OK) {
        grip_surface_cuda_free(s);
        return st;
    }
    *out = s;
    return GRIP_OK;
}

} // namespace

extern "C" grip_status grip_surface_cuda_create(grip_ctx *ctx, const float *xyz, size_t n, grip_surface_cuda **out)
{
    return surface_create(ctx, xyz, false, n, out);
}

extern "C" grip_status grip_surface_cuda_create_on_device(grip_ctx *ctx, const float *xyz_dev, size_t n,
                                                          grip_surface_cuda **out)
{
    return surface_create(ctx, xyz_dev, true, n, out);
}

extern "C" void grip_surface_cuda_free(grip_surface_cuda *s)
{
    if (!s)
        return;
    grip_cuda_free(s->xyz);
    grip_cuda_free(s->normals);
    grip_grid3d_free(&s->grid);
    free(s);
}

extern "C" grip_surface_cuda_view grip_surface_cuda_get_view(const grip_surface_cuda *s)
{
    grip_surface_cuda_view v;
    v.n = s->n;
    v.xyz = s->xyz;
    v.normals = s->normals;
    v.has_normals = s->has_normals;
    v.device = s->device;
    return v;
}

extern "C" grip_status grip_surface_cuda_set_normals(grip_ctx *ctx, grip_surface_cuda *s, const float *normals,
                                                     size_t stride)
{
    if (!s || (!normals && s->n > 0))
        return grip_fail(ctx, GRIP_EINVAL, "surface normals (cuda): %s is NULL", s ? "normals" : "the surface");
    if (stride != 3 && stride != 4)
        return grip_fail(ctx, GRIP_EINVAL, "surface normals (cuda): stride %zu (3 or 4 floats a row)", stride);
    grip_status st = set_normals_run(ctx, s, normals, stride);
    if (st == GRIP_OK)
        s->has_normals = 1;
    return st;
}

extern "C" grip_status grip_surface_cuda_set_normals_on_device(grip_ctx *ctx, grip_surface_cuda *s,
                                                               const float *normals_dev)
{
    if (!s || (!normals_dev && s->n > 0))
        return grip_fail(ctx, GRIP_EINVAL, "surface normals (cuda): %s is NULL", s ? "normals" : "the surface");
    if (s->n)
        GRIP_CUDA_CHECK(
            ctx, grip_cuda_memcpy(ctx, s->normals, normals_dev, s->n * 4 * sizeof(float), cudaMemcpyDeviceToDevice));
    s->has_normals = 1;
    return GRIP_OK;
}

extern "C" void grip_surface_cuda_mark_normals(grip_surface_cuda *s)
{
    s->has_normals = 1;
}

extern "C" grip_status grip_surface_cuda_gather(grip_ctx *ctx, const grip_surface_cuda *s, const uint32_t *idx,
                                                size_t count, float *xyz_out)
{
    if (!s || ((!idx || !xyz_out) && count > 0))
        return grip_fail(ctx, GRIP_EINVAL, "surface gather (cuda): %s is NULL",
                         !s ? "the surface" : (!idx ? "idx" : "xyz_out"));
    if (count == 0)
        return GRIP_OK;
    void *bad = NULL;
    grip_status st = grip_cuda_alloc(ctx, sizeof(unsigned int), &bad);
    if (st == GRIP_OK)
        st = gather_run(ctx, s, idx, count, xyz_out, (unsigned int *)bad);
    grip_cuda_free(bad);
    return st;
}
