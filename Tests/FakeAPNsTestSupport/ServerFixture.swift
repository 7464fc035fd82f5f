import FakeAPNs

/// The server a test case's tests run against, for cases whose every test needs one: the
/// case starts it in `setUp` and stops it in `tearDown`; a test that needs another
/// configuration replaces it with `start(_:)`, which stops the one before.
package final class ServerFixture {
    private var current: FakeAPNsServer?

    package init() {}

    /// The running server; a test calls it between the case's `setUp` and `tearDown`.
    package var server: FakeAPNsServer {
        guard let current else { preconditionFailure("the fixture's server is used before setUp started it") }
        return current
    }

    /// Stops the running server, if any, and starts one with `configuration`.
    package func start(_ configuration: FakeAPNsServer.Configuration = .init()) throws {
        stop()
        current = try FakeAPNsServer.started(configuration: configuration)
    }

    package func stop() {
        current?.stop()
        current = nil
    }
}
