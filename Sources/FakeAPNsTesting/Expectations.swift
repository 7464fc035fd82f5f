public import FakeAPNs

extension Mailbox {
    /// Pops the next item, blocking the thread, or records a failure (in XCTest or Swift
    /// Testing, whichever runs) that says what arrived instead, and returns nil. The async
    /// twin is ``expectNext(timeout:fileID:filePath:line:column:)``, as ``Mailbox/pop(timeout:)``
    /// is to ``Mailbox/next(timeout:)``.
    ///
    /// ```swift
    /// let notification = server.notifications.expectPop()               // XCTest
    /// let notification = await server.notifications.expectNext()        // async, Swift Testing
    /// ```
    @discardableResult
    @available(*, noasync, message: "expectPop blocks the thread; in async code use expectNext")
    public func expectPop(
        timeout: Duration = defaultTimeout,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) -> Element? {
        reporting(CallSite(fileID: fileID, filePath: filePath, line: line, column: column)) {
            try pop(timeout: timeout)
        }
    }

    /// Awaits the next item, or records a failure that says what arrived instead, and returns nil.
    @discardableResult
    public func expectNext(
        timeout: Duration = defaultTimeout,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async -> Element? {
        await reporting(CallSite(fileID: fileID, filePath: filePath, line: line, column: column)) {
            try await next(timeout: timeout)
        }
    }

    /// Pops the first item matching `predicate`, blocking the thread, or records a failure
    /// (saying it awaited `description`, as ``Mailbox/pop(timeout:awaiting:where:)`` does) and
    /// returns nil.
    @discardableResult
    @available(*, noasync, message: "expectPop blocks the thread; in async code use expectNext")
    public func expectPop(
        timeout: Duration = defaultTimeout, awaiting description: String? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) -> Element? {
        reporting(CallSite(fileID: fileID, filePath: filePath, line: line, column: column)) {
            try pop(timeout: timeout, awaiting: description, where: predicate)
        }
    }

    /// Awaits the first item matching `predicate`, or records a failure (saying it awaited
    /// `description`, as ``Mailbox/next(timeout:awaiting:where:)`` does) and returns nil.
    @discardableResult
    public func expectNext(
        timeout: Duration = defaultTimeout, awaiting description: String? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async -> Element? {
        await reporting(CallSite(fileID: fileID, filePath: filePath, line: line, column: column)) {
            try await next(timeout: timeout, awaiting: description, where: predicate)
        }
    }

    /// Pops `count` items, blocking the thread, or records a failure and returns nothing.
    @discardableResult
    @available(*, noasync, message: "expectPop blocks the thread; in async code use expectNext")
    public func expectPop(
        count: Int, timeout: Duration = defaultTimeout,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) -> [Element] {
        reporting(CallSite(fileID: fileID, filePath: filePath, line: line, column: column)) {
            try pop(count: count, timeout: timeout)
        } ?? []
    }

    /// Awaits `count` items, or records a failure and returns nothing.
    @discardableResult
    public func expectNext(
        count: Int, timeout: Duration = defaultTimeout,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async -> [Element] {
        await reporting(CallSite(fileID: fileID, filePath: filePath, line: line, column: column)) {
            try await next(count: count, timeout: timeout)
        } ?? []
    }

    /// Records a failure listing what is queued unless the queue is empty now.
    public func expectEmpty(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let queued = snapshot()
        guard !queued.isEmpty else { return }
        let listed = queued.prefix(10).map { String(describing: $0) }.joined(separator: "; ")
        recordFailure(
            "Expected no \(Element.self) queued; \(queued.count) queued: \(listed)",
            at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }
}

/// Runs a pop; a thrown timeout becomes a recorded failure and nil.
private func reporting<T>(_ site: CallSite, _ body: () throws -> T) -> T? {
    do {
        return try body()
    } catch {
        recordFailure("\(error)", at: site)
        return nil
    }
}

/// Runs an async pop; a thrown timeout becomes a recorded failure and nil.
private func reporting<T>(_ site: CallSite, _ body: () async throws -> T) async -> T? {
    do {
        return try await body()
    } catch {
        recordFailure("\(error)", at: site)
        return nil
    }
}

extension Payload {
    /// Records a failure unless the payload is valid JSON equal to `expected` (key order
    /// aside), naming the first difference.
    ///
    /// ```swift
    /// notification.payload.expectJSON(["aps": ["alert": "Hello", "badge": 1], "orderID": 7])
    /// ```
    public func expectJSON(
        _ expected: JSONValue,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let actual = json else {
            let problem = parseError.map { "\($0)" } ?? "unknown problem"
            recordFailure("Payload is not valid JSON (\(problem)): \(text ?? "<not UTF-8>")", at: site)
            return
        }
        if let difference = JSONDifference.first(between: expected, and: actual, at: "$") {
            recordFailure("Payload differs at \(difference): payload \(text ?? "")", at: site)
        }
    }
}

/// Finds the first place where two JSON values differ, for readable failure messages.
enum JSONDifference {
    static func first(between expected: JSONValue, and actual: JSONValue, at path: String) -> String? {
        switch (expected, actual) {
        case (.object(let expectedObject), .object(let actualObject)):
            for (key, value) in expectedObject {
                guard let other = actualObject[key] else { return "\(path).\(key): missing (expected \(value.serialized()))" }
                if let difference = first(between: value, and: other, at: "\(path).\(key)") { return difference }
            }
            for (key, value) in actualObject where expectedObject[key] == nil {
                return "\(path).\(key): unexpected \(value.serialized())"
            }
            return nil
        case (.array(let expectedArray), .array(let actualArray)):
            for (index, (left, right)) in zip(expectedArray, actualArray).enumerated() {
                if let difference = first(between: left, and: right, at: "\(path)[\(index)]") { return difference }
            }
            if expectedArray.count != actualArray.count {
                return "\(path): expected \(expectedArray.count) elements, found \(actualArray.count)"
            }
            return nil
        case (.int(let left), .double(let right)) where Double(left) == right: return nil
        case (.double(let left), .int(let right)) where left == Double(right): return nil
        default:
            return expected == actual ? nil : "\(path): expected \(expected.serialized()), found \(actual.serialized())"
        }
    }
}
