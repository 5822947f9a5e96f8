/* index_rows.c -- see index_rows.h. */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include "bench/index_rows.h"

#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* splitmix64's finaliser: a well-mixed 64-bit word of x */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* uniform in [0, 1) from (seed, a, b) */
static float uniform3(uint64_t seed, uint64_t a, uint64_t b)
{
    return (float)(mix(mix(mix(seed) ^ a) ^ b) >> 40) * (1.0f / 16777216.0f);
}

static void normalise(float *row, uint32_t dim)
{
    double s = 0;
    for (uint32_t j = 0; j < dim; j++)
        s += (double)row[j] * row[j];
    float inv = s > 0 ? (float)(1.0 / sqrt(s)) : 0.0f;
    for (uint32_t j = 0; j < dim; j++)
        row[j] *= inv;
}

static void reference_row(uint64_t seed, uint32_t dim, uint64_t r, float *row)
{
    for (uint32_t j = 0; j < dim; j++) {
        float u = uniform3(seed, r, j), u2 = u * u;
        row[j] = u2 * u2;
    }
    normalise(row, dim);
}

/* one thread's share of a row range: rows [lo, hi) of a job */
typedef struct rows_job {
    uint64_t seed, n, first;
    uint32_t dim;
    int queries; /* 1: queries against n rows; 0: reference rows from `first` */
    float *out;
    uint64_t lo, hi;
} rows_job;

static void query_row(uint64_t seed, uint32_t dim, uint64_t n, uint64_t i, float *q)
{
    const uint64_t qseed = mix(seed ^ 0x71756572790aull); /* the queries' own stream */
    reference_row(seed, dim, mix(qseed ^ i) % n, q);
    double mean = 0, var = 0;
    for (uint32_t j = 0; j < dim; j++)
        mean += q[j];
    mean /= dim;
    for (uint32_t j = 0; j < dim; j++)
        var += (q[j] - mean) * (q[j] - mean);
    float sigma = 0.25f * (float)sqrt(var / dim);
    for (uint32_t j = 0; j < dim; j++) {
        /* Box-Muller from two uniforms of the query's stream */
        float u1 = uniform3(qseed, i, 2u * j) + 1.0f / 33554432.0f;
        float u2 = uniform3(qseed, i, 2u * j + 1);
        float g = sqrtf(-2.0f * logf(u1)) * cosf(6.28318530718f * u2);
        float v = q[j] + sigma * g;
        q[j] = v > 0 ? v : 0;
    }
    normalise(q, dim);
}

static void *rows_work(void *arg)
{
    const rows_job *j = arg;
    for (uint64_t i = j->lo; i < j->hi; i++) {
        float *row = j->out + (size_t)i * j->dim;
        if (j->queries)
            query_row(j->seed, j->dim, j->n, i, row);
        else
            reference_row(j->seed, j->dim, j->first + i, row);
    }
    return NULL;
}

/* rows [0, count) of the job on the host's cores (the bench's data, not the library's work: plain threads) */
static void rows_parallel(rows_job job, uint64_t count)
{
    enum { MAX_THREADS = 64 };
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
    pthread_t th[MAX_THREADS];
    rows_job jobs[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int t = 0; t < n; t++) {
        jobs[t] = job;
        jobs[t].lo = count * (uint64_t)t / (uint64_t)n;
        jobs[t].hi = count * (uint64_t)(t + 1) / (uint64_t)n;
        started[t] = t > 0 && pthread_create(&th[t], NULL, rows_work, &jobs[t]) == 0;
        if (t > 0 && !started[t])
            rows_work(&jobs[t]); /* no thread to be had: this one does it */
    }
    rows_work(&jobs[0]);
    for (int t = 1; t < n; t++)
        if (started[t])
            pthread_join(th[t], NULL);
}

void index_rows_reference(uint64_t seed, uint32_t dim, uint64_t first, uint64_t count, float *out)
{
    rows_job job = {seed, 0, first, dim, 0, out, 0, 0};
    rows_parallel(job, count);
}

void index_rows_queries(uint64_t seed, uint32_t dim, uint64_t n, uint64_t m, float *out)
{
    rows_job job = {seed, n, 0, dim, 1, out, 0, 0};
    rows_parallel(job, m);
}

int index_rows_count_file(const char *path, uint32_t dim, uint64_t *rows_out, char *err, size_t errlen)
{
    struct stat st;
    *rows_out = 0;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    uint64_t row_bytes = (uint64_t)dim * sizeof(float);
    if (st.st_size <= 0 || (uint64_t)st.st_size % row_bytes) {
        snprintf(err, errlen, "%s: %lld bytes is not a whole number of %u-float rows", path, (long long)st.st_size,
                 dim);
        return -1;
    }
    *rows_out = (uint64_t)st.st_size / row_bytes;
    return 0;
}

int index_rows_read_file(const char *path, uint32_t dim, uint64_t first, uint64_t count, float *out, char *err,
                         size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int ok = fseeko(f, (off_t)(first * dim * sizeof(float)), SEEK_SET) == 0 &&
             fread(out, sizeof(float) * dim, count, f) == count;
    fclose(f);
    if (!ok)
        snprintf(err, errlen, "%s: cannot read rows %llu to %llu", path, (unsigned long long)first,
                 (unsigned long long)(first + count));
    return ok ? 0 : -1;
}
