/* test_descriptor_cases_cuda.c (gpu) -- the bad-input cases of every descriptor stage (see
 * tests/support/descriptor_cases.h) with the stages on the GPU: each must succeed or refuse as the CPU twin does,
 * with the CPU twin's NaN rows and values within 1e-4. Skips (77) without a usable device. */
#include "descriptor_cases.h"

int main(void)
{
    Suite *s = suite_create("descriptor_cases_cuda");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 120);
    grip_test_add_descriptor_cases(tc, "cuda");
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
