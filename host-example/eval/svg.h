/* svg.h -- the pieces every hand-written SVG chart of grip-host shares (svg_bars.c, svg_curves.c,
 * svg_stacked.c): the document's head, XML-escaped text, text at a place, a palette. */
#ifndef GRIP_HOST_EVAL_SVG_H
#define GRIP_HOST_EVAL_SVG_H

#include <stdio.h>

/* <svg ...> of width x height on a white background, sans-serif; close with fputs("</svg>\n", f). */
void svg_begin(FILE *f, int width, int height);
/* s with the characters XML gives a meaning escaped. */
void svg_xml_text(FILE *f, const char *s);
/* s at (x, y), anchored "start", "middle" or "end", in a font of `size` px. */
void svg_text_at(FILE *f, double x, double y, const char *anchor, int size, const char *s);
/* s at (x, y) turned to read upwards (a y-axis title). */
void svg_vertical_text(FILE *f, double x, double y, int size, const char *s);
/* The i-th colour of a palette told apart also by colour-blind readers (Okabe & Ito), cycling after seven. Static
 * text such as "#0072B2". */
const char *svg_colour(int i);

#endif
