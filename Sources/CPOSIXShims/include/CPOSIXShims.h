// Linux calls that Swift's Glibc module does not offer (GNU extensions and glibc's own),
// behind plain functions.
#ifndef FAKEAPNS_CPOSIXSHIMS_H
#define FAKEAPNS_CPOSIXSHIMS_H

#include <stddef.h>
#include <stdint.h>

/// accept4 with close-on-exec (a GNU extension Swift's Glibc module hides).
int fakeapns_accept(int socket);

/// dup3 with close-on-exec: makes `target` a copy of `source`, closing what it was, without
/// ever leaving the number free.
int fakeapns_duplicate_over(int source, int target);

/// A close-on-exec eventfd, for waking a thread blocked in poll.
int fakeapns_eventfd(void);

/// Gives back the pages of the calling thread's stack below its current frames: a deep call
/// that has returned (a TLS handshake) leaves them resident otherwise.
void fakeapns_release_unused_stack(void);

/// Names the calling thread (at most 15 bytes), for debuggers and /proc.
void fakeapns_set_thread_name(const char *name);

/// Gives the heap's free pages back to the system (glibc's malloc_trim).
void fakeapns_release_free_memory(void);

/// Allocates a block of `bytes`, writes its first byte and frees it, and returns where it was (0
/// when malloc failed): grows the calling thread's malloc arena in one step (see the Swift
/// `HeapReserve`). In C because the write must not be optimised away with the block.
uintptr_t fakeapns_grow_heap(size_t bytes);

/// How many CPUs the calling thread and the process's main thread may run on between them
/// (sched_getaffinity); 1 when it cannot tell.
int fakeapns_usable_cpu_count(void);

/// The `index`th (from 0) of the CPUs the calling thread may run on now, or -1 when it may
/// run on fewer.
int fakeapns_allowed_cpu(int index);

/// Keeps the calling thread, and the threads it starts from then on, on CPU `cpu`
/// (sched_setaffinity). 0 on success, -1 with errno set.
int fakeapns_pin_thread(int cpu);

#endif
