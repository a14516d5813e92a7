/* Issue 22's cost program: recurse to depth D, then burn CPU in a leaf, so every sample's stack
 * is about D + 3 frames deep (main, run, D x rec, burn).
 * usage: depth D SCALE — SCALE * 10 million iterations of the leaf's loop in total, in bursts of
 * 100,000 per descent (so descents cost nothing next to the work); prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned long burn(unsigned long x, long n) {
    for (long i = 0; i < n; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

/* Not a tail call (the result is used after the call), so every level keeps its frame. */
__attribute__((noinline)) static unsigned long rec(int d, unsigned long x, long n) {
    if (d == 0)
        return burn(x, n);
    return rec(d - 1, x + 1, n) ^ (unsigned long)d;
}

__attribute__((noinline)) static unsigned long run(int depth, long total) {
    unsigned long x = 1;
    for (long done = 0; done < total; done += 100000)
        x = rec(depth, x, 100000);
    return x;
}

int main(int argc, char **argv) {
    int depth = argc > 1 ? atoi(argv[1]) : 5;
    long scale = argc > 2 ? atol(argv[2]) : 10;
    printf("checksum %lu\n", run(depth < 0 ? 0 : depth, scale * 10000000L));
    return 0;
}
