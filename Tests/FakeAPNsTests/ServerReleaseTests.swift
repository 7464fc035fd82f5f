import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: the server's stages, to see that none outlives it.
@testable import FakeAPNs

/// A server nobody holds any more is freed whole: no cycle keeps its stages alive. The fuzz
/// targets, which make a server per input, found one under LeakSanitizer (the device model held
/// the channels, whose delivery lane holds the intake's stages, the model among them).
final class ServerReleaseTests: XCTestCase {
    func testADroppedServerFreesItsPhonesAuditClockAndRegistry() {
        weak var server: FakeAPNsServer?
        weak var phones: DeviceModel?
        weak var audit: SenderAudit?
        weak var clock: ServerClock?
        weak var registry: DeviceRegistry?
        weak var channels: ChannelRegistry?
        do {
            let made = FakeAPNsServer(configuration: .init())
            server = made
            phones = made.phones
            audit = made.audit
            clock = made.clock
            registry = made.devices
            channels = made.channels
            XCTAssertNotNil(phones)
        }
        XCTAssertNil(server)
        XCTAssertNil(phones, "the device model outlived its server")
        XCTAssertNil(audit, "the sender audit outlived its server")
        XCTAssertNil(clock)
        XCTAssertNil(registry)
        XCTAssertNil(channels)
    }
}
