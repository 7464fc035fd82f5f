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

uintptr_t fakeapns_grow_heap(size_t bytes) {
    char *block = malloc(bytes);
    if (block == NULL) return 0;
    *(volatile char *)block = 0; /* a block nobody touches could be optimised away */
    free(block);
    return (uintptr_t)block;
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
