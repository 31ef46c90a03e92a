#ifndef ICONR_CSYSTEM_SHIM_H
#define ICONR_CSYSTEM_SHIM_H

#include <signal.h>
#include <sys/prctl.h>

/* Linux calls that Swift cannot make itself because they are variadic in C. */

/** Asks the kernel to send `signal` to this process when the thread that created it ends
    (PR_SET_PDEATHSIG): a supervised child then never outlives a parent killed with SIGKILL.
    Returns 0, or -1 with errno set. */
static inline int CSystem_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

#endif
