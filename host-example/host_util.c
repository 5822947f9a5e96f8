/* host_util.c -- see host_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "host_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *host_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *copy = malloc(n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    copy[n] = '\0';
    return copy;
}

char *host_strdup(const char *s)
{
    return s ? host_strndup(s, strlen(s)) : NULL;
}

double host_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int host_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double host_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, host_compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void host_dirname(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strncpy(buf, ".", n);
    } else {
        size_t len = (size_t)(slash - path);
        if (len == 0)
            len = 1; /* "/x" -> "/" */
        if (len >= n)
            len = n - 1;
        memcpy(buf, path, len);
        buf[len] = '\0';
    }
}

int host_file_readable(const char *path)
{
    return access(path, R_OK) == 0;
}

grip_array host_array(uint32_t dtype, uint64_t rows, uint64_t cols, void *data)
{
    grip_array a = {sizeof a, dtype, GRIP_MEM_HOST, -1, rows, cols, data};
    return a;
}

void host_json_number(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.9g", v);
    else
        fputs("null", out);
}

void host_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

int host_make_dir(const char *dir, const char *who)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return 0;
    fprintf(stderr, "grip-host: %s: cannot make the folder %s: %s\n", who, dir, strerror(errno));
    return -1;
}
