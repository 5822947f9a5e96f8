/* svg_stacked.h -- stacked bars as a hand-written SVG file (no plotting dependency): one bar per item, one coloured
 * segment per series stacked from the bottom, a legend of the series, a linear axis from 0 to a round value above
 * the tallest bar. For grip-host bench pipeline's time per stage. */
#ifndef GRIP_HOST_EVAL_SVG_STACKED_H
#define GRIP_HOST_EVAL_SVG_STACKED_H

#include <stdio.h>

typedef struct svg_stack {
    const char *label;    /* under the bar ("synth-1e6x10") */
    const double *values; /* the chart's n_series segment sizes, bottom first; a NaN or negative one is drawn as 0 */
    const char *note;     /* over the bar, e.g. "412 ms"; may be NULL */
} svg_stack;

/* Writes the chart: title on top, the y axis y_title, series[n_series] named in the legend (in stacking order,
 * the bottom one first), n bars (none: an empty plot). Borrows everything. */
void svg_stacked_write(FILE *f, const char *title, const char *y_title, const char *const *series, int n_series,
                       const svg_stack *bars, int n);

#endif
