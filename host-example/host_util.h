/* host_util.h -- small helpers grip-host's files and the benchmarks share: strings, paths, a monotonic clock, medians. */
#ifndef GRIP_HOST_UTIL_H
#define GRIP_HOST_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include "plugin.h"

/* malloc'd copy of s (NULL on NULL or out of memory). */
char *host_strdup(const char *s);
/* malloc'd copy of the first n bytes of s, NUL-terminated. */
char *host_strndup(const char *s, size_t n);
/* Milliseconds from a monotonic clock. */
double host_now_ms(void);
/* qsort's comparison of two doubles, ascending. */
int host_compare_doubles(const void *a, const void *b);
/* The median of v[0 .. n) (the mean of the middle two when n is even); sorts v in place. NaN when n is 0. */
double host_median(double *v, size_t n);
/* Directory part of path into buf ("." when there is none). */
void host_dirname(const char *path, char *buf, size_t n);
/* A grip_array over host memory the caller owns. */
grip_array host_array(uint32_t dtype, uint64_t rows, uint64_t cols, void *data);
/* Writes s as a JSON string: quoted, with quotes, backslashes and control characters escaped (NULL: ""). */
void host_json_string(FILE *out, const char *s);
/* Writes v as a JSON number (%.9g), or null when it is not finite (JSON has no NaN or infinity). */
void host_json_number(FILE *out, double v);
/* 1 if the file exists and is readable. */
int host_file_readable(const char *path);

/* Makes the folder dir unless it exists (its parent must); 0, or -1 after a message on stderr naming `who` and dir. */
int host_make_dir(const char *dir, const char *who);

#endif
