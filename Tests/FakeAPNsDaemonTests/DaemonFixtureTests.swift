import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

/// The fixture every daemon test starts the built `fake-apns` with: the ports it reads are the
/// ones the daemon serves on, and a daemon that cannot start fails the test at once, saying why.
final class DaemonFixtureTests: XCTestCase {
    func testThePortsOfTheStartLineAreTheOnesTheDaemonServes() throws {
        let daemon = try DaemonFixture.started(for: self)
        XCTAssertEqual(daemon.startLine["event"]?.stringValue, "listening")
        XCTAssertEqual(Set(daemon.ports.keys), ["gateway", "feedback", "http2", "channels", "web"])
        XCTAssertTrue(daemon.ports.values.allSatisfy { $0 > 0 }, "\(daemon.ports)")
        XCTAssertEqual(try HTTPTestClient(port: try daemon.port("web")).get("/healthz").status, 200)
        XCTAssertThrowsError(try daemon.port("plaintext"), "no plaintext listener unless asked for")
    }

    func testADaemonThatExitsInsteadOfStartingFailsAtOnceWithItsStatusAndError() throws {
        let started = ContinuousClock.now
        let misspelt = ["--gateway-prot", "1"]
        XCTAssertThrowsError(try DaemonFixture.started(misspelt, startTimeout: .seconds(30), for: self)) { error in
            XCTAssertTrue("\(error)".contains("exited with status 64"), "\(error)")
            XCTAssertTrue("\(error)".contains("--gateway-prot"), "\(error)")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), "it did not wait out the start timeout")
    }
}
