/// Starts a server, hands it to `body`, and stops it when `body` returns or throws: a test
/// cannot forget `stop()`. Returns what `body` returns.
///
/// ```swift
/// func testSendsTheWelcome() throws {
///     try withFakeAPNs { server in
///         try sendWelcome(toPort: server.gatewayPort)                    // the code under test
///         let notification = try server.notifications.pop(timeout: .seconds(2))
///         XCTAssertEqual(notification.payload.aps.alert?.body, "Welcome")
///     }
/// }
/// ```
///
/// The server's queues stay readable after it stopped, if `body` returns the server.
public func withFakeAPNs<Result>(
    configuration: FakeAPNsServer.Configuration = .init(), _ body: (FakeAPNsServer) throws -> Result
) throws -> Result {
    let server = try FakeAPNsServer.started(configuration: configuration)
    defer { server.stop() }
    return try body(server)
}

/// Starts a server, hands it to the async `body`, and stops it when `body` returns or throws
/// (or its task is cancelled): a test cannot forget `stop()`. Returns what `body` returns.
///
/// ```swift
/// @Test func sendsTheWelcome() async throws {
///     try await withFakeAPNs(configuration: .init(feedbackPort: nil)) { server in
///         try await sendWelcome(toPort: server.http2Port!)              // the code under test
///         let notification = try await server.notifications.next(timeout: .seconds(2))
///         #expect(notification.payload.aps.alert?.body == "Welcome")
///     }
/// }
/// ```
///
/// `body` runs on the caller's actor (`isolation`), so it may touch the test's state. The stop
/// is `await server.stop()`: while connections drain, the task is suspended and
/// no thread of Swift's cooperative pool, which the tests beside this one share, waits. Under Swift Testing, the trait `.fakeAPNs` (module `FakeAPNsTesting`) does the same
/// for a whole test, with the server in ``FakeAPNsServer/current``.
public func withFakeAPNs<Result>(
    configuration: FakeAPNsServer.Configuration = .init(),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeAPNsServer) async throws -> Result
) async throws -> Result {
    let server = try FakeAPNsServer.started(configuration: configuration)
    let result: Result
    do {
        result = try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
    return result
}
