/* suggest.c -- see suggest.h. */
#include "suggest.h"

#include <string.h>

/* Longer words are never near misses worth the work: their distance is bounded below by the length difference,
 * and a hint matters for short keys. */
#define LONGEST_WORD 64

size_t grip_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t too_far = GRIP_SUGGEST_MAX_DISTANCE + 1;
    if (la > LONGEST_WORD || lb > LONGEST_WORD || (la > lb ? la - lb : lb - la) > GRIP_SUGGEST_MAX_DISTANCE)
        return too_far;
    size_t row[LONGEST_WORD + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] != b[j - 1]);
            if (above + 1 < best)
                best = above + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[lb] > too_far ? too_far : row[lb];
}

void grip_suggest_consider(grip_suggestion *s, const char *candidate)
{
    if (!s->word || !candidate)
        return;
    size_t d = grip_edit_distance(s->word, candidate);
    if (d <= GRIP_SUGGEST_MAX_DISTANCE && (!s->best || d < s->distance)) {
        s->best = candidate;
        s->distance = d;
    }
}
