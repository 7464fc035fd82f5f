internal import CPOSIXShims
#if canImport(Glibc)
import Glibc
#endif

/// A joinable system thread. The server's connections each run on one, so a client that
/// stalls holds only its own thread, and stopping can wait until every thread has ended.
package struct OSThread: Sendable {
    private let handle: pthread_t

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread with a stack of `stackSize` bytes. Throws when the system
    /// has no thread to give (a thread or memory limit), so the caller can give up the one
    /// thing the thread was for instead of the whole process.
    package init(name: String, stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
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
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw ThreadStartError(name: name, code: result)
        }
        self.handle = handle
    }

    /// Waits until the thread has ended.
    package func join() {
        pthread_join(handle, nil)
    }

    /// Lets the thread end on its own, never joined: its resources go back to the system
    /// when it ends. For a thread that may outlive every wait for it (a writer stuck on a
    /// destination that reads nothing).
    package func detach() {
        pthread_detach(handle)
    }
}

/// A thread the system would not start, with its words (`pthread_create`'s error number).
package struct ThreadStartError: Error, CustomStringConvertible {
    package let name: String
    package let code: Int32

    package var description: String { "starting thread \(name): \(String(cString: strerror(code)))" }
}
