/* svg.c -- see svg.h. */
#include "eval/svg.h"

void svg_begin(FILE *f, int width, int height)
{
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, height, width, height);
}

void svg_xml_text(FILE *f, const char *s)
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

void svg_text_at(FILE *f, double x, double y, const char *anchor, int size, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor, size);
    svg_xml_text(f, s);
    fputs("</text>\n", f);
}

void svg_vertical_text(FILE *f, double x, double y, int size, const char *s)
{
    fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" font-size=\"%d\">", x, y,
            size);
    svg_xml_text(f, s);
    fputs("</text>\n", f);
}

/* Colours told apart also by colour-blind readers (Okabe & Ito). */
static const char *const colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

const char *svg_colour(int i)
{
    int n = (int)(sizeof colours / sizeof colours[0]);
    return colours[((i % n) + n) % n];
}
