#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A per-device-token rate: at most ``requests`` pushes to one device token within
/// ``window`` on the server's clock; the next is answered 429 `TooManyRequests`, as APNs answers
/// "too many requests made consecutively to the same device token" (Apple's Responses table).
/// Apple gives no numbers, so this is a setting, off by default
/// (``FakeAPNsServer/Configuration/deviceTokenRateLimit``).
///
/// ```swift
/// var configuration = FakeAPNsServer.Configuration()
/// configuration.deviceTokenRateLimit = DeviceTokenRateLimit(requests: 3, per: .seconds(10))
/// ```
///
/// A token's window opens at the first push that reaches the rate after its last window
/// closed; pushes refused by the rate do not count. The server remembers the windows of at
/// most ``trackedTokens`` tokens: past that, the window opened first is forgotten early, so a
/// client spraying more tokens than that may get a few more pushes through, never more memory.
public struct DeviceTokenRateLimit: Sendable, Hashable, CustomStringConvertible {
    /// The tokens whose windows the server remembers by default.
    public static let defaultTrackedTokens = 100_000
    /// The most tokens ``trackedTokens`` may be.
    public static let maximumTrackedTokens = 10_000_000

    /// The pushes one token may take within a window (at least 1).
    public let requests: Int
    /// How long a window lasts on the server's clock (more than 0, at most a year).
    public let window: Duration
    /// The most tokens whose windows are remembered at once.
    public let trackedTokens: Int

    /// A rate of `requests` pushes per token `per` window, remembering at most `trackedTokens`
    /// tokens; nil when `requests` or `trackedTokens` is below 1 (or `trackedTokens` above
    /// ``maximumTrackedTokens``), or `window` is not within 1 ms to 365 days.
    public init?(requests: Int, per window: Duration, trackedTokens: Int = defaultTrackedTokens) {
        guard requests >= 1, (1...Self.maximumTrackedTokens).contains(trackedTokens),
            window >= .milliseconds(1), window <= .seconds(365 * 24 * 3600)
        else { return nil }
        self.requests = requests
        self.window = window
        self.trackedTokens = trackedTokens
    }

    /// "3 pushes per token within 10.0 seconds".
    public var description: String {
        "\(requests) \(requests == 1 ? "push" : "pushes") per token within \(window)"
    }
}

/// The windows of ``DeviceTokenRateLimit``, guarded by the policy's lock. A dictionary by token
/// and a queue of windows in the order they opened: each judgement first drops the windows at
/// the head that have closed (each window is dropped once, so no request scans the table), then
/// looks its token up once.
final class DeviceTokenRate: @unchecked Sendable {
    let limit: DeviceTokenRateLimit
    private let clock: ServerClock
    private let windowSeconds: TimeInterval
    /// Each remembered token's window: when it opened and the pushes it took.
    private var windows: [DeviceToken: (opened: Date, count: Int)] = [:]
    /// Windows in the order they opened, from `head`; an entry whose token has since opened
    /// another window is stale and dropped when it reaches the head.
    private var queue: [(token: DeviceToken, opened: Date)] = []
    private var head = 0

    init(limit: DeviceTokenRateLimit, clock: ServerClock) {
        self.limit = limit
        self.clock = clock
        windowSeconds = limit.window.timeInterval
    }

    /// Nil when a push to `token` may go now, counting it; otherwise why it is refused. With
    /// the lock held.
    func refusalLocked(for token: DeviceToken) -> String? {
        let now = clock.currentDate
        while head < queue.count, now.timeIntervalSince(queue[head].opened) >= windowSeconds { dropHead() }
        if var window = windows[token] {
            let age = now.timeIntervalSince(window.opened)
            // A clock set back leaves the window open.
            if age < windowSeconds {
                guard window.count < limit.requests else {
                    return "the server's rate of \(limit) was reached for this token"
                }
                window.count += 1
                windows[token] = window
                return nil
            }
        }
        // Stale entries count against the queue's bound, so it stays within twice the tokens.
        while windows[token] == nil && windows.count >= limit.trackedTokens
            || queue.count - head >= 2 * limit.trackedTokens
        {
            dropHead()
        }
        windows[token] = (now, 1)
        queue.append((token, now))
        return nil
    }

    /// Forgets every window. With the lock held.
    func resetLocked() {
        windows.removeAll()
        queue.removeAll()
        head = 0
    }

    /// The tokens whose windows are remembered now.
    var trackedCountLocked: Int { windows.count }

    private func dropHead() {
        let entry = queue[head]
        if windows[entry.token]?.opened == entry.opened { windows[entry.token] = nil }
        head += 1
        // Give the dropped entries' room back once they are half the array.
        if head >= 1024 && head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }
}
