/* line_alloc.h -- memory in whole cache lines of its own, for data one thread writes while others read beside it: a
 * write there never invalidates a line another thread reads (false sharing). */
#ifndef GRIP_CORE_LINE_ALLOC_H
#define GRIP_CORE_LINE_ALLOC_H

#include <stdlib.h>

#define GRIP_CACHE_LINE 64

/* Whole cache lines for `bytes` (at least one); NULL without memory; free() releases them. */
static inline void *grip_line_alloc(size_t bytes)
{
    return aligned_alloc(GRIP_CACHE_LINE, (bytes / GRIP_CACHE_LINE + 1) * GRIP_CACHE_LINE);
}

#endif
