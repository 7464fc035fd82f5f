/// Something that happened at a server, as its event observer hears it: the daemon's log and
/// metrics are built on these.
public enum ServerEvent: Sendable {
    /// A client connected and completed the TLS handshake.
    case connectionOpened(ConnectionInfo, listener: ListenerKind)
    /// A client's connection ended.
    case connectionClosed(ConnectionInfo, listener: ListenerKind)
    /// A connection rule throttled or ended a provider API connection
    /// (``FakeAPNsServer/Configuration/connectionRules``).
    case connectionRule(ConnectionInfo, listener: ListenerKind, ProviderConnectionRules.Event)
    /// A client connected but the TLS handshake failed.
    case handshakeFailed(peer: String, listener: ListenerKind, reason: String)
    /// A listener closed a connection as soon as it accepted it, for want of room (a
    /// connection limit) or of a resource (a descriptor, a thread); every other connection
    /// goes on.
    case connectionRefused(peer: String, listener: ListenerKind, reason: ConnectionRefusal)
    /// Notifications were accepted, in order, with their sequence numbers.
    case accepted([PushNotification])
    /// A notification was refused.
    case rejected(Rejection)
    /// A client read the feedback service's pending tuples.
    case feedbackRead([FeedbackTuple], ConnectionInfo)
    /// A broadcast channel was created (by a provider or through ``FakeAPNsServer/channels``).
    case channelCreated(Channel)
    /// A broadcast channel was deleted.
    case channelDeleted(Channel)
    /// Steps of pushes on their way to phones, in order, as the device model played them
    /// (only for phones a test described; the others get every push at once).
    case deviceLog([DeliveryLogEntry])
}

/// Which of a server's listeners.
public enum ListenerKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The binary gateway.
    case gateway
    /// The feedback service.
    case feedback
    /// The HTTP/2 provider API.
    case http2
    /// The channel management API's own listener.
    case channels
    /// The plaintext listener: the HTTP/2 listener's routes over HTTP/1.1 and cleartext
    /// HTTP/2, for test clients configured with an `http://` URL.
    case plaintext

    public var description: String { rawValue }
}
