/* svg_curves.h -- curves on 0..1 x 0..1 axes as a hand-written SVG file (no plotting dependency), one colour a
 * curve, with a legend. For grip-host eval's recall / 1-precision pictures. */
#ifndef GRIP_HOST_EVAL_SVG_CURVES_H
#define GRIP_HOST_EVAL_SVG_CURVES_H

#include <stddef.h>
#include <stdio.h>

typedef struct svg_curve {
    const char *label;   /* in the legend, e.g. "SHOT (AUC 0.81)" */
    const double *x, *y; /* n points in drawing order, each in 0..1 (clamped) */
    size_t n;
} svg_curve;

/* Writes the chart: title on top, x axis x_title from 0 to 1, y axis y_title from 0 to 1, the curves as
 * polylines (a curve of no point appears in the legend only). */
void svg_curves_write(FILE *f, const char *title, const char *x_title, const char *y_title, const svg_curve *c, int n);

#endif
