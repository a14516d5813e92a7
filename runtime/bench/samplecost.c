/* samplecost: where the CPU cost of one perf_event sample goes on this machine (samplecost.sh).
   Runs the loop of loop.c for UNITS units (about 14 ms each) under one of three clocks set up
   on the calling thread:

     none     nothing: the baseline;
     count    a perf_event task clock (user time only, as the runtime's) overflowing every
              1/HZ s of CPU, with no signal and no ring buffer: each overflow is a timer
              interrupt plus perf's overflow bookkeeping, and nothing else;
     sigtrap  the same clock sending a synchronous SIGTRAP at each overflow (as the runtime's
              clock does) to a handler that only counts: adds the signal delivery and return.

   Build the same file with the runtime object linked in and run it with "none" to get the
   runtime's full cost (handler, histogram update) under the same loop.

   (A POSIX timer with SIGEV_NONE cannot stand in for "count": the kernel never arms the
   hrtimer of such a timer and only computes its expiry when asked; at 1 kHz on CPU 0 it added
   no local timer interrupts at all.)

   Usage: samplecost MODE HZ UNITS. Prints on stderr
     "samples N loc D self-cpu USER SYS"
   where N is the number of overflows (counted by the handler for sigtrap, the task clock's
   count over the period for count), D the growth of CPU 0's local timer interrupt count in
   /proc/interrupts during the loop (meaningful when pinned to CPU 0 with taskset -c 0; other
   tasks on CPU 0 add theirs), and USER SYS this process's getrusage(RUSAGE_SELF). */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t overflows;

/* Async-signal-safe: increments a sig_atomic_t and nothing else. */
static void on_trap(int sig, siginfo_t *si, void *uc) {
    (void)sig, (void)si, (void)uc;
    overflows++;
}

static uint64_t __attribute__((noinline)) churn(uint64_t x, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x += i ^ (x >> 32);
    }
    return x;
}

/* Local timer interrupts taken so far by CPU 0 (the first column of the "LOC:" line). */
static long long loc_cpu0(void) {
    FILE *f = fopen("/proc/interrupts", "r");
    char line[4096];
    long long n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, " LOC: %lld", &n) == 1) break;
    if (f) fclose(f);
    return n;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: samplecost none|count|sigtrap HZ UNITS\n");
        return 2;
    }
    const char *mode = argv[1];
    long hz = atol(argv[2]), units = atol(argv[3]);
    if (hz <= 0 || units <= 0 || (strcmp(mode, "none") && strcmp(mode, "count") && strcmp(mode, "sigtrap"))) {
        fprintf(stderr, "samplecost: bad arguments\n");
        return 2;
    }
    uint64_t period = 1000000000ull / (uint64_t)hz;
    int fd = -1;
    if (strcmp(mode, "none")) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.type = PERF_TYPE_SOFTWARE;
        a.size = sizeof a;
        a.config = PERF_COUNT_SW_TASK_CLOCK;
        a.sample_period = period;
        a.disabled = 1;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        if (!strcmp(mode, "sigtrap")) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = on_trap;
            sa.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&sa.sa_mask);
            if (sigaction(SIGTRAP, &sa, NULL)) {
                perror("samplecost: sigaction");
                return 1;
            }
            a.sigtrap = 1;
            a.remove_on_exec = 1; /* the kernel requires it with sigtrap */
        }
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        if (fd < 0) {
            perror("samplecost: perf_event_open");
            return 1;
        }
    }
    long long loc0 = loc_cpu0();
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    uint64_t x = 88172645463325252ull;
    for (long u = 0; u < units; u++) x = churn(x, (uint64_t)1 << 22);
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    long long loc1 = loc_cpu0();
    long long n = 0;
    if (!strcmp(mode, "sigtrap")) {
        n = overflows;
    } else if (fd >= 0) {
        uint64_t ns = 0;
        if (read(fd, &ns, sizeof ns) != (ssize_t)sizeof ns) {
            perror("samplecost: read");
            return 1;
        }
        n = (long long)(ns / period);
    }
    printf("%016llx\n", (unsigned long long)x);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "samples %lld loc %lld self-cpu %ld.%06ld %ld.%06ld\n", n, loc1 - loc0,
            (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
            (long)ru.ru_stime.tv_usec);
    return 0;
}
