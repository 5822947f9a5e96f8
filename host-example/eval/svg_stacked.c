/* svg_stacked.c -- see svg_stacked.h. */
#include "eval/svg_stacked.h"
#include "eval/svg.h"

#include <math.h>

#define HEIGHT 480
#define LEFT 80
#define LEGEND 170 /* the legend's room right of the plot: about 20 characters */
#define TOP 60
#define BOTTOM 70
#define SLOT 110 /* px per bar */
#define MIN_PLOT 400

static double segment(double v)
{
    return isfinite(v) && v > 0 ? v : 0;
}

/* The axis's top and tick step: 1, 2 or 5 times a power of ten, at most 6 steps up to >= max. */
static void axis(double max, double *top, double *step)
{
    if (!(max > 0)) {
        *top = *step = 1;
        return;
    }
    double p = pow(10, floor(log10(max / 6)));
    static const double m[] = {1, 2, 5, 10};
    *step = 10 * p;
    for (int i = 0; i < 4; i++)
        if (m[i] * p * 6 >= max) {
            *step = m[i] * p;
            break;
        }
    *top = ceil(max / *step) * *step;
}

void svg_stacked_write(FILE *f, const char *title, const char *y_title, const char *const *series, int n_series,
                       const svg_stack *bars, int n)
{
    double plot_w = n * SLOT > MIN_PLOT ? n * SLOT : MIN_PLOT, plot_h = HEIGHT - TOP - BOTTOM;
    int width = (int)(LEFT + plot_w + LEGEND);
    double max = 0;
    for (int i = 0; i < n; i++) {
        double total = 0;
        for (int s = 0; s < n_series; s++)
            total += segment(bars[i].values[s]);
        max = fmax(max, total);
    }
    double top, step;
    axis(max, &top, &step);
    svg_begin(f, width, HEIGHT);
    svg_text_at(f, LEFT + plot_w / 2, 30, "middle", 16, title);
    for (int t = 0; t * step <= top * (1 + 1e-9); t++) { /* grid and tick labels */
        double y = TOP + plot_h * (1 - t * step / top);
        char label[32];
        snprintf(label, sizeof label, "%g", t * step);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", LEFT, y, LEFT + plot_w,
                y);
        svg_text_at(f, LEFT - 8, y + 4, "end", 12, label);
    }
    svg_vertical_text(f, 24, TOP + plot_h / 2, 13, y_title);
    for (int i = 0; i < n; i++) {
        double x = LEFT + SLOT * (i + 0.2), w = SLOT * 0.6, y = TOP + plot_h;
        for (int s = 0; s < n_series; s++) {
            double h = plot_h * segment(bars[i].values[s]) / top;
            if (h <= 0)
                continue;
            y -= h;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"><title>", x, y, w, h,
                    svg_colour(s));
            svg_xml_text(f, series[s]);
            fprintf(f, ": %.6g</title></rect>\n", bars[i].values[s]);
        }
        if (bars[i].note)
            svg_text_at(f, x + w / 2, y - 6, "middle", 11, bars[i].note);
        svg_text_at(f, x + w / 2, TOP + plot_h + 18, "middle", 12, bars[i].label);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", LEFT, TOP + plot_h,
            LEFT + plot_w, TOP + plot_h);
    for (int s = n_series - 1, row = 0; s >= 0; s--, row++) { /* top to bottom, as the segments stack */
        double ly = TOP + 14 + 22 * row;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", LEFT + plot_w + 16,
                ly - 11, svg_colour(s));
        svg_text_at(f, LEFT + plot_w + 36, ly, "start", 12, series[s]);
    }
    fputs("</svg>\n", f);
}
