import Testing
import XCTest

/// Where a helper was called from, in the form both test frameworks need. Helpers take
/// `fileID`, `filePath`, `line` and `column` as defaulted parameters (literals only take the
/// caller's position when they are the called function's own defaults) and build one.
public struct CallSite: Sendable {
    let fileID: StaticString
    let filePath: StaticString
    let line: UInt
    let column: UInt

    /// A call site.
    public init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
    }
}

/// Records a failure in whichever framework runs the current test: an `Issue` under Swift
/// Testing, an `XCTFail` under XCTest. On Linux each framework ignores the other's failures,
/// so a helper that reported to only one would hide failures in the other.
public func recordFailure(_ message: String, at site: CallSite) {
    if Test.current != nil {
        Issue.record(
            Comment(rawValue: message),
            sourceLocation: SourceLocation(
                fileID: "\(site.fileID)", filePath: "\(site.filePath)", line: Int(site.line), column: Int(site.column)))
    } else {
        XCTFail(message, file: site.filePath, line: site.line)
    }
}
