/* profil-rs runtime: the seeds' programming interfaces, exported by profil_rt.o and
 * libprofil_rt.so (link the object, `cc prog.c $(profil-report runtime-path)`, or preload the
 * shared object; include this header with -I runtime/include). README.md, "The C interfaces",
 * says the same at more length; the semantics in detail: runtime/src/api.rs.
 *
 * The runtime profiles the whole program automatically (gmon.out at exit; PROFIL_OFF=1 turns
 * only that off); these calls are for programs that want more. They are driven by the
 * runtime's own clock (perf_event task clock, or the process CPU-time timer), thinned to
 * profil_rt_hz() samples per CPU-second: sysconf(_SC_CLK_TCK), as the seeds' kernels did.
 *
 * Process-wide: one setting for the whole process, whichever thread calls; samples of every
 * thread are counted (threads that already exist when the clock starts get a clock of their
 * own, up to 64; later ones inherit it: see README.md). Settings stay on in both parent and
 * child after fork(); exec ends them.
 *
 * Memory faults: every update of your buffer is made through the kernel. An update that would
 * fault (buffer unmapped, made read-only, or only partly valid) turns that interface off (for
 * the extended form, that range only) instead of killing the process, and the next call of
 * that interface reports it: it stops the interface and returns -1 with errno EFAULT. When a
 * call is made only the first counter (slot) is checked, by reading it (nothing is written).
 *
 * Async-signal-safe: every function here may be called from a signal handler, also one that
 * interrupted the runtime's sampling handler, and in a forked child; none waits. (A sample in
 * progress on another thread at the moment of a call can still update the old buffer once,
 * just after the call returns.) */
#ifndef PROFIL_RT_H
#define PROFIL_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* profil(2) (Solaris, Tru64, 4.4BSD, Linux): on each sample, counter
 * ((pc - offset) / 2 * scale / 65536) of buf is incremented if it is below bufsiz / 2.
 * buf may be any address (4.4BSD's char *samples; odd ones too). scale 0 or 1: off (4.4BSD);
 * 2: every pc >= offset into the first counter (Tru64); 0x10000: one counter per 2 bytes.
 * A new call replaces the previous one; profil(0, 0, 0, 0) stops; bufsiz 0 makes it
 * ineffective. Each counter stops at 65535 (instead of Solaris's stop of all profiling at
 * 32767). Returns 0, or -1 with errno (4.4BSD's int return): EFAULT when the first counter
 * cannot be read, or reporting an update that faulted since the previous call (profiling is
 * then off); EBUSY when the clock's signal is taken by the program (ITIMER_PROF armed with
 * the CPU-time timer, Linux: "cannot be used together with ITIMER_PROF", or our handler
 * replaced by a raw system call; a handler set with sigaction/signal is kept virtual and sees
 * only the program's own signals);
 * EAGAIN with eight calls in progress at once. Every call, failed or not, first stops both
 * forms. */
int profil(unsigned short *buf, size_t bufsiz, size_t offset, unsigned int scale);

/* The extended form (Tru64): profil((unsigned short *)args, count, (size_t)-1, flags)
 * profiles up to 64 discontiguous ranges, each with its own unsigned int counters. scale is
 * "the ratio of bytes in the address range to bytes in the buffer": a pc in [lowpc, highpc)
 * increments counter ((pc - offset) * scale / 65536) / 4 of that range's buffer; 0x10000 is
 * one counter per 4 bytes of code, 2 puts every pc on the first counter. The buffer must hold
 * the counter of highpc - 1 (its extent follows from lowpc, highpc, offset and scale). Ranges
 * must be non-empty, non-overlapping and ordered by decreasing lowpc, with scale >= 2 (else
 * -1, EINVAL); count 0 stops; flags is ignored. A traditional call stops extended profiling
 * and vice versa. Counters stop at 2^32 - 1. An update that faults turns off its range only. */
struct profil_args {
    unsigned int *buffer;
    void *highpc;
    void *lowpc;
    void *offset;
    unsigned int scale;
};

/* pcsample(2) (Solaris): store the pc of each sample into samples[] until nsamples are stored
 * (which takes nsamples / profil_rt_hz() CPU-seconds). Returns 0 on the first call, then the
 * number stored during the previous invocation; nsamples == 0 stops. -1 with errno EINVAL for
 * nsamples < 0 or an array larger than the address space (nothing changes); EFAULT for an
 * array whose first slot cannot be read or that is not aligned, or reporting a store that
 * faulted (sampling stops; the count is kept and returned by the next call); EBUSY as for
 * profil. */
long pcsample(uintptr_t samples[], long nsamples);

/* Samples per CPU-second profil and pcsample receive (the equivalent of Tru64's
 * getsysinfo(GSI_CLK_TCK)): sysconf(_SC_CLK_TCK) unless profil_rt_set_hz chose another, at
 * most the runtime's clock rate PROFIL_HZ (default 1000); once an interface in use has
 * received 50 samples, the rate it actually receives when that is more than 5% lower (the
 * CPU-time timer gives at most one sample per kernel tick). */
unsigned int profil_rt_hz(void);

/* Ask for hz samples per CPU-second for profil and pcsample (0: back to sysconf(_SC_CLK_TCK));
 * takes effect at once. Returns 0, or -1 with errno EINVAL above 50000. */
int profil_rt_set_hz(unsigned int hz);

/* moncontrol (4.4BSD): 0 pauses counting into the automatic profile, non-zero resumes; the
 * calls above are not affected. */
void moncontrol(int mode);

/* Write the automatic profile now (it is written only once). profil and pcsample go on. */
void profil_rt_finish(void);

#ifdef __cplusplus
}
#endif

#endif
