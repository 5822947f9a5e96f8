/* main.c -- grip-host's command line (being written). */
#include <stdio.h>
int main(void) { fprintf(stderr, "grip-host: not yet\n"); return 2; }
