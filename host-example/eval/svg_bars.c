/* svg_bars.c -- see svg_bars.h. */
#include "eval/svg_bars.h"
#include "eval/svg.h"

#include <math.h>

#define WIDTH 720
#define HEIGHT 450
#define LEFT 70
#define RIGHT 20
#define TOP 80
#define BOTTOM 80

void svg_bars_write(FILE *f, const char *title, const char *x_title, const char *y_title, const svg_bar *bars, int n)
{
    const double plot_w = WIDTH - LEFT - RIGHT, plot_h = HEIGHT - TOP - BOTTOM;
    svg_begin(f, WIDTH, HEIGHT);
    svg_text_at(f, WIDTH / 2.0, 28, "middle", 17, title);
    for (int pct = 0; pct <= 100; pct += 20) { /* grid and y axis labels */
        double y = TOP + plot_h * (1 - pct / 100.0);
        char label[16];
        snprintf(label, sizeof label, "%d %%", pct);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ccc\"/>\n", LEFT, y, WIDTH - RIGHT, y);
        svg_text_at(f, LEFT - 8, y + 4, "end", 12, label);
    }
    svg_vertical_text(f, 18, TOP + plot_h / 2, 13, y_title);
    double slot = n > 0 ? plot_w / n : plot_w;
    for (int i = 0; i < n; i++) {
        double x = LEFT + slot * i, cx = x + slot / 2;
        if (isfinite(bars[i].value)) {
            double h = plot_h * fmax(0, fmin(1, bars[i].value));
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#3b6fd0\"/>\n",
                    x + slot * 0.15, TOP + plot_h - h, slot * 0.7, h);
            char pct[32];
            snprintf(pct, sizeof pct, "%.0f %%", 100 * bars[i].value);
            svg_text_at(f, cx, TOP + plot_h - h - (bars[i].note ? 20 : 6), "middle", 12, pct);
            if (bars[i].note)
                svg_text_at(f, cx, TOP + plot_h - h - 6, "middle", 11, bars[i].note);
        } else {
            svg_text_at(f, cx, TOP + plot_h - 6, "middle", 12, "n/a");
        }
        svg_text_at(f, cx, TOP + plot_h + 18, "middle", 12, bars[i].label);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", LEFT, TOP + plot_h,
            WIDTH - RIGHT, TOP + plot_h);
    svg_text_at(f, LEFT + plot_w / 2, HEIGHT - 22, "middle", 13, x_title);
    fputs("</svg>\n", f);
}
