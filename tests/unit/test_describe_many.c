/* test_describe_many.c -- describe_many (ABI 1.4) with the descriptor stages on the CPU: the cases of
 * tests/support/describe_many_cases.h (each cloud's describe() features bit for bit, a failing cloud named with
 * nothing kept, bad arguments refused). test_describe_many_cuda runs the same cases on the GPU. */
#include "describe_many_cases.h"

int main(void)
{
    Suite *s = suite_create("describe_many");
    TCase *tc = tcase_create("cpu");
    tcase_set_timeout(tc, 300);
    grip_test_add_describe_many_cases(tc, "cpu");
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
