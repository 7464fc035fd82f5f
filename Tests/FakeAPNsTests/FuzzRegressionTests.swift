import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: the parsers the fuzz targets drive (BinaryDecoder, RequestValidator, ProviderTokenSession, PlaintextSession).
@testable import FakeAPNs

/// What the libFuzzer targets in Fuzz/ found, as tests, and every seed of their corpora
/// (Fuzz/corpus/<target>/) replayed through the same library calls with the same invariants,
/// in short. `Scripts/fuzz.sh` runs the targets themselves; see each target's main.swift for the
/// input formats. The ControlAPI target's findings and seeds are the daemon's: they are in
/// FakeAPNsDaemonTests (DaemonFuzzRegressionTests, ControlAPIFuzzSeedTests). The DeviceModel
/// target's seeds are sequences of operations, replayed by its own program, whole.
final class FuzzRegressionTests: XCTestCase {
    // MARK: - Seed replays

    func testBinaryDecoderSeeds() throws {
        for (name, input) in try fuzzSeeds("BinaryDecoder") {
            for decoder in [BinaryDecoder(), BinaryDecoder(maximumPayloadSize: 16)] {
                input.withUnsafeBytes { stream in
                    var offset = 0
                    while offset < stream.count {
                        let rest = UnsafeRawBufferPointer(rebasing: stream[offset...])
                        switch decoder.decode(rest) {
                        case .frame(let frame):
                            XCTAssert(frame.length > 0 && frame.length <= rest.count, name)
                            XCTAssert(frame.token.upperBound <= frame.length && frame.payload.upperBound <= frame.length, name)
                            XCTAssert((1...BinaryDecoder.maximumTokenSize).contains(frame.token.count), name)
                            XCTAssert((1...decoder.maximumPayloadSize).contains(frame.payload.count), name)
                            offset += frame.length
                        case .incomplete:
                            XCTAssertNotEqual(decoder.truncated(rest).status, .noErrors, name)
                            return
                        case .failure(let failure):
                            XCTAssertNotEqual(failure.status, .noErrors, name)
                            return
                        }
                    }
                }
            }
        }
    }

    func testHTTP2RequestSeeds() throws {
        var accepted = 0
        for (name, input) in try fuzzSeeds("HTTP2Request") {
            // Line 1: the certificate's topics; "name: value" lines to an empty line; the body.
            var lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            var body: [UInt8] = []
            if let blank = lines.dropFirst().firstIndex(where: \.isEmpty) {
                body = Array(input[(lines[blank].startIndex + 1)...])
                lines = Array(lines[..<blank])
            }
            let text = { (bytes: ArraySlice<UInt8>) in String(decoding: bytes, as: UTF8.self) }
            let topics = lines.first.map { $0.split(separator: UInt8(ascii: " ")).map(text) } ?? []
            let headers = lines.dropFirst().map { line -> (name: String, value: String) in
                let split = line.indices.dropFirst().first { line[$0] == 0x3A && line.index(after: $0) < line.endIndex
                    && line[line.index(after: $0)] == 0x20 }
                guard let split else { return (text(line), "") }
                return (text(line[..<split]), text(line[(split + 2)...]))
            }
            let request = HTTP2Request(headers: headers, body: body)
            for authority in [TopicAuthority.any, .token, .certificate(topics: topics)] {
                switch RequestValidator().validate(request, topics: authority) {
                case .accepted(let fields):
                    accepted += 1
                    XCTAssertEqual(request.method, "POST", name)
                    XCTAssertEqual("/3/device/" + fields.deviceToken.hex, request.path.lowercased(), name)
                    XCTAssertEqual(fields.payload.bytes, body, name)
                    XCTAssert((1...(fields.pushType == .voip ? 5120 : 4096)).contains(body.count), name)
                    if case .certificate(let topics) = authority { XCTAssert(topics.contains(fields.topic ?? ""), name) }
                    if case .token = authority { XCTAssertNotNil(request.firstValue(of: "apns-topic"), name) }
                case .rejected(let reason, let detail, _):
                    XCTAssert((400...499).contains(reason.status) && !detail.isEmpty, name)
                }
            }
        }
        XCTAssertGreaterThan(accepted, 0, "no seed is an accepted request")
    }

