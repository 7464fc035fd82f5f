import FakeAPNs
import XCTest

/// The app catalog's bounds (issue 32): a description at each bound is kept, one past it is
/// refused with the bound named and the catalog left as it was.
final class AppCatalogBoundsTests: XCTestCase {
    /// `count` distinct names of exactly `length` bytes, starting with `prefix`.
    private func names(_ count: Int, length: Int, prefix: String = "N") -> Set<String> {
        Set((0..<count).map { index in
            let head = "\(prefix)\(index)-"
            return head + String(repeating: "x", count: length - head.utf8.count)
        })
    }

    func testADescriptionAtEveryBoundIsKept() throws {
        let catalog = AppCatalog()
        // 128 categories and 128 sounds of 32 bytes: the counts' bound and 8 KiB of names.
        let full = AppBundle(
            categories: names(AppBundle.maximumCategories, length: 32, prefix: "C"),
            sounds: names(AppBundle.maximumSounds, length: 32, prefix: "S"), entitlements: [.criticalAlerts])
        try catalog.describe("com.example.full", as: full)
        XCTAssertEqual(catalog["com.example.full"], full)

        let longest = String(repeating: "a", count: AppBundle.maximumNameLength)
        let long = AppBundle(categories: [longest], sounds: [String(longest.dropLast(4)) + ".caf"])
        try catalog.describe(longest, as: long)
        XCTAssertEqual(catalog[longest], long, "a 255-byte bundle ID and 255-byte names")
        // The bound is in UTF-8 bytes: 127 two-byte characters and one byte.
        let accented = String(repeating: "é", count: 127) + "e"
        try catalog.describe("com.example.accented", as: AppBundle(sounds: [accented]))
        XCTAssertEqual(catalog.count, 3)
    }

    func testADescriptionPastABoundIsRefusedNamingIt() {
        let catalog = AppCatalog()
        let kept = AppBundle(categories: ["ORDER"])
        let bundle = "com.example.app"
        catalog[bundle] = kept
        let cases: [(AppBundle, AppCatalogError)] = [
            (AppBundle(categories: names(129, length: 8)),
             .tooManyNames(bundleID: bundle, part: .categories, count: 129, limit: 128)),
            (AppBundle(sounds: names(129, length: 8)), .tooManyNames(bundleID: bundle, part: .sounds, count: 129, limit: 128)),
            (AppBundle(sounds: [String(repeating: "s", count: 256)]),
             .nameTooLong(bundleID: bundle, part: .sounds, length: 256, limit: 255)),
            (AppBundle(categories: [String(repeating: "é", count: 128)]),
             .nameTooLong(bundleID: bundle, part: .categories, length: 256, limit: 255)),
            // 8,193 bytes: one byte more than 256 names of 32.
            (AppBundle(categories: names(128, length: 32, prefix: "C"),
                       sounds: names(127, length: 32, prefix: "S").union(["S-last-" + String(repeating: "y", count: 26)])),
             .tooLarge(bundleID: bundle, bytes: 8_193, limit: 8_192)),
        ]
        for (description, expected) in cases {
            XCTAssertThrowsError(try catalog.describe(bundle, as: description)) { error in
                XCTAssertEqual(error as? AppCatalogError, expected)
                XCTAssertTrue("\(error)".contains("com.example.app"), "\(error)")
            }
            XCTAssertEqual(catalog[bundle], kept, "a refused description changes nothing")
        }
        let longBundle = String(repeating: "b", count: 256)
        XCTAssertThrowsError(try catalog.describe(longBundle, as: kept)) { error in
            XCTAssertEqual(error as? AppCatalogError, .nameTooLong(bundleID: longBundle, part: .bundleID, length: 256, limit: 255))
        }
        XCTAssertNil(catalog[longBundle])
        XCTAssertEqual(catalog.count, 1)
    }

    func testTheThousandthAppIsKeptAndTheNextRefusedUntilOneIsForgotten() throws {
        let catalog = AppCatalog()
        for index in 0..<AppCatalog.maximumApps {
            try catalog.describe("com.example.app\(index)", as: AppBundle(categories: ["C\(index)"]))
        }
        XCTAssertEqual(catalog.count, 1_000)
        XCTAssertThrowsError(try catalog.describe("com.example.one-more", as: AppBundle())) { error in
            XCTAssertEqual(error as? AppCatalogError, .tooManyApps(bundleID: "com.example.one-more", limit: 1_000))
        }
        XCTAssertNil(catalog["com.example.one-more"])
        // An app already described may be described again, by any of its topics.
        try catalog.describe("com.example.app7.push-type.liveactivity", as: AppBundle(sounds: ["chime.caf"]))
        XCTAssertEqual(catalog["com.example.app7"], AppBundle(sounds: ["chime.caf"]))
        // Forgetting one makes room for another.
        try catalog.describe("com.example.app0", as: nil)
        catalog["com.example.one-more"] = AppBundle()
        XCTAssertEqual(catalog.count, 1_000)
        XCTAssertNotNil(catalog["com.example.one-more"])
    }

    func testTheServersCatalogIsBoundAndAResetEmptiesIt() throws {
        let server = try FakeAPNsServer.started(configuration: .init(feedbackPort: nil, http2Port: nil))
        defer { server.stop() }
        for index in 0..<AppCatalog.maximumApps { server.apps["com.example.app\(index)"] = AppBundle() }
        XCTAssertThrowsError(try server.apps.describe("com.example.another", as: AppBundle()))
        server.reset()
        try server.apps.describe("com.example.another", as: AppBundle())
        XCTAssertEqual(server.apps.count, 1)
    }
}
