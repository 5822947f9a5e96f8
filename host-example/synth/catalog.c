/* catalog.c -- the synthetic objects, 10-17 cm across, each without rotational symmetry so that a pose is
 * unambiguous, with edges, creases and holes for local descriptors to tell apart. Frames: metres, z up, the
 * base on z = 0. Parts overlap rather than touch, and carved parts pass clean through the faces they cut, so no
 * face is a zero-thickness seam. */
#include "synth/shapes.h"

#define BOX(x0, y0, z0, x1, y1, z1) {SYNTH_BOX, 0, {x0, y0, z0}, {x1, y1, z1}, 0}
#define CYL(x0, y0, z0, x1, y1, z1, rad) {SYNTH_CYLINDER, 0, {x0, y0, z0}, {x1, y1, z1}, rad}
#define CAPSULE(x0, y0, z0, x1, y1, z1, rad) {SYNTH_CAPSULE, 0, {x0, y0, z0}, {x1, y1, z1}, rad}
#define BALL(x, y, z, rad) {SYNTH_SPHERE, 0, {x, y, z}, {x, y, z}, rad}
#define CUT_BOX(x0, y0, z0, x1, y1, z1) {SYNTH_BOX, 1, {x0, y0, z0}, {x1, y1, z1}, 0}
#define CUT_CYL(x0, y0, z0, x1, y1, z1, rad) {SYNTH_CYLINDER, 1, {x0, y0, z0}, {x1, y1, z1}, rad}

/* An L bracket: base plate, an upright narrower than the plate and set back from its end, a round diagonal
 * strut in the inner corner, a through hole in the plate and a smaller one in the upright. */
static const synth_prim bracket[] = {
    BOX(-0.080, -0.040, 0.000, 0.080, 0.040, 0.015),
    BOX(0.055, -0.040, 0.005, 0.075, 0.025, 0.120),
    CYL(-0.010, 0.000, 0.006, 0.062, 0.000, 0.075, 0.006),
    CUT_CYL(-0.045, 0.012, -0.010, -0.045, 0.012, 0.030, 0.012),
    CUT_CYL(0.045, -0.015, 0.090, 0.085, -0.015, 0.090, 0.008),
};

/* A mug: a cylinder hollowed from 8 mm above its base, a handle of four capsules bending out on +x, and a
 * round knob on the side at 120 degrees from the handle. */
static const synth_prim mug[] = {
    CYL(0.000, 0.000, 0.000, 0.000, 0.000, 0.100, 0.040),
    CAPSULE(0.036, 0.000, 0.085, 0.062, 0.000, 0.081, 0.007),
    CAPSULE(0.062, 0.000, 0.081, 0.075, 0.000, 0.056, 0.007),
    CAPSULE(0.075, 0.000, 0.056, 0.068, 0.000, 0.031, 0.007),
    CAPSULE(0.068, 0.000, 0.031, 0.036, 0.000, 0.022, 0.007),
    BALL(-0.020, 0.034641, 0.050, 0.010),
    CUT_CYL(0.000, 0.000, 0.008, 0.000, 0.000, 0.110, 0.035),
};

/* A lumpy blob: seven overlapping balls of different sizes, cut flat where it stands. */
static const synth_prim blob[] = {
    BALL(0.000, 0.000, 0.035, 0.045),   BALL(0.040, 0.010, 0.030, 0.032),  BALL(-0.035, 0.025, 0.040, 0.030),
    BALL(0.010, -0.035, 0.050, 0.028),  BALL(-0.010, 0.005, 0.080, 0.027), BALL(0.045, -0.020, 0.065, 0.020),
    BALL(-0.045, -0.020, 0.025, 0.022), CUT_BOX(-0.2, -0.2, -0.2, 0.2, 0.2, 0.0),
};

/* A stepped block: three steps, the top one narrower, a round boss on the bottom step and a groove across the
 * middle step. */
static const synth_prim steps[] = {
    BOX(-0.070, -0.050, 0.000, 0.070, 0.050, 0.030),
    BOX(-0.070, -0.050, 0.020, 0.025, 0.050, 0.060),
    BOX(-0.070, -0.050, 0.050, -0.020, 0.020, 0.090),
    CYL(0.045, 0.020, 0.025, 0.045, 0.020, 0.045, 0.012),
    CUT_BOX(-0.005, -0.060, 0.050, 0.010, 0.060, 0.070),
};

#define COUNT(a) (uint32_t)(sizeof a / sizeof a[0])
_Static_assert(sizeof bracket / sizeof bracket[0] <= SYNTH_MAX_PRIMS, "bracket has too many primitives");
_Static_assert(sizeof mug / sizeof mug[0] <= SYNTH_MAX_PRIMS, "mug has too many primitives");
_Static_assert(sizeof blob / sizeof blob[0] <= SYNTH_MAX_PRIMS, "blob has too many primitives");
_Static_assert(sizeof steps / sizeof steps[0] <= SYNTH_MAX_PRIMS, "steps has too many primitives");

static const synth_shape catalog[] = {
    {"bracket", "L bracket 16x8x12 cm: base plate, upright, diagonal strut, a hole in each plate", COUNT(bracket),
     bracket},
    {"mug", "mug 12x8.5x10 cm: hollow cylinder, capsule handle, side knob", COUNT(mug), mug},
    {"blob", "blob 14x12x11 cm: seven balls of 2-4.5 cm radius, flat base", COUNT(blob), blob},
    {"steps", "stepped block 14x10x9 cm: three steps, round boss, groove", COUNT(steps), steps},
};

_Static_assert(sizeof catalog / sizeof catalog[0] <= SYNTH_MAX_KINDS, "the catalogue has too many kinds");

uint32_t synth_shape_count(void)
{
    return COUNT(catalog);
}

const synth_shape *synth_shape_get(uint32_t kind)
{
    return kind < COUNT(catalog) ? &catalog[kind] : 0;
}
