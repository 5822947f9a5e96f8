/* svg_bars.h -- a bar chart as a hand-written SVG file (no plotting dependency): one bar per bin with its value
 * and a label under it, a 0..100 % axis. For grip-host eval's pictures. */
#ifndef GRIP_HOST_EVAL_SVG_BARS_H
#define GRIP_HOST_EVAL_SVG_BARS_H

#include <stdio.h>

typedef struct svg_bar {
    const char *label; /* under the bar ("0-10 %") */
    double value;      /* 0..1, drawn as a percentage; NaN: no bar (an empty bin), "n/a" written instead */
    const char *note;  /* over the bar, e.g. "12/13"; may be NULL */
} svg_bar;

/* Writes the chart: title on top, x_title under the labels, y axis "y_title" from 0 to 100 %. */
void svg_bars_write(FILE *f, const char *title, const char *x_title, const char *y_title, const svg_bar *bars, int n);

#endif
