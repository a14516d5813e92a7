/* fib: call-heavy workload for overhead.sh. Naive doubly recursive Fibonacci: hundreds of
   millions of calls to one tiny function (the worst case for gcc -pg, which adds an mcount
   call to each). Usage: fib N REPS (sums fib(N) REPS times). Prints the sum on stdout and its
   own CPU time (getrusage RUSAGE_SELF) on stderr as "self-cpu USER SYS". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static uint64_t __attribute__((noinline)) fib(unsigned n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv) {
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 32;
    long reps = argc > 2 ? atol(argv[2]) : 1;
    volatile unsigned vn = n; /* read anew each time: gcc knows fib is pure and would hoist it */
    uint64_t sum = 0;
    for (long r = 0; r < reps; r++) sum += fib(vn);
    printf("%llu\n", (unsigned long long)sum);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "self-cpu %ld.%06ld %ld.%06ld\n", (long)ru.ru_utime.tv_sec,
            (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
    return 0;
}
