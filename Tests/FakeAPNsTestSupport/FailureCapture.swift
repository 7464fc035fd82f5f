import XCTest

/// A test case that catches the failures a block records instead of failing: for testing
/// assertion helpers, what they report and at which line.
///
/// ```swift
/// let line = #line + 1
/// let failures = failures { box.expectPop(timeout: .milliseconds(10)) }
/// XCTAssertEqual(failures.map(\.line), [line])
/// ```
open class FailureCapturingTestCase: XCTestCase {
    /// A failure caught: its message and the line it was recorded at.
    public struct CaughtFailure: Sendable {
        /// The failure's message.
        public let message: String
        /// The line it was recorded at.
        public let line: Int
    }

    /// The failures caught so far, while `failures(recordedBy:)` runs its block.
    private var caught: [CaughtFailure]?

    /// The failures `body` records, caught: the test does not fail for them.
    public func failures(recordedBy body: () -> Void) -> [CaughtFailure] {
        caught = []
        body()
        defer { caught = nil }
        return caught ?? []
    }

    override open func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        if caught != nil {
            caught?.append(CaughtFailure(message: description, line: lineNumber))
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }
}
