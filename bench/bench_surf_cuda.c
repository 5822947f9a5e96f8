/* bench_surf_cuda.c -- times SURF detection + description (grip_surf_cuda: integral image, layers, maxima, sort,
 * orientation, 64-D descriptors; the grey image already on the device, the descriptors left there) on a 640 x 480
 * and a 1920 x 1080 frame: the rgb of the PCD given as argv[1] (an organized colour cloud, e.g.
 * milk_cartoon_all_small_clorox.pcd) at its own size and resized bilinearly to 1920 x 1080, or, without an
 * argument, synthetic frames of 64 blobs. Wall clock around the synchronous call, 3 warm-ups, median, min and max
 * of 30 runs; also upright, and the CPU twin once (all OpenMP threads) with its keypoint count, which must equal
 * the GPU's. One line per frame and variant.
 * Usage: bench_surf_cuda [cloud.pcd]. Not a test: prints a line and exits 1 on a failure. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "descriptor/surf.h"
#include "descriptor/surf_cuda.h"
#include "io/cloud_io.h"
#include "surf_scene.h"
#include "host_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 30

/* grey (w x h) resized bilinearly to W x H (malloc'd). */
static uint8_t *resize(const uint8_t *grey, uint32_t w, uint32_t h, uint32_t W, uint32_t H)
{
    uint8_t *out = malloc((size_t)W * H);
    if (!out)
        return NULL;
    for (uint32_t y = 0; y < H; ++y)
        for (uint32_t x = 0; x < W; ++x) {
            const float sx = ((float)x + 0.5f) * (float)w / (float)W - 0.5f,
                        sy = ((float)y + 0.5f) * (float)h / (float)H - 0.5f;
            int x0 = (int)sx, y0 = (int)sy;
            x0 = x0 < 0 ? 0 : x0 > (int)w - 2 ? (int)w - 2 : x0;
            y0 = y0 < 0 ? 0 : y0 > (int)h - 2 ? (int)h - 2 : y0;
            float fx = sx - (float)x0, fy = sy - (float)y0;
            fx = fx < 0 ? 0 : fx > 1 ? 1 : fx;
            fy = fy < 0 ? 0 : fy > 1 ? 1 : fy;
            const uint8_t *p = grey + (size_t)y0 * w + x0;
            const float v = (1 - fy) * ((1 - fx) * p[0] + fx * p[1]) + fy * ((1 - fx) * p[w] + fx * p[w + 1]);
            out[(size_t)y * W + x] = (uint8_t)(v + 0.5f);
        }
    return out;
}

static int bench(grip_ctx *ctx, const char *frame, const uint8_t *grey, uint32_t w, uint32_t h, int upright)
{
    const grip_surf_params p = {4, 4, 2, 0.0004f, upright, 0, 100000, 0};
    void *dev = NULL;
    int device = -1;
    if (grip_cuda_upload(ctx, grey, (size_t)w * h, &dev, &device)) {
        printf("surf %s: upload failed: %s\n", frame, grip_ctx_error_text(ctx));
        return 1;
    }
    double ms[REPS];
    size_t count = 0;
    for (int r = -3; r < REPS; ++r) {
        grip_surf_cuda_result res;
        const double t0 = host_now_ms();
        const grip_status s = grip_surf_cuda(ctx, dev, NULL, w, h, &p, &res);
        const double t1 = host_now_ms();
        count = res.count;
        grip_surf_cuda_result_free(&res);
        if (s) {
            printf("surf %s: %s\n", frame, grip_ctx_error_text(ctx));
            grip_cuda_free(dev);
            return 1;
        }
        if (r >= 0)
            ms[r] = t1 - t0;
    }
    grip_cuda_free(dev);
    qsort(ms, REPS, sizeof ms[0], host_compare_doubles);
    grip_surf_result cpu;
    const double c0 = host_now_ms();
    const grip_status s = grip_surf_run(ctx, grey, NULL, w, h, &p, &cpu);
    const double c1 = host_now_ms();
    const size_t cpu_count = cpu.count;
    grip_surf_result_free(&cpu);
    if (s || cpu_count != count) {
        printf("surf %s: cpu twin %s, %zu keypoints against the gpu's %zu\n", frame,
               s ? grip_ctx_error_text(ctx) : "ok", cpu_count, count);
        return 1;
    }
    printf("surf %-28s %4u x %4u %s: %6zu keypoints, gpu median %8.3f ms (min %.3f, max %.3f, %d runs), cpu twin "
           "%9.1f ms (%d threads)\n",
           frame, w, h, upright ? "upright " : "oriented", count, ms[REPS / 2], ms[0], ms[REPS - 1], REPS, c1 - c0,
           grip_ctx_threads(ctx));
    return 0;
}

int main(int argc, char **argv)
{
    grip_ctx *ctx = NULL;
    grip_ctx_options o = {sizeof o, -1, 0};
    if (grip_ctx_new(&o, &ctx) || grip_cuda_device_count() < 1) {
        printf("surf: no CUDA device\n");
        return 1;
    }
    uint8_t *small = NULL, *large = NULL;
    const char *what;
    uint32_t sw = 640, sh = 480;
    if (argc > 1) {
        host_cloud c;
        char err[512];
        if (cloud_read(argv[1], &c, err, sizeof err) || !c.rgb || c.height < 2) {
            printf("surf: %s: %s\n", argv[1], c.rgb ? err : "no organized rgb");
            return 1;
        }
        sw = c.width;
        sh = c.height;
        small = malloc(c.n);
        if (small)
            grip_surf_grey_image(c.rgb, c.n, small);
        host_cloud_free(&c);
        large = small ? resize(small, sw, sh, 1920, 1080) : NULL;
        what = "rgb of the cloud";
    } else {
        grip_surf_scene a = grip_surf_scene_make(640, 480, 64, 1), b = grip_surf_scene_make(1920, 1080, 64, 2);
        small = a.rgb ? malloc((size_t)640 * 480) : NULL;
        large = b.rgb ? malloc((size_t)1920 * 1080) : NULL;
        if (small)
            grip_surf_grey_image(a.rgb, (size_t)640 * 480, small);
        if (large)
            grip_surf_grey_image(b.rgb, (size_t)1920 * 1080, large);
        grip_surf_scene_free(&a);
        grip_surf_scene_free(&b);
        what = "synthetic blobs";
    }
    if (!small || !large) {
        printf("surf: out of memory\n");
        return 1;
    }
    int bad = 0;
    for (int upright = 0; upright < 2; ++upright) {
        char name[64];
        snprintf(name, sizeof name, "%s", what);
        bad |= bench(ctx, name, small, sw, sh, upright);
        snprintf(name, sizeof name, "%s%s", what, argc > 1 ? " (resized)" : "");
        bad |= bench(ctx, name, large, 1920, 1080, upright);
    }
    free(small);
    free(large);
    grip_ctx_free(ctx);
    return bad;
}
