import FakeAPNs
import Testing

/// A Swift Testing trait that gives each test a server of its own: started before the test,
/// reachable as `FakeAPNsServer.current` in its body, stopped after it whatever the
/// test did (returned, threw, failed an expectation).
///
/// ```swift
/// @Test(.fakeAPNs) func sendsTheWelcome() async throws {
///     let server = try #require(FakeAPNsServer.current)
///     try await sendWelcome(toPort: server.http2Port!)                    // the code under test
///     let notification = try await server.notifications.next(timeout: .seconds(5))
///     #expect(notification.payload.aps.alert?.body == "Welcome")
/// }
///
/// @Suite(.fakeAPNs(.init(strictDeviceRegistry: true)))
/// struct StrictDeviceTests {
///     @Test func anUnknownDeviceIsRefused() async throws { … }   // a strict server of its own
///     @Test func aRegisteredDeviceGetsIt() async throws { … }    // another one, in parallel
/// }
/// ```
///
/// On a suite the trait applies to every test in it and in its nested suites, and each test
/// (each case of a parameterized test) gets its own server, started with the suite's
/// configuration: tests run in parallel and never share a server, its queues or its ports.
/// A test's own `.fakeAPNs(…)` replaces its suite's: the innermost trait decides, and only
/// one server is started.
///
/// The stop, which drains open connections for up to about a second, is the async
/// `stop()`: the test's task is suspended meanwhile, and no thread of Swift's cooperative pool,
/// which the tests beside it share, waits. Outside Swift
/// Testing (XCTest, a program), `withFakeAPNs` does the same around a closure.
public struct FakeAPNsTrait: TestTrait, SuiteTrait, TestScoping {
    /// How each test's server listens and what it accepts.
    public var configuration: FakeAPNsServer.Configuration

    /// Tells this trait from another `.fakeAPNs` on the same test (a suite's).
    private let identity = Identity()

    private final class Identity: Sendable {}

    /// A trait that starts each test's server with `configuration`.
    public init(configuration: FakeAPNsServer.Configuration = .init()) {
        self.configuration = configuration
    }

    /// Always true: on a suite, the trait reaches each test, which gets its own server.
    public var isRecursive: Bool { true }

    /// This trait, for each case of a test function whose innermost `.fakeAPNs` it is; nil for
    /// a suite (its tests have the trait themselves) and for a trait a closer one replaces.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> FakeAPNsTrait? {
        guard !test.isSuite, testCase != nil else { return nil }
        // A suite's recursive traits come before the test's own in `traits`.
        let innermost = test.traits.last { $0 is FakeAPNsTrait } as? FakeAPNsTrait
        return innermost?.identity === identity ? self : nil
    }

    /// Starts a server, runs the test with it as `FakeAPNsServer.current`, and
    /// stops it however the test ends. A server that cannot start fails the test with why.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let server = try FakeAPNsServer.started(configuration: configuration)
        do {
            try await FakeAPNsServer.$current.withValue(server) { try await function() }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

extension Trait where Self == FakeAPNsTrait {
    /// A server of its own for each test, with the default configuration: 127.0.0.1, free
    /// ports, the built-in test identity. In the test: `try #require(FakeAPNsServer.current)`.
    public static var fakeAPNs: Self { FakeAPNsTrait() }

    /// A server of its own for each test, started with `configuration`.
    public static func fakeAPNs(_ configuration: FakeAPNsServer.Configuration) -> Self {
        FakeAPNsTrait(configuration: configuration)
    }
}
