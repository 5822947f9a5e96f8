/* index_bruteforce.h -- what the other stages of this plugin read of a `bruteforce` index. */
#ifndef GRIP_STAGES_INDEX_BRUTEFORCE_H
#define GRIP_STAGES_INDEX_BRUTEFORCE_H

#include "plugin.h"
#include "index/bruteforce_cuda.h"

/* The GPU search options of index (its stage's screen_precision, screen_kernel and rescreen_capacity) when it is
 * this plugin's `bruteforce` index (its search function tells), so that a search of the same rows from another
 * stage runs as the index's own do; NULL for any other index (another implementation, another plugin's). */
const grip_bruteforce_cuda_options *grip_index_bruteforce_options(const grip_index *index);

#endif
