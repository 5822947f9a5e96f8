/* test_descriptor_cases.c -- the bad-input cases of every descriptor stage on the CPU twins (see
 * tests/support/descriptor_cases.h): NaN points, duplicates, a single point, one voxel, a huge radius, more
 * keypoints than points, radius 0, empty and all-NaN clouds. tests/gpu/test_descriptor_cases_cuda.c runs the same
 * cases on the GPU against these results. */
#include "descriptor_cases.h"

int main(void)
{
    Suite *s = suite_create("descriptor_cases");
    TCase *tc = tcase_create("cpu");
    tcase_set_timeout(tc, 120);
    grip_test_add_descriptor_cases(tc, "cpu");
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
