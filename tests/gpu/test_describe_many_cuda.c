/* test_describe_many_cuda.c (gpu) -- describe_many (ABI 1.4) with the descriptor stages on the GPU, several clouds
 * at once on streams of their own: the cases of tests/support/describe_many_cases.h (each cloud's describe()
 * features bit for bit in host and device memory, the context's counters as the single calls move them, no pool
 * growth on a second call, a failing cloud named with nothing kept, bad arguments refused). Skips (77) without a
 * usable device. */
#include "describe_many_cases.h"

int main(void)
{
    Suite *s = suite_create("describe_many_cuda");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 300);
    grip_test_add_describe_many_cases(tc, "cuda");
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
