/// Which of Apple's two environments a server plays, or a device token belongs to.
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The development environment (`gateway.sandbox.push.apple.com`).
    case sandbox
    /// The production environment (`gateway.push.apple.com`).
    case production

    public var description: String { rawValue }
}
