/* fuzz_common.h -- what every reader harness checks besides "no crash": the readers' contract (cloud_io.h).
 * A broken promise aborts, so libFuzzer keeps the input like any crash. */
#ifndef GRIP_FUZZ_COMMON_H
#define GRIP_FUZZ_COMMON_H

#include "io/cloud_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void fuzz_require(int ok, const char *what, const char *err)
{
    if (!ok) {
        fprintf(stderr, "contract broken: %s (err: '%s')\n", what, err ? err : "");
        abort();
    }
}

/* Sums every byte the cloud claims to hold, so that ASan sees a read of each: an array shorter than n points
 * is caught here rather than downstream. */
static inline void fuzz_touch(const void *p, size_t bytes)
{
    const volatile unsigned char *b = p;
    unsigned sum = 0;
    for (size_t i = 0; i < bytes; i++)
        sum += b[i];
    (void)sum;
}

/* rc and out as pcd_read_mem/ply_read_mem left them for the file `name`. */
static inline void fuzz_check_read(int rc, const host_cloud *c, const char *err, const char *name)
{
    size_t nlen = strlen(name);
    if (rc != 0) {
        fuzz_require(rc == -1, "a failure returns -1", err);
        fuzz_require(!c->xyz && !c->normals && !c->rgb && !c->path && c->n == 0 && c->width == 0 && c->height == 0,
                     "a failure leaves the cloud zeroed", err);
        /* "<name>: ..." or "<name>:<line>: ...", one printable line */
        fuzz_require(strncmp(err, name, nlen) == 0 && err[nlen] == ':', "the message starts with the file name",
                     err);
        fuzz_require(strlen(err) > nlen + 2, "the message says something", err);
        for (const char *p = err; *p; p++)
            fuzz_require((unsigned char)*p >= 0x20 && *p != 0x7f, "the message is one printable line", err);
        return;
    }
    fuzz_require(c->path && strcmp(c->path, name) == 0, "the cloud keeps the name", err);
    fuzz_require((uint64_t)c->width * c->height == c->n, "n = width x height", err);
    fuzz_require((c->n > 0) == (c->xyz != NULL), "xyz present exactly when there are points", err);
    fuzz_require(c->n > 0 || (!c->normals && !c->rgb), "no normals or colours without points", err);
    fuzz_touch(c->xyz, c->n * 3 * sizeof(float));
    if (c->normals)
        fuzz_touch(c->normals, c->n * 3 * sizeof(float));
    if (c->rgb)
        fuzz_touch(c->rgb, c->n * 3);
    (void)host_cloud_count_finite(c);
}

#endif
