#ifndef ICONR_CSYSTEM_SHIM_H
#define ICONR_CSYSTEM_SHIM_H

#include <elf.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <ucontext.h>

/* What Swift cannot do itself: variadic Linux calls, atomics in shared memory, the CPU's
   SHA-256 instructions, where the program's code lies and the address a signal interrupted. */

/** Asks the kernel to send `signal` to this process when the thread that created it ends
    (PR_SET_PDEATHSIG): a supervised child then never outlives a parent killed with SIGKILL.
    Returns 0, or -1 with errno set. */
static inline int CSystem_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

/** `length` random bytes from the kernel into `buffer` (getrandom, which Glibc's module map
    leaves out). Returns how many, or -1 with errno set. */
static inline long CSystem_random_bytes(void *buffer, size_t length) {
    return (long)getrandom(buffer, length, 0);
}

/* Telling a crash in iconr's own code from one in a library it calls (CrashSignals). */

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Phdr CSystem_ProgramHeader;
#else
typedef Elf32_Phdr CSystem_ProgramHeader;
#endif

/** The leading fields of glibc's `struct dl_phdr_info`, which <link.h> declares only with
    _GNU_SOURCE (which this module cannot define: its system headers are shared). */
struct CSystem_LoadedObject {
    uintptr_t base;
    const char *name;
    const CSystem_ProgramHeader *headers;
    uint16_t headerCount;
};

extern int CSystem_dl_iterate_phdr(
    int (*callback)(struct CSystem_LoadedObject *, size_t, void *), void *data) __asm__("dl_iterate_phdr");

typedef struct {
    uintptr_t *ranges;
    int capacity;
    int count;
    int objects;
} CSystem_CodeSearch;

static inline int CSystem_add_own_code(struct CSystem_LoadedObject *object, size_t size, void *data) {
    (void)size;
    CSystem_CodeSearch *search = data;
    const char *name = object->name ? object->name : "";
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    /* The program comes first; the Swift runtime, Foundation and Dispatch are iconr's too
       where they are libraries of their own (debug builds). */
    int own = search->objects++ == 0;
    const char *runtimes[] = {"libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime"};
    for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
        if (strncmp(base, runtimes[i], strlen(runtimes[i])) == 0) own = 1;
    }
    for (int i = 0; own && i < object->headerCount && search->count < search->capacity; i++) {
        const CSystem_ProgramHeader *header = &object->headers[i];
        if (header->p_type != PT_LOAD || !(header->p_flags & PF_X)) continue;
        search->ranges[2 * search->count] = object->base + header->p_vaddr;
        search->ranges[2 * search->count + 1] = object->base + header->p_vaddr + header->p_memsz;
        search->count++;
    }
    return 0;
}

/** Writes the [start, end) address ranges of iconr's own code loaded now (the program's
    executable segments, and the Swift runtime libraries') to `ranges`, as pairs, up to
    `capacity` of them; returns how many. Not from a signal handler. */
static inline int CSystem_find_own_code(uintptr_t *ranges, int capacity) {
    CSystem_CodeSearch search = {ranges, capacity, 0, 0};
    CSystem_dl_iterate_phdr(CSystem_add_own_code, &search);
    return search.count;
}

/** The address of the instruction a signal interrupted, from its handler's `context`; 0
    where this architecture is not known here. */
static inline uintptr_t CSystem_instruction_address(const void *context) {
    const ucontext_t *state = context;
#if defined(__x86_64__)
    return (uintptr_t)state->uc_mcontext.gregs[16]; /* REG_RIP */
#elif defined(__aarch64__)
    return (uintptr_t)state->uc_mcontext.pc;
#else
    (void)state;
    return 0;
#endif
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

/* SHA-256's compression function with the x86 SHA extensions (Intel SHA-NI, AMD since Zen),
   which Swift has no intrinsics for: six times the speed of the Swift code in a release build
   (perf samples of a warm osm-carto rebuild: 3,237 in the Swift code, 539 here). */

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif

/** 1 when this CPU has the SHA extensions and SSE4.1 (which the code below uses), else 0.
    Asked of glibc, which ran `cpuid` when the process started: in a virtual machine each
    `cpuid` traps to the hypervisor (four of them were about 1% of a cache hit's CPU). */
static inline int CSystem_has_sha_extensions(void) {
#if defined(CPU_FEATURE_ACTIVE)
    return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSE4_1) && CPU_FEATURE_ACTIVE(SSSE3);
#else
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_SSE4_1) || !(ecx & bit_SSSE3)) return 0;
    if (__get_cpuid_max(0, 0) < 7) return 0;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    return (ebx & bit_SHA) != 0;
#endif
}

/** Runs `count` 64-byte blocks at `data` through SHA-256's compression of `state` (a, b, ...,
    h), with the 64 round constants `k`. Only when `CSystem_has_sha_extensions()`. */
__attribute__((target("sha,sse4.1,ssse3")))
static inline void CSystem_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t count, const uint32_t k[64]) {
    /* Big-endian words: reverse the bytes of each 32-bit lane. */
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    /* The instructions keep the state as (a, b, e, f) and (c, d, g, h), highest lane first. */
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
    for (; count > 0; count--, data += 64) {
        const __m128i savedABEF = abef, savedCDGH = cdgh;
        __m128i w[4];
        for (int i = 0; i < 4; i++) {
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), swap);
        }
        for (int group = 0; group < 16; group++) {
            /* Words 4g..4g+3: the block's own for the first four groups, then the schedule
               W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16]. */
            if (group >= 4) {
                __m128i next = _mm_sha256msg1_epu32(w[group % 4], w[(group + 1) % 4]);
                next = _mm_add_epi32(next, _mm_alignr_epi8(w[(group + 3) % 4], w[(group + 2) % 4], 4));
                w[group % 4] = _mm_sha256msg2_epu32(next, w[(group + 3) % 4]);
            }
            __m128i message = _mm_add_epi32(w[group % 4], _mm_loadu_si128((const __m128i *)&k[4 * group]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(message, 0x0E));
        }
        abef = _mm_add_epi32(abef, savedABEF);
        cdgh = _mm_add_epi32(cdgh, savedCDGH);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}
#else
static inline int CSystem_has_sha_extensions(void) { return 0; }
static inline void CSystem_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t count, const uint32_t k[64]) {
    (void)state; (void)data; (void)count; (void)k;
}
#endif

#endif
