/* loop: loop-heavy workload for overhead.sh. Few calls, long inner loops of integer arithmetic
   (xorshift with a data-dependent add, so nothing can be hoisted or vectorised away).
   Usage: loop UNITS (one unit is 2^22 iterations, about 10 ms). Prints a checksum on stdout and
   its own CPU time (getrusage RUSAGE_SELF, user and system seconds) on stderr as
   "self-cpu USER SYS", so a harness can separate it from a profiler running around it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static uint64_t __attribute__((noinline)) churn(uint64_t x, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x += i ^ (x >> 32);
    }
    return x;
}

int main(int argc, char **argv) {
    long units = argc > 1 ? atol(argv[1]) : 200;
    uint64_t x = 88172645463325252ull;
    for (long u = 0; u < units; u++) x = churn(x, (uint64_t)1 << 22);
    printf("%016llx\n", (unsigned long long)x);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "self-cpu %ld.%06ld %ld.%06ld\n", (long)ru.ru_utime.tv_sec,
            (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
    return 0;
}
