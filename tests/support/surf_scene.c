/* surf_scene.c -- see surf_scene.h. */
#include "surf_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static float uniform(uint64_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)(next(s) & 0xffffff) / 16777216.0f;
}

grip_surf_scene grip_surf_scene_make(uint32_t width, uint32_t height, uint32_t n_blobs, uint64_t seed)
{
    grip_surf_scene sc;
    memset(&sc, 0, sizeof sc);
    sc.width = width;
    sc.height = height;
    const size_t n = (size_t)width * height;
    sc.rgb = malloc(3 * n);
    sc.xyz = malloc(3 * n * sizeof *sc.xyz);
    float *grey = malloc(n * sizeof *grey);
    if (!sc.rgb || !sc.xyz || !grey) {
        free(grey);
        grip_surf_scene_free(&sc);
        return sc;
    }
    uint64_t rs = seed * 2654435761u + 1;
    for (uint32_t b = 0; b < n_blobs && b < GRIP_SURF_SCENE_MAX_BLOBS; ++b) {
        for (int attempt = 0; attempt < 200; ++attempt) {
            const float sigma = uniform(&rs, 2.0f, 10.0f), m = 3 * sigma + 16;
            if (2 * m >= (float)width || 2 * m >= (float)height)
                continue;
            const float x = uniform(&rs, m, (float)width - m), y = uniform(&rs, m, (float)height - m);
            int clear = 1;
            for (uint32_t o = 0; o < sc.n_blobs && clear; ++o) {
                const float dx = x - sc.blob_x[o], dy = y - sc.blob_y[o];
                clear = sqrtf(dx * dx + dy * dy) > 3 * (sigma + sc.blob_sigma[o]) + 8;
            }
            if (!clear)
                continue;
            sc.blob_x[sc.n_blobs] = x;
            sc.blob_y[sc.n_blobs] = y;
            sc.blob_sigma[sc.n_blobs] = sigma;
            sc.blob_dark[sc.n_blobs] = (int)(next(&rs) & 1);
            ++sc.n_blobs;
            break;
        }
    }
    for (uint32_t r = 0; r < height; ++r)
        for (uint32_t c = 0; c < width; ++c) {
            float v = 128.0f + 20.0f * sinf(0.01f * (float)c) * cosf(0.013f * (float)r);
            for (uint32_t b = 0; b < sc.n_blobs; ++b) {
                const float dx = (float)c - sc.blob_x[b], dy = (float)r - sc.blob_y[b], s = sc.blob_sigma[b];
                const float d2 = dx * dx + dy * dy;
                if (d2 < 25 * s * s)
                    v += (sc.blob_dark[b] ? -90.0f : 90.0f) * expf(-d2 / (2 * s * s));
            }
            grey[(size_t)r * width + c] = v;
        }
    for (size_t i = 0; i < n; ++i) {
        const float v = grey[i] < 0 ? 0 : grey[i] > 255 ? 255 : grey[i];
        const uint8_t g = (uint8_t)lrintf(v);
        sc.rgb[3 * i] = g;
        sc.rgb[3 * i + 1] = g;
        sc.rgb[3 * i + 2] = g;
        const float z = 1.0f + 0.0005f * (float)(i % width);
        sc.xyz[3 * i] = ((float)(i % width) - 0.5f * (float)width) * z / 525.0f;
        sc.xyz[3 * i + 1] = ((float)(i / width) - 0.5f * (float)height) * z / 525.0f;
        sc.xyz[3 * i + 2] = z;
    }
    free(grey);
    return sc;
}

void grip_surf_scene_free(grip_surf_scene *s)
{
    free(s->rgb);
    free(s->xyz);
    memset(s, 0, sizeof *s);
}

grip_surf_rng grip_surf_rng_seed(uint64_t seed)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    grip_surf_rng r = {z ^ (z >> 31)};
    return r;
}

double grip_surf_rng_uniform(grip_surf_rng *r, double lo, double hi)
{
    r->state = r->state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (double)(r->state >> 11) / 9007199254740992.0;
}
