/* profil-rs runtime: programming interfaces exported by profil_rt.o / libprofil_rt.so.
 *
 * The runtime profiles the whole program automatically (gmon.out at exit); these calls are
 * for programs that want more. They are driven by the runtime's own clock (perf_event task
 * clock, or the process CPU-time timer), at PROFIL_HZ samples per CPU-second.
 * Semantics in detail: runtime/src/api.rs. */
#ifndef PROFIL_RT_H
#define PROFIL_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* profil(2): on each sample, counter ((pc - offset) / 2 * scale / 65536) of buf is incremented
 * if it is below bufsiz / 2. scale 0 or 1: off; 2: every pc >= offset into buf[0];
 * 0x10000: one counter per 2 bytes. A new call replaces the previous one; profil(0,0,0,0)
 * stops. Counters stop at 65535. Returns 0, or -1 with errno EFAULT for a buffer that is not
 * writable (profiling is then off). */
int profil(unsigned short *buf, size_t bufsiz, size_t offset, unsigned int scale);

/* The extended form (Tru64): profil((unsigned short *)args, count, (size_t)-1, 0) profiles up
 * to 64 discontiguous ranges, each with its own 32-bit counters: a pc in [lowpc, highpc)
 * increments counter ((pc - offset) / 2 * scale / 65536) of that range's buffer if it is below
 * bufsiz / 4. Ranges must be non-empty, non-overlapping and ordered by decreasing lowpc, with
 * scale >= 2 (else -1, EINVAL); count 0 stops. A traditional call stops extended profiling and
 * vice versa. Counters stop at 2^32 - 1. */
struct profil_args {
    unsigned int *buffer;
    size_t bufsiz;
    uintptr_t highpc;
    uintptr_t lowpc;
    uintptr_t offset;
    unsigned int scale;
};

/* pcsample(2): store the pc of each sample into samples[] until nsamples are stored. Returns 0
 * on the first call, then the number stored during the previous invocation; nsamples == 0
 * stops. -1 with errno EINVAL for nsamples < 0, EFAULT for an array that is not writable. */
long pcsample(uintptr_t samples[], long nsamples);

/* moncontrol: 0 pauses counting into the automatic profile, non-zero resumes. */
void moncontrol(int mode);

/* Stop profiling and write the automatic profile now (it is written only once). */
void profil_rt_finish(void);

#ifdef __cplusplus
}
#endif

#endif
