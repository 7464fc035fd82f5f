import FakeAPNsTestSupport
import FakeAPNsTesting
import Foundation
import Testing
import FakeAPNs

/// The trait `.fakeAPNs`: each test gets a started server of its own as `FakeAPNsServer.current`,
/// stopped after the test however it ended.
@Suite struct FakeAPNsTraitTests {
    private struct Failure: Error {}

    @Test(.fakeAPNs) func aTestWithTheTraitHasAStartedServer() async throws {
        let server = try #require(FakeAPNsServer.current)
        #expect(server.gatewayPort != 0)
        let sender = try ProviderAPIClient(host: "127.0.0.1", port: try #require(server.http2Port))
        defer { sender.close() }
        #expect(try sender.send(.push()).status == 200)
        let push = try await server.notifications.next(timeout: .seconds(5))
        #expect(push.deviceToken == Fixtures.token)
    }

    @Test func currentIsNilOutsideTheTrait() {
        #expect(FakeAPNsServer.current == nil)
    }

    @Test(.fakeAPNs) func theTestsTasksSeeItsServerAndADetachedTaskDoesNot() async throws {
        let server = try #require(FakeAPNsServer.current)
        let child = await Task { FakeAPNsServer.current }.value
        #expect(child === server)
        let detached = await Task.detached { FakeAPNsServer.current }.value
        #expect(detached == nil)
    }

    @Test(.fakeAPNs, arguments: [1, 2, 3] as [UInt32])
    func eachCaseOfAParameterizedTestHasAServerOfItsOwn(identifier: UInt32) async throws {
        let server = try #require(FakeAPNsServer.current)
        let sender = try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort)
        defer { sender.close() }
        try sender.send(BinaryEncoder.enhanced(identifier: identifier, token: Fixtures.token, payload: Fixtures.alert))
        let push = try await server.notifications.next(timeout: .seconds(5))
        #expect(push.identifier == identifier, "no other case's notification")
        #expect(server.notificationHistory.list().count == 1)
    }

    /// Two scopes open at once, as two tests running in parallel: two servers, each task with
    /// its own as `current`, both listening at the same time.
    @Test(.timeLimit(.minutes(1))) func twoTestsRunningAtOnceHaveTwoServers() async throws {
        let test = try #require(Test.current)
        let testCase = Test.Case.current
        let trait = FakeAPNsTrait.fakeAPNs
        let bothInside = Rendezvous(count: 2)
        let seen = Locked<[(server: FakeAPNsServer, port: Int)]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await trait.provideScope(for: test, testCase: testCase) {
                        let server = try #require(FakeAPNsServer.current)
                        seen.withLock { $0.append((server, server.gatewayPort)) }
                        await bothInside.arrive()
                        #expect(FakeAPNsServer.current === server, "each task keeps its own")
                        #expect(Self.accepts(server.gatewayPort), "both listen at once")
                    }
                }
            }
            try await group.waitForAll()
        }
        let servers = seen.withLock { $0 }
        try #require(servers.count == 2)
        #expect(servers[0].server !== servers[1].server)
        #expect(servers[0].port != servers[1].port)
        for (_, port) in servers { #expect(!Self.accepts(port), "stopped after its test") }
    }

    @Test func theServerIsStoppedWhenTheTestThrows() async throws {
        let test = try #require(Test.current)
        let port = Locked(0)
        await #expect(throws: Failure.self) {
            try await FakeAPNsTrait.fakeAPNs.provideScope(for: test, testCase: Test.Case.current) {
                let server = try #require(FakeAPNsServer.current)
                port.withLock { $0 = server.gatewayPort }
                throw Failure()
            }
        }
        let gatewayPort = port.withLock { $0 }
        #expect(gatewayPort != 0)
        #expect(!Self.accepts(gatewayPort), "stopped although the test threw")
        #expect(FakeAPNsServer.current == nil, "and gone from the task")
    }

    /// A client connected during the test is told the server stopped: the gateway's status 10
    /// (shutdown), which only `stop()` sends.
    @Test func theServerIsStoppedWhenTheTestReturns() async throws {
        let test = try #require(Test.current)
        let connected = Locked<BinaryProviderClient?>(nil)
        try await FakeAPNsTrait.fakeAPNs.provideScope(for: test, testCase: Test.Case.current) {
            let server = try #require(FakeAPNsServer.current)
            let client = try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort)
            connected.withLock { $0 = client }
        }
        let client = try #require(connected.withLock { $0 })
        defer { client.close() }
        #expect(try client.finish()?.status == .shutdown)
    }

    @Test func aTestsOwnTraitReplacesItsSuitesAndOnlyOneServerStarts() throws {
        let test = try #require(Test.current)
        let testCase = try #require(Test.Case.current)
        let suite = FakeAPNsTrait.fakeAPNs(.init(strictDeviceRegistry: true))
        let own = FakeAPNsTrait.fakeAPNs
        // As Swift Testing gives a test its suite's recursive traits: first, before its own.
        var inSuite = test
        inSuite.traits = [suite, own]
        #expect(suite.scopeProvider(for: inSuite, testCase: testCase) == nil)
        #expect(own.scopeProvider(for: inSuite, testCase: testCase) != nil)
        #expect(suite.isRecursive, "a suite's trait reaches each of its tests")
    }

    /// Whether a TLS client can connect to the port (a stopped server's port refuses).
    fileprivate static func accepts(_ port: Int) -> Bool {
        (try? BinaryProviderClient(host: "127.0.0.1", port: port)) != nil
    }
}

/// A suite's configuration reaches each of its tests, each with its own server; a test's own
/// `.fakeAPNs` replaces it.
@Suite(.fakeAPNs(.init(feedbackPort: nil, strictDeviceRegistry: true)))
struct FakeAPNsSuiteTraitTests {
    @Test func theSuitesConfigurationApplies() async throws {
        let server = try #require(FakeAPNsServer.current)
        #expect(server.feedbackPort == nil)
        #expect(server.configuration.strictDeviceRegistry)
        let sender = try ProviderAPIClient(host: "127.0.0.1", port: try #require(server.http2Port))
        defer { sender.close() }
        let response = try sender.send(.push())
        #expect(response.status == 400, "strict: an unknown device is refused")
        #expect(response.reason == "BadDeviceToken")
    }

    @Test(.fakeAPNs) func aTestsOwnTraitDecides() async throws {
        let server = try #require(FakeAPNsServer.current)
        #expect(server.feedbackPort != nil)
        #expect(!server.configuration.strictDeviceRegistry)
    }

    @Suite struct Nested {
        @Test func aNestedSuitesTestHasTheConfigurationToo() throws {
            let server = try #require(FakeAPNsServer.current)
            #expect(server.feedbackPort == nil)
        }
    }
}

/// Lets `count` tasks through once all of them have arrived.
private actor Rendezvous {
    private let count: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) {
        self.count = count
    }

    func arrive() async {
        arrived += 1
        if arrived == count {
            waiting.forEach { $0.resume() }
            waiting.removeAll()
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}
