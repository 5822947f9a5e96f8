/* svg_bars.c -- see svg_bars.h. */
#include "eval/svg_bars.h"

#include <math.h>

#define WIDTH 720
#define HEIGHT 450
#define LEFT 70
#define RIGHT 20
#define TOP 80
#define BOTTOM 80

/* Writes s with the characters XML gives a meaning escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

static void text_at(FILE *f, double x, double y, const char *anchor, int size, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor, size);
    xml_text(f, s);
    fputs("</text>\n", f);
}

void svg_bars_write(FILE *f, const char *title, const char *x_title, const char *y_title, const svg_bar *bars, int n)
{
    const double plot_w = WIDTH - LEFT - RIGHT, plot_h = HEIGHT - TOP - BOTTOM;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            WIDTH, HEIGHT, WIDTH, HEIGHT);
    text_at(f, WIDTH / 2.0, 28, "middle", 17, title);
    for (int pct = 0; pct <= 100; pct += 20) { /* grid and y axis labels */
        double y = TOP + plot_h * (1 - pct / 100.0);
        char label[16];
        snprintf(label, sizeof label, "%d %%", pct);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ccc\"/>\n", LEFT, y, WIDTH - RIGHT, y);
        text_at(f, LEFT - 8, y + 4, "end", 12, label);
    }
    fprintf(f, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">",
            TOP + plot_h / 2);
    xml_text(f, y_title);
    fputs("</text>\n", f);
    double slot = n > 0 ? plot_w / n : plot_w;
    for (int i = 0; i < n; i++) {
        double x = LEFT + slot * i, cx = x + slot / 2;
        if (isfinite(bars[i].value)) {
            double h = plot_h * fmax(0, fmin(1, bars[i].value));
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#3b6fd0\"/>\n",
                    x + slot * 0.15, TOP + plot_h - h, slot * 0.7, h);
            char pct[32];
            snprintf(pct, sizeof pct, "%.0f %%", 100 * bars[i].value);
            text_at(f, cx, TOP + plot_h - h - (bars[i].note ? 20 : 6), "middle", 12, pct);
            if (bars[i].note)
                text_at(f, cx, TOP + plot_h - h - 6, "middle", 11, bars[i].note);
        } else {
            text_at(f, cx, TOP + plot_h - 6, "middle", 12, "n/a");
        }
        text_at(f, cx, TOP + plot_h + 18, "middle", 12, bars[i].label);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", LEFT, TOP + plot_h,
            WIDTH - RIGHT, TOP + plot_h);
    text_at(f, LEFT + plot_w / 2, HEIGHT - 22, "middle", 13, x_title);
    fputs("</svg>\n", f);
}
