/* normals_given.c -- see normals_given.h. */
#include "descriptor/normals_given.h"

#include <math.h>

static int finite3(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

void grip_normals_given_unit(const float *xyz, const float *normals, size_t stride, size_t n, float *out,
                             grip_normals_given_report *report)
{
    grip_normals_given_report r = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const float *nrm = normals + stride * i;
        float *o = out + 4 * i;
        o[0] = o[1] = o[2] = o[3] = NAN;
        if (!finite3(xyz + 3 * i))
            continue;
        r.finite_points++;
        o[3] = stride == 4 ? nrm[3] : NAN;
        /* the length in double: a float sum of squares overflows for components above 1e19 and underflows below
           1e-19, where the direction is still well defined */
        double len = finite3(nrm) ? sqrt((double)nrm[0] * nrm[0] + (double)nrm[1] * nrm[1] + (double)nrm[2] * nrm[2])
                                  : 0.0;
        if (!(len > 0.0)) {
            r.unusable++;
            continue;
        }
        if (fabs(len - 1.0) <= GRIP_NORMALS_UNIT_TOLERANCE) {
            o[0] = nrm[0];
            o[1] = nrm[1];
            o[2] = nrm[2];
        } else {
            o[0] = (float)(nrm[0] / len);
            o[1] = (float)(nrm[1] / len);
            o[2] = (float)(nrm[2] / len);
            r.rescaled++;
        }
    }
    *report = r;
}
