/// What a client certificate said about its owner, recorded on every notification sent over
/// that connection.
public struct ClientCertificateInfo: Sendable, Hashable, CustomStringConvertible {
    /// The subject in RFC 2253 form, e.g.
    /// `C=US,O=Example Ltd,OU=ABCDE12345,CN=Apple Push Services: com.example.app,UID=com.example.app`.
    public let subject: String
    /// The APNs topic (bundle ID) from the subject's UID attribute, when present.
    public let topic: String?
    /// Every topic the certificate covers: the UID, then those of Apple's topics extension
    /// (OID 1.2.840.113635.100.6.3.6), without repeats.
    public let topics: [String]
    /// The environments the certificate is marked for (Apple's extensions
    /// 1.2.840.113635.100.6.3.1 sandbox, …6.3.2 production); empty when it carries neither.
    public let environments: Set<PushEnvironment>

    /// A certificate description.
    package init(subject: String, topic: String?, topics: [String]? = nil, environments: Set<PushEnvironment> = []) {
        self.subject = subject
        self.topic = topic
        self.topics = topics ?? topic.map { [$0] } ?? []
        self.environments = environments
    }

    /// The subject.
    public var description: String { subject }
}
