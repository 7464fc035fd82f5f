#define _GNU_SOURCE
#include "CPOSIXShims.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int fakeapns_accept(int socket) {
    return accept4(socket, NULL, NULL, SOCK_CLOEXEC);
}

int fakeapns_duplicate_over(int source, int target) {
    return dup3(source, target, O_CLOEXEC);
}

int fakeapns_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC);
}

void fakeapns_release_unused_stack(void) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
    void *low = NULL;
    size_t size = 0;
    int result = pthread_attr_getstack(&attributes, &low, &size);
    pthread_attr_destroy(&attributes);
    if (result != 0) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    /* Whole pages below this frame and its red zone: the callers' frames stay, the rest is
       touched again only by calls as deep. */
    uintptr_t end = ((uintptr_t)__builtin_frame_address(0) - 256) & ~(page - 1);
    uintptr_t start = ((uintptr_t)low + page - 1) & ~(page - 1);
    if (end > start && end < (uintptr_t)low + size) madvise((void *)start, end - start, MADV_DONTNEED);
}

void fakeapns_release_free_memory(void) {
    malloc_trim(0);
}

/* Reserved heap waiting for the prefaulting thread: a few ranges, each with the thread that
   reserved it; when full, the oldest is dropped. A generation that every release moves on
   stops a range being populated in steps. */
#define PREFAULT_SLOTS 8
#define PREFAULT_STEP (256 * 1024)
static struct {
    pthread_mutex_t lock;
    pthread_cond_t arrived;
    pthread_cond_t stepped;
    int populating;
    uintptr_t start[PREFAULT_SLOTS];
    size_t length[PREFAULT_SLOTS];
    pthread_t owner[PREFAULT_SLOTS];
    unsigned head, count;
    unsigned long generation;
} prefault = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, {0}, {0}, 0, 0, 0};
/* Whether the prefaulting thread is running; it ends after a quiet while. Under the lock. */
static int prefault_running = 0;
/* How much the calling thread last reserved, for its release; 0 when nothing is reserved. */
static __thread size_t reserved_by_thread = 0;

static void *prefault_thread(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "heap-prefault");
    pthread_mutex_lock(&prefault.lock);
    for (;;) {
        while (prefault.count == 0) {
            /* Nothing for a quarter of a second: the flood is over, and the thread ends. */
            struct timespec deadline;
            clock_gettime(CLOCK_REALTIME, &deadline);
            deadline.tv_nsec += 250 * 1000 * 1000;
            if (deadline.tv_nsec >= 1000 * 1000 * 1000) {
                deadline.tv_sec += 1;
                deadline.tv_nsec -= 1000 * 1000 * 1000;
            }
            if (pthread_cond_timedwait(&prefault.arrived, &prefault.lock, &deadline) != 0 && prefault.count == 0) {
                prefault_running = 0;
                pthread_mutex_unlock(&prefault.lock);
                return NULL;
            }
        }
        uintptr_t start = prefault.start[prefault.head];
        size_t length = prefault.length[prefault.head];
        prefault.head = (prefault.head + 1) % PREFAULT_SLOTS;
        prefault.count -= 1;
        unsigned long generation = prefault.generation;
        for (size_t done = 0; done < length && generation == prefault.generation; done += PREFAULT_STEP) {
            size_t step = length - done < PREFAULT_STEP ? length - done : PREFAULT_STEP;
            prefault.populating = 1;
            pthread_mutex_unlock(&prefault.lock);
            /* Maps the pages without writing them: what malloc put there meanwhile stays. */
            madvise((void *)(start + done), step, MADV_POPULATE_WRITE);
            pthread_mutex_lock(&prefault.lock);
            prefault.populating = 0;
            pthread_cond_broadcast(&prefault.stepped);
        }
    }
}

/* Starts the prefaulting thread unless it runs. Under the lock. */
static void start_prefault_thread(void) {
    if (prefault_running) return;
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    pthread_t thread;
    prefault_running = pthread_create(&thread, &attributes, prefault_thread, NULL) == 0;
    pthread_attr_destroy(&attributes);
}

