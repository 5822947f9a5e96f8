/* suggest.h -- "did you mean ...?" hints: the nearest candidate word within a small edit distance. */
#ifndef GRIP_HOST_SUGGEST_H
#define GRIP_HOST_SUGGEST_H

#include <stddef.h>

/* Words farther than this (Levenshtein insertions, deletions, substitutions) are never suggested. */
#define GRIP_SUGGEST_MAX_DISTANCE 2

/* Feed candidates one by one with grip_suggest_consider(); `best` is then the nearest one within
 * GRIP_SUGGEST_MAX_DISTANCE of `word` (the first on ties), or NULL. Zero-initialise, then set word. */
typedef struct grip_suggestion {
    const char *word;
    const char *best;
    size_t distance;
} grip_suggestion;

void grip_suggest_consider(grip_suggestion *s, const char *candidate);

/* Levenshtein distance of a and b, or a number above GRIP_SUGGEST_MAX_DISTANCE when it exceeds that bound. */
size_t grip_edit_distance(const char *a, const char *b);

#endif
