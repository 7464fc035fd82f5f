internal import CPOSIXShims

/// Memory given back to the system when a connection goes quiet or a burst of connections
/// ends, so that an idle server, after a flood, is as small as it was before. These save
/// memory, not time: no row of `Scripts/bench.sh` measures them (its `memory` row holds
/// notifications on one busy connection); what they keep small is an idle connection's
/// footprint (a TLS handshake leaves stack pages resident) and the process's after a burst
/// (free room left in many threads' malloc arenas). Measured 2026-12-03 (Performance.md):
/// `stack` keeps an idle connection of the debug daemon at 41.3 KB (binary) and 53.3 KB
/// (HTTP/2) instead of 46.1 and 56.5 (DaemonMemoryTests, medians of 3); `trim` leaves the
/// daemon 16.8 MB above its start after a burst of 300 connections instead of 19.9 MB (2 runs
/// each).
enum MemoryRelease {
    private static let stackOn = SpeedUp.stack.isOn
    private static let trimOn = SpeedUp.trim.isOn

    /// Gives back the calling thread's stack pages below its current frames, which a deep call
    /// (a TLS handshake) left resident; they are touched again only by a call as deep.
    /// Switch: `stack`.
    static func unusedStack() {
        if stackOn { fakeapns_release_unused_stack() }
    }

    /// Gives the heap's free pages back to the system (glibc's `malloc_trim`). Switch: `trim`.
    static func freeHeap() {
        if trimOn { fakeapns_release_free_memory() }
    }
}