    func testProviderTokenSeeds() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let other = try JWTSigningKey(
            keyID: "OTHERKEY01", teamID: "OTHERTEAM1", publicKeyPEM: TestCertificates.jwtPublicKeyPEM)
        let verifier = ProviderTokenVerifier(keys: [.test, other])
        var verified: Set<String> = []
        for (name, input) in try fuzzSeeds("ProviderToken") {
            var session = ProviderTokenSession()
            for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                let authorization = String(decoding: line, as: UTF8.self)
                let alone = verifier.verify(authorization: authorization, now: now)
                let inSession = session.authenticate(authorization: authorization, verifier: verifier, now: now)
                switch alone {
                case .success(let claims):
                    verified.insert(name)
                    XCTAssert([JWTSigningKey.test.keyID, other.keyID].contains(claims.keyID), name)
                    XCTAssertEqual(claims.teamID, claims.keyID == other.keyID ? other.teamID : JWTSigningKey.test.teamID)
                    if case .failure(let failure) = inSession {
                        XCTAssert([.invalidProviderToken, .tooManyProviderTokenUpdates].contains(failure.reason), name)
                    }
                case .failure(let failure):
                    XCTAssertEqual(try? inSession.get(), nil, name)
                    if case .failure(let again) = inSession { XCTAssertEqual(again, failure, name) }
                }
            }
        }
        // The seeds are real tokens signed with the test key; these must keep verifying.
        XCTAssert(
            verified.isSuperset(of: ["fresh-token", "der-signature", "other-team-binds", "fractional-iat", "string-iat"]),
            "\(verified)")
    }

    /// The plaintext listener's framing reports the same requests whether the bytes come at once
    /// or one at a time. Found by the PlaintextSession target: a request that asked for an
    /// upgrade not granted, its body cut, had the rest of its body read as a new request.
    func testPlaintextSessionSeedsReportTheSameRequestsHoweverCut() throws {
        final class Events: HTTP2SessionDelegate {
            var log: [String] = []
            func streamBegan(_ stream: Int32) { log.append("begin \(stream)") }
            func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
                log.append("\(String(decoding: name, as: UTF8.self))=\(String(decoding: value, as: UTF8.self))")
            }
            func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) { log.append("data") }
            func streamEnded(_ stream: Int32) { log.append("end \(stream)") }
            func streamClosed(_ stream: Int32, errorCode: UInt32) {}
            func transportChosen(_ transport: ConnectionTransport) { log.append("\(transport)") }
        }
        func events(_ input: [UInt8], pieceSize: Int) -> [String] {
            let events = Events()
            let session = PlaintextSession(delegate: events)
            for start in stride(from: 0, to: input.count, by: pieceSize) {
                let piece = input[start..<min(start + pieceSize, input.count)]
                guard (try? piece.withUnsafeBytes { try session.receive($0) }) != nil else { break }
            }
            // Body bytes come in as many pieces as the input was cut into.
            return events.log.reduce(into: []) { kept, event in
                if event != "data" || kept.last != "data" { kept.append(event) }
            }
        }
        var ended = 0
        for (name, input) in try fuzzSeeds("PlaintextSession") {
            let whole = events(input, pieceSize: input.count)
            XCTAssertEqual(events(input, pieceSize: 1), whole, name)
            ended += whole.filter { $0.hasPrefix("end ") }.count
        }
        XCTAssertGreaterThanOrEqual(ended, 8, "the seeds hold complete requests")
    }

    // MARK: - The device model's seeds

    /// The DeviceModel target's seeds but issue 32's, lines of operations on a server's phones
    /// (the format is at the top of Fuzz/DeviceModel/DeviceModel.swift), each replayed by the
    /// target's own program with all its invariants: they exit 0.
    func testDeviceModelSeeds() throws {
        for failure in try deviceModelSeedFailures({ !$0.hasPrefix("issue32-") }) { XCTFail(failure) }
    }

    /// Issue 32, the `issue32-` seeds: a Live Activity push whose `stale-date`, `dismissal-date`
    /// or `timestamp` is Int64.max - 511 or more (2^63 as a Double) is answered 200, by HTTP/2,
    /// the plaintext listener or a broadcast; then the phone's JSON or screen trapped writing the
    /// date (Model/Timestamp.swift:41), and an older update push trapped the model itself
    /// (Device/DeviceModel+LiveActivity.swift:46): so they did until the phone ignored a Live
    /// Activity date outside 1970...9999. A seed that traps again fails this test, naming the
    /// trap, and ends nothing else.
    func testDeviceModelIssue32Seeds() throws {
        for failure in try deviceModelSeedFailures({ $0.hasPrefix("issue32-") }) { XCTFail(failure) }
    }

    /// The HTTP2Connection target's seeds, bytes a provider API connection in memory reads under
    /// a choice of its rules (the format is at the top of
    /// Fuzz/HTTP2Connection/HTTP2Connection.swift), each replayed by the target's own program
    /// with all its invariants: they exit 0.
    func testHTTP2ConnectionSeeds() throws {
        for failure in try seedFailures(of: "HTTP2Connection", { _ in true }) { XCTFail(failure) }
    }

    private func deviceModelSeedFailures(_ picked: (String) -> Bool) throws -> [String] {
        try seedFailures(of: "DeviceModel", picked)
    }

    /// Replays each seed of `target` that `picked` names through its program `Fuzz<target>`,
    /// built beside the tests, one child process a seed, so that a seed that traps fails this
    /// test and ends nothing else. What went wrong with each seed that failed: its name, the
    /// fatal error and the first frame in Sources/.
    private func seedFailures(of target: String, _ picked: (String) -> Bool) throws -> [String] {
        let program = Bundle.main.bundleURL.appendingPathComponent("Fuzz\(target)").path
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: program])
        }
        let seeds = try fuzzSeeds(target).map(\.name).filter(picked)
        XCTAssertFalse(seeds.isEmpty)
        var failures: [String] = []
        for name in seeds {
            let seed = repositoryRoot.appendingPathComponent("Fuzz/corpus/\(target)/\(name)").path
            let run = try runTool(
                program, [seed], environment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no"])
            guard run.status != 0 else { continue }
            let lines = run.error.split(separator: "\n")
            func after(_ marker: String) -> String? {
                lines.lazy.compactMap { line in line.range(of: marker).map { String(line[$0.upperBound...]) } }.first
            }
            let fatal = after("Fatal error: ") ?? "exit status \(run.status)"
            let frame = after("/Sources/")
            failures.append("\(name): \(fatal)" + (frame.map { " at Sources/\($0)" } ?? ""))
        }
        return failures
    }
}
