import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: the source files, and ServerClock's real time.
@testable import FakeAPNs

/// One clock: everything the server stamps or judges reads `server.clock`, so a test that
/// moves it sees tokens age, records and unregistrations dated, by the moved clock, and the
/// clock saturates instead of trapping. Provider tokens are sent with curl where a new
/// connection will do, and with the project's client where the rule is per connection.
final class OneClockTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }
    private static let day: Int64 = 24 * 3600
    /// 2027-01-15 08:00 UTC.
    private static let setTime = Date(timeIntervalSince1970: 1_800_000_000)

    /// A token signed now, on real time, as a provider signs it.
    private func freshToken() throws -> String {
        try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID)
    }

    private func bearer(_ token: String) -> [(String, String)] { [("authorization", "bearer \(token)")] }

    private func curlPush(_ token: String, apnsID: String = UUID().uuidString) -> WirePush {
        var push = WirePush.device(Fixtures.token, #"{"aps":{"alert":"hi"}}"#, apnsID: apnsID)
        push.headers.append(("authorization", "bearer \(token)"))
        return push
    }

    // MARK: - Provider tokens

    func testAfterThirtyOneDaysFreshTokensAreAcceptedAndTwentyMinutesApartAreNoTooEarlyRefresh() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        server.clock.advance(by: .seconds(31 * Self.day))
        XCTAssertEqual(try Curl.send(curlPush(try freshToken()), to: server).status, 200, "judged on real time when first seen")

        let client = try server.connectHTTP2()
        XCTAssertEqual(try client.send(.push(extra: bearer(try freshToken()))).status, 200)
        let tooSoon = try client.send(.push(extra: bearer(try freshToken())))
        XCTAssertEqual(tooSoon.status, 429, "first seen at once on the server's clock")
        XCTAssertEqual(tooSoon.reason, "TooManyProviderTokenUpdates")
        server.clock.advance(by: .seconds(20 * 60))
        let refreshed = try client.send(.push(extra: bearer(try freshToken())))
        XCTAssertEqual(refreshed.status, 200, "20 minutes on the moved clock, whatever the iats say: \(refreshed.reason ?? "")")
    }

    func testATokenSeenBeforeTheClockMovesAnHourIsExpired() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        let token = try freshToken()
        XCTAssertEqual(try Curl.send(curlPush(token), to: server).status, 200)
        server.clock.advance(by: .seconds(59 * 60))
        XCTAssertEqual(try Curl.send(curlPush(token), to: server).status, 200, "59 minutes old on the server's clock")
        server.clock.advance(by: .seconds(61))
        let expired = try Curl.send(curlPush(token), to: server)
        XCTAssertEqual(expired.status, 403)
        XCTAssertEqual(expired.reason, "ExpiredProviderToken", "aged on the server's clock, on any connection")
        XCTAssertEqual(try Curl.send(curlPush(try freshToken()), to: server).status, 200, "a token never seen is judged on real time")
    }

    func testAClockSetBackMakesNoTokenYoungerAndNoRefreshTooEarly() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        server.clock.set(to: Self.setTime)
        let client = try server.connectHTTP2()
        let first = try freshToken()
        XCTAssertEqual(try client.send(.push(extra: bearer(first))).status, 200)
        server.clock.set(to: Self.setTime.addingTimeInterval(-Double(Self.day)))
        XCTAssertEqual(try client.send(.push(extra: bearer(first))).status, 200, "as old as when first seen, not younger")
        server.clock.set(to: Self.setTime.addingTimeInterval(61 * 60))
        XCTAssertEqual(try client.send(.push(extra: bearer(first))).reason, "ExpiredProviderToken", "61 minutes after it was seen")
        XCTAssertEqual(try server.connectHTTP2().send(.push(extra: bearer(try freshToken()))).status, 200)

        // A token first seen before the one a connection holds is no refresh too early.
        let other = try server.connectHTTP2()
        server.clock.set(to: Self.setTime.addingTimeInterval(Double(Self.day)))
        XCTAssertEqual(try other.send(.push(extra: bearer(try freshToken()))).status, 200)
        server.clock.set(to: Self.setTime)
        XCTAssertEqual(try other.send(.push(extra: bearer(try freshToken()))).status, 200)
        XCTAssertEqual(try other.send(.push(extra: bearer(try freshToken()))).status, 429, "but the next one, at once, is")
    }

    func testAnIatAfterYear9999IsARefusalThatSaysSo() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        for seconds in [253_402_300_800, 1e15, 1e18] {
            let token = try ProviderTokenSigner.sign(
                keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID,
                issuedAt: Date(timeIntervalSince1970: seconds))
            let verified = ProviderTokenVerifier(keys: [.test]).verify(authorization: "bearer \(token)", now: Date(timeIntervalSince1970: seconds))
            guard case .failure(let failure) = verified else { return XCTFail("iat \(seconds) accepted") }
            XCTAssertEqual(failure.reason, .invalidProviderToken)
            XCTAssertTrue(failure.detail.contains("after year 9999"), failure.detail)
            XCTAssertEqual(try Curl.send(curlPush(token), to: server).reason, "InvalidProviderToken")
        }
        XCTAssertEqual(server.notifications.count, 0)
    }

    // MARK: - Records

    func testEveryListenerStampsReceivedAtWithTheSetTime() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.plaintextPort = 0
        try fixture.start(configuration, for: self)
        server.clock.set(to: Self.setTime)

        try fixture.binaryClient().send(
            BinaryEncoder.enhanced(identifier: 1, expiration: 0, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).receivedAt, Self.setTime, "binary")

        XCTAssertEqual(try Curl.send(WirePush.device(Fixtures.token, #"{"aps":{"alert":"h2"}}"#), to: server).status, 200)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).receivedAt, Self.setTime, "HTTP/2")

        let plaintext = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http1.1", "--output", "/dev/null", "--write-out", "%{http_code}",
            "--header", "apns-topic: com.example.app", "--header", "apns-push-type: alert",
            "--data-binary", #"{"aps":{"alert":"plain"}}"#,
            "http://127.0.0.1:\(fixture.plaintextPort)/3/device/\(Fixtures.token.hex)",
        ])
        XCTAssertEqual(plaintext.output, "200", plaintext.error)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).receivedAt, Self.setTime, "plaintext")

        let channel = try server.channels.create(bundleID: "com.example.app", storagePolicy: .mostRecentMessage)
        XCTAssertEqual(channel.createdAt, Self.setTime)
        try server.channels.subscribe(Fixtures.token, to: channel.id)
        let broadcast = ProviderAPIClient.Request(
            path: "/4/broadcasts/apps/com.example.app",
            headers: [("apns-channel-id", channel.id), ("apns-push-type", "LiveActivity"), ("apns-priority", "10")],
            body: Array(#"{"aps":{"event":"update","timestamp":1800000000,"content-state":{}}}"#.utf8))
        XCTAssertEqual(try server.connectHTTP2().send(broadcast).status, 200)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).receivedAt, Self.setTime, "broadcast")
        XCTAssertEqual(try server.channels.deliveries.pop(timeout: .seconds(5)).deliveredAt, Self.setTime)

        XCTAssertEqual(try server.connectHTTP2().send(.push(pushType: "bogus")).status, 400)
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).receivedAt, Self.setTime, "a refusal")
        try fixture.binaryClient().send(
            BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: []))
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).receivedAt, Self.setTime, "a malformed binary push")
    }

    func testAnUnregistrationWithoutATimeIsStampedOnTheMovedClockAndThe410SaysSo() throws {
        try fixture.start(for: self)
        server.clock.set(to: Self.setTime.addingTimeInterval(0.75))
        server.devices.unregister(Fixtures.token)
        XCTAssertEqual(server.devices.device(Fixtures.token)?.unregisteredAt, Self.setTime, "whole seconds, as the tuple says")
        XCTAssertEqual(server.feedback.pendingTuples.map(\.date), [Self.setTime])

        let response = try server.connectHTTP2().send(.push())
        XCTAssertEqual(response.status, 410)
        XCTAssertEqual(response.timestamp, 1_800_000_000_000)
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).unregisteredAt, Self.setTime)

        let other = try DeviceToken(hex: "00" + String(Fixtures.token.hex.dropFirst(2)))
        server.feedback.add(other)
        XCTAssertEqual(server.feedback.pendingTuples.last?.date, Self.setTime, "a tuple without a date")

        server.devices.unregister(Fixtures.token, at: Date(timeIntervalSince1970: 1e300))
        let far = try server.connectHTTP2().send(.push())
        XCTAssertEqual(far.status, 410)
        XCTAssertEqual(far.timestamp, 253_402_300_799_999, "held to the end of year 9999, not a trap")
    }

    // MARK: - Saturation

    func testTheClockSaturatesAtTheEndOfYear9999AndAt1970() throws {
        try fixture.start(for: self)
        server.device(Fixtures.token).update { $0.isOnline = false }
        XCTAssertEqual(try server.connectHTTP2().send(.push()).status, 200)
        let lastSecond = Date(timeIntervalSince1970: 253_402_300_799)

        server.clock.set(to: .distantFuture)   // year 4001: within the range
        XCTAssertEqual(server.clock.currentDate, .distantFuture)
        XCTAssertEqual(server.device(Fixtures.token).log.last?.status, .discardedExpired, "the model played the move")
        server.clock.set(to: Date(timeIntervalSince1970: 1e18))
        XCTAssertEqual(UnixTime(clamping: server.clock.currentDate).date, lastSecond)
        XCTAssertEqual(Timestamp.rfc3339(server.clock.currentDate).prefix(20), "9999-12-31T23:59:59.")

        server.clock.set(to: Self.setTime)
        server.clock.advance(by: .seconds(Int64.max))
        XCTAssertEqual(UnixTime(clamping: server.clock.currentDate).date, lastSecond)
        server.clock.advance(by: .seconds(Int64.max))
        XCTAssertEqual(UnixTime(clamping: server.clock.currentDate).date, lastSecond, "stays at the end")
        XCTAssertEqual(Timestamp.rfc3339(server.clock.currentDate).prefix(20), "9999-12-31T23:59:59.")
        XCTAssertEqual(UnixTime.clamped(server.clock.currentDate), server.clock.currentDate)

        server.clock.set(to: Date(timeIntervalSince1970: -1e12))
        XCTAssertEqual(server.clock.currentDate, UnixTime.earliest.date)
        server.clock.set(to: Date(timeIntervalSince1970: .nan))
        XCTAssertEqual(server.clock.currentDate, UnixTime.earliest.date)
        server.clock.advance(by: .seconds(-5))
        XCTAssertEqual(server.clock.currentDate, UnixTime.earliest.date, "a negative step moves nothing")
    }

    // MARK: - Nothing else reads the wall clock

    /// Where the wall clock may be read, each place (a file and the code on the line) with why:
    /// the one source of real time, and what signs or builds for a provider or a test on real
    /// time rather than stamping the server's records.
    private static let wallClockReaders: [(file: String, code: String, why: String)] = [
        ("Sources/FakeAPNs/Time/ServerClock.swift", "reading base: @escaping @Sendable () -> Date = { Date() }",
         "the real time a clock made on its own reads"),
        ("Sources/FakeAPNs/Server/FakeAPNsServer.swift", "clock: @escaping @Sendable () -> Date = { Date() }",
         "Configuration.clock, the source of real time the server's clock reads"),
        ("Sources/FakeAPNs/Auth/ProviderTokenSigner.swift", "issuedAt: Date = Date()", "a provider signs on real time"),
        ("Sources/FakeAPNsDaemon/TokenCommand.swift", "settings.issuedAt ?? Date()", "`fake-apns token` signs on real time"),
        ("Sources/FakeAPNs/Model/PushNotification.swift", "receivedAt: Date = Date()",
         "a default for records a test builds; the server passes receivedAt (the next test)"),
        ("Sources/FakeAPNs/Model/Rejection.swift", "receivedAt: Date = Date()",
         "a default for records a test builds; the server passes receivedAt (the next test)"),
    ]

    /// The lines of `file` with comments removed (string literals kept: JavaScript in them
    /// runs too).
    private static func codeLines(_ text: String) -> [String] {
        var inBlock = false
        return text.components(separatedBy: "\n").map { line in
            var code = ""
            var rest = Substring(line)
            while !rest.isEmpty {
                if inBlock {
                    guard let end = rest.range(of: "*/") else { return code }
                    rest = rest[end.upperBound...]
                    inBlock = false
                } else if let start = rest.range(of: "/*"), rest.range(of: "//").map({ start.lowerBound < $0.lowerBound }) ?? true {
                    code += rest[..<start.lowerBound]
                    rest = rest[start.upperBound...]
                    inBlock = true
                } else if let comment = rest.range(of: "//"), !rest[..<comment.lowerBound].hasSuffix(":") {
                    code += rest[..<comment.lowerBound]
                    return code
                } else {
                    code += rest
                    rest = ""
                }
            }
            return code
        }
    }

    private static func sourceFiles() throws -> [(path: String, text: String)] {
        let sources = repositoryRoot.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            throw CocoaError(.fileReadNoSuchFile)
        }
        var files: [(path: String, text: String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let path = "Sources/" + url.path.dropFirst(sources.path.count + 1)
            files.append((path, try String(contentsOf: url, encoding: .utf8)))
        }
        XCTAssertGreaterThan(files.count, 100, "the sources were found")
        return files.sorted { $0.path < $1.path }
    }

    func testNothingButTheAllowedPlacesReadsTheWallClock() throws {
        let readers = ["Date()", "Date.now", "Date(timeIntervalSinceNow", ".timeIntervalSinceNow"]
        var found: [String] = []
        var used: Set<String> = []
        for (path, text) in try Self.sourceFiles() {
            for (index, line) in Self.codeLines(text).enumerated() where readers.contains(where: line.contains) {
                if let allowed = Self.wallClockReaders.first(where: { $0.file == path && line.contains($0.code) }) {
                    used.insert(allowed.file + ": " + allowed.code)
                } else {
                    found.append("\(path):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertEqual(found, [], "read the server's clock (server.clock, ServerClock) instead:\n" + found.joined(separator: "\n"))
        XCTAssertEqual(
            used, Set(Self.wallClockReaders.map { $0.file + ": " + $0.code }),
            "an allowed place that reads no wall clock any more leaves the list")
    }

    /// The records' `receivedAt` default is for tests: every record the server builds passes
    /// the time its clock read.
    func testEveryRecordTheServerBuildsPassesItsReceivedAt() throws {
        var found: [String] = []
        for (path, text) in try Self.sourceFiles() where path.hasPrefix("Sources/FakeAPNs/") && !path.contains("/Model/") {
            let code = Self.codeLines(text).joined(separator: "\n")
            var searchFrom = code.startIndex
            while let call = code.range(of: #"\b(PushNotification|Rejection)\("#, options: .regularExpression, range: searchFrom..<code.endIndex) {
                var depth = 1
                var end = call.upperBound
                while depth > 0, end < code.endIndex {
                    if code[end] == "(" { depth += 1 } else if code[end] == ")" { depth -= 1 }
                    end = code.index(after: end)
                }
                let arguments = code[call.upperBound..<end]
                if !arguments.contains("receivedAt:"), !arguments.hasPrefix("lintFinding:") {
                    let line = code[..<call.lowerBound].filter { $0 == "\n" }.count + 1
                    found.append("\(path):\(line)")
                }
                searchFrom = call.upperBound
            }
        }
        XCTAssertEqual(found, [], "pass receivedAt, read from the server's clock:\n" + found.joined(separator: "\n"))
    }
}

/// The server's memory of provider tokens stays bounded: past its threshold it forgets the
/// tokens that would be refused as expired either way, on real time and on its clock.
final class ProviderTokenSightingsTests: XCTestCase {
    func testOnlyTokensExpiredOnBothClocksAreForgotten() {
        let real = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        let clock = ServerClock(reading: { real.withLock { $0 } })
        let sightings = ProviderTokenSightings(clock: clock)
        func claims(_ issuedAt: Date) -> ProviderTokenClaims {
            ProviderTokenClaims(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID, issuedAt: issuedAt)
        }
        let start = real.withLock { $0 }
        clock.set(to: start)   // stands still from here on
        let twoHoursBefore = start.addingTimeInterval(-7200)
        for index in 0..<1000 { _ = sightings.record("old-\(index)", claims: claims(twoHoursBefore), real: start) }
        _ = sightings.record("kept-by-the-clock", claims: claims(start), real: start)
        real.withLock { $0 += 2 * 3600 }
        for index in 0..<23 { _ = sightings.record("new-\(index)", claims: claims(real.withLock { $0 }), real: real.withLock { $0 }) }
        XCTAssertEqual(sightings.count, 1024)
        _ = sightings.record("the-one-past-the-threshold", claims: claims(real.withLock { $0 }), real: real.withLock { $0 })
        XCTAssertEqual(sightings.count, 25, "the 1000 expired ones are forgotten")
        XCTAssertNotNil(sightings.judgingTime(for: "new-0").firstSeen)
        XCTAssertNil(sightings.judgingTime(for: "old-0").firstSeen)
        XCTAssertNotNil(sightings.judgingTime(for: "kept-by-the-clock").firstSeen, "two hours old on real time, but new on the server's clock")
    }
}
