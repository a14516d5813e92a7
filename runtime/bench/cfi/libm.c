/* Issue 22's libm-heavy program: most samples land in libm (sin, exp, log), which has no frame
 * pointers, called from three levels of the program's own functions.
 * usage: libm SCALE — SCALE million iterations; prints a checksum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double wave(double x) { return sin(x) * exp(-x * 1e-7); }

__attribute__((noinline)) static double damp(double x) { return log1p(x) / (1.0 + cos(x)); }

__attribute__((noinline)) static double step(long i) {
    double x = (double)i * 1e-3;
    return i % 4 == 0 ? damp(x) : wave(x);
}

__attribute__((noinline)) static double run(long n) {
    double s = 0;
    for (long i = 0; i < n; i++)
        s += step(i);
    return s;
}

int main(int argc, char **argv) {
    long n = (argc > 1 ? atol(argv[1]) : 10) * 1000000L;
    printf("checksum %.6f\n", run(n));
    return 0;
}
