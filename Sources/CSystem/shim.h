#ifndef ICONR_CSYSTEM_SHIM_H
#define ICONR_CSYSTEM_SHIM_H

#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>

/* What Swift cannot do itself: variadic Linux calls, atomics in shared memory. */

/** Asks the kernel to send `signal` to this process when the thread that created it ends
    (PR_SET_PDEATHSIG): a supervised child then never outlives a parent killed with SIGKILL.
    Returns 0, or -1 with errno set. */
static inline int CSystem_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

/* Atomic loads, stores and compare-exchanges of 64-bit words in memory shared between
   processes (Swift's atomics live in memory that Swift owns). */

static inline uint64_t CSystem_load_acquire(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

static inline void CSystem_store_release(uint64_t *word, uint64_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/** Sets `*word` to `desired` if it holds `expected`; returns 1 if it did. */
static inline int CSystem_compare_exchange(uint64_t *word, uint64_t expected, uint64_t desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

#endif
