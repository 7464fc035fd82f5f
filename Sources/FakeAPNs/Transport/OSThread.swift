internal import CFakeAPNsShims
#if canImport(Glibc)
import Glibc
#endif

/// A joinable system thread. The server's connections each run on one, so a client that
/// stalls holds only its own thread, and stopping can wait until every thread has ended.
struct OSThread: Sendable {
    private let handle: pthread_t

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread with a stack of `stackSize` bytes.
    init(name: String, stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, stackSize)
        defer { pthread_attr_destroy(&attributes) }
        let context = Unmanaged.passRetained(Body {
            fakeapns_set_thread_name(name)
            body()
        }).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, &attributes, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        precondition(result == 0, "pthread_create failed with \(result)")
        self.handle = handle
    }

    /// Waits until the thread has ended.
    func join() {
        pthread_join(handle, nil)
    }

    /// Gives back the calling thread's stack pages below its current frames, which a deep call
    /// (a TLS handshake) left resident; they are touched again only by a call as deep.
    static func releaseUnusedStack() {
        fakeapns_release_unused_stack()
    }
}