/* The whole pages inside a block of `bytes` at `block`. */
static int inner_pages(char *block, size_t bytes, uintptr_t *start, size_t *length) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)block + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)block + bytes) & ~(page - 1);
    if (end <= first) return 0;
    *start = first;
    *length = end - first;
    return 1;
}

void fakeapns_reserve_heap(size_t bytes, size_t ahead) {
    char *block = malloc(bytes);
    if (block == NULL) return;
    *(volatile char *)block = 0; /* a block nobody touches could be optimised away */
    /* A block glibc mapped on its own (the first time, while its threshold is lower) starts
       16 bytes into a page: freeing it unmaps it, so it is no room of the arena's, and nothing
       is mapped ahead for it. A block of the arena's there too is merely not mapped ahead. */
    int mapped = ((uintptr_t)block & ((uintptr_t)sysconf(_SC_PAGESIZE) - 1)) == 2 * sizeof(size_t);
    uintptr_t start;
    size_t length;
    int pages = inner_pages(block, ahead < bytes ? ahead : bytes, &start, &length);
    free(block);
    if (mapped) return;
    reserved_by_thread = bytes;
    if (!pages) return;
    pthread_mutex_lock(&prefault.lock);
    start_prefault_thread();
    if (!prefault_running) {
        pthread_mutex_unlock(&prefault.lock);
        return;
    }
    if (prefault.count == PREFAULT_SLOTS) {
        prefault.head = (prefault.head + 1) % PREFAULT_SLOTS;
        prefault.count -= 1;
    }
    unsigned slot = (prefault.head + prefault.count) % PREFAULT_SLOTS;
    prefault.start[slot] = start;
    prefault.length[slot] = length;
    prefault.owner[slot] = pthread_self();
    prefault.count += 1;
    pthread_cond_signal(&prefault.arrived);
    pthread_mutex_unlock(&prefault.lock);
}

void fakeapns_release_heap_reserve(void) {
    size_t bytes = reserved_by_thread;
    if (bytes == 0) return;
    reserved_by_thread = 0;
    pthread_mutex_lock(&prefault.lock);
    unsigned kept = 0;
    for (unsigned index = 0; index < prefault.count; index++) {
        unsigned slot = (prefault.head + index) % PREFAULT_SLOTS;
        if (pthread_equal(prefault.owner[slot], pthread_self())) continue;
        unsigned target = (prefault.head + kept) % PREFAULT_SLOTS;
        prefault.start[target] = prefault.start[slot];
        prefault.length[target] = prefault.length[slot];
        prefault.owner[target] = prefault.owner[slot];
        kept += 1;
    }
    prefault.count = kept;
    prefault.generation += 1;
    /* A step under way may be mapping this thread's pages: it ends before they are dropped. */
    while (prefault.populating) pthread_cond_wait(&prefault.stepped, &prefault.lock);
    pthread_mutex_unlock(&prefault.lock);
    /* The free room at the arena's top, taken for a moment: its pages can be dropped. */
    char *block = malloc(bytes);
    if (block == NULL) return;
    uintptr_t start;
    size_t length;
    if (inner_pages(block, bytes, &start, &length)) madvise((void *)start, length, MADV_DONTNEED);
    free(block);
}

void fakeapns_set_thread_name(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}

int fakeapns_usable_cpu_count(void) {
    cpu_set_t mine, main, both;
    CPU_ZERO(&mine);
    CPU_ZERO(&main);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) { return 1; }
    if (sched_getaffinity(getpid(), sizeof main, &main) != 0) { CPU_ZERO(&main); }
    CPU_OR(&both, &mine, &main);
    int count = CPU_COUNT(&both);
    return count > 0 ? count : 1;
}

int fakeapns_allowed_cpu(int index) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (index < 0 || sched_getaffinity(0, sizeof set, &set) != 0) { return -1; }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &set) && index-- == 0) { return cpu; }
    }
    return -1;
}

int fakeapns_pin_thread(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) { errno = EINVAL; return -1; }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}
