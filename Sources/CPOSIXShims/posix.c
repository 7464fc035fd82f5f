#define _GNU_SOURCE
#include "CPOSIXShims.h"
#include <fcntl.h>
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

void fakeapns_reserve_heap(size_t bytes) {
    char *block = malloc(bytes);
    if (block == NULL) return;
    *(volatile char *)block = 0; /* a block nobody touches could be optimised away */
    free(block);
}

void fakeapns_set_thread_name(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}
