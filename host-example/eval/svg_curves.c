/* svg_curves.c -- see svg_curves.h. */
#include "eval/svg_curves.h"
#include "eval/svg.h"

#include <math.h>

#define WIDTH 860
#define HEIGHT 520
#define LEFT 70
#define RIGHT 330 /* the legend's room: about 40 characters */
#define TOP 60
#define BOTTOM 60

static double clamp01(double v)
{
    return isfinite(v) ? fmax(0, fmin(1, v)) : 0;
}

void svg_curves_write(FILE *f, const char *title, const char *x_title, const char *y_title, const svg_curve *c, int n)
{
    const double plot_w = WIDTH - LEFT - RIGHT, plot_h = HEIGHT - TOP - BOTTOM;
    svg_begin(f, WIDTH, HEIGHT);
    svg_text_at(f, (LEFT + WIDTH - RIGHT) / 2.0, 30, "middle", 16, title);
    for (int t = 0; t <= 10; t += 2) { /* grid and tick labels on both axes */
        double v = t / 10.0, x = LEFT + plot_w * v, y = TOP + plot_h * (1 - v);
        char label[16];
        snprintf(label, sizeof label, "%.1f", v);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", LEFT, y, LEFT + plot_w,
                y);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x, TOP, x, TOP + plot_h);
        svg_text_at(f, LEFT - 8, y + 4, "end", 12, label);
        svg_text_at(f, x, TOP + plot_h + 18, "middle", 12, label);
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", LEFT, TOP,
            plot_w, plot_h);
    svg_text_at(f, LEFT + plot_w / 2, HEIGHT - 16, "middle", 13, x_title);
    svg_vertical_text(f, 22, TOP + plot_h / 2, 13, y_title);
    for (int i = 0; i < n; i++) {
        const char *colour = svg_colour(i);
        if (c[i].n) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", colour);
            for (size_t k = 0; k < c[i].n; k++)
                fprintf(f, "%s%.1f,%.1f", k ? " " : "", LEFT + plot_w * clamp01(c[i].x[k]),
                        TOP + plot_h * (1 - clamp01(c[i].y[k])));
            fputs("\"/>\n", f);
        }
        double ly = TOP + 14 + 22 * i;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n",
                LEFT + plot_w + 14, ly - 4, LEFT + plot_w + 38, ly - 4, colour);
        svg_text_at(f, LEFT + plot_w + 44, ly, "start", 12, c[i].label);
    }
    fputs("</svg>\n", f);
}
