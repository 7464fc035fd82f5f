import FakeAPNs
import Foundation

/// Turns the daemon's options into a configured server.
enum Daemon {
    /// A server configured from the command line, with the `--devices` registered; not started.
    static func makeServer(options: Options, devices: [DevicesFile.Entry]) throws -> FakeAPNsServer {
        var configuration = FakeAPNsServer.Configuration(
            host: options.host, gatewayPort: options.gatewayPort, feedbackPort: options.feedbackPort,
            http2Port: options.http2Port, environment: options.environment, strictDeviceRegistry: options.strict,
            maximumPayloadSize: options.maximumPayloadSize)
        if let certificate = options.certificateFile, let key = options.keyFile {
            configuration.identity = try TLSIdentity(
                certificateFile: certificate, privateKeyFile: key, passphrase: options.keyPassphrase)
        }
        configuration.authentication = try authentication(options)
        if options.clientCertificates != .off {
            var trusted = TestCertificates.caPEM
            if let file = options.trustedCAFile {
                trusted = try String(contentsOfFile: file, encoding: .utf8)
            }
            configuration.clientCertificates = ClientCertificatePolicy(
                mode: options.clientCertificates, trustedCAsPEM: trusted)
        }
        let server = FakeAPNsServer(configuration: configuration)
        for device in devices {
            server.devices.register(device.token, topic: device.topic, environment: device.environment)
        }
        return server
    }

    /// The authentication mode the options name (`--jwt-key` alone implies token).
    static func modeName(_ options: Options) -> String {
        options.authentication ?? (options.jwtKeys.isEmpty ? "none" : "token")
    }

    private static func authentication(_ options: Options) throws -> HTTP2Authentication {
        switch modeName(options) {
        case "certificate":
            return .certificate
        case "token":
            var keys: [JWTSigningKey] = []
            for key in options.jwtKeys {
                keys.append(try signingKey(keyID: key.keyID, teamID: key.teamID, path: key.path))
            }
            return .token(keys.isEmpty ? [.test] : keys)
        default:
            return .none
        }
    }

    /// A trusted JWT key from a `.p8` or a public key PEM file.
    private static func signingKey(keyID: String, teamID: String, path: String) throws -> JWTSigningKey {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        if text.contains("PUBLIC KEY") {
            return try JWTSigningKey(keyID: keyID, teamID: teamID, publicKeyPEM: text)
        }
        return try JWTSigningKey(keyID: keyID, teamID: teamID, privateKeyPEM: text)
    }
}
