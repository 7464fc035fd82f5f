#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When the server first saw each provider token, on the real time and on the server's clock,
/// for every connection of one server. A token is judged the first time against the real time
/// its signer signed it on (its age, a clock running ahead, an `iat` in the future); from then
/// on it ages on the server's clock, so a test that moves the clock an hour sees the token
/// expire, and a test that moves it 31 days can still push with freshly signed tokens. The
/// refresh rule (``ProviderTokenSession``) compares when the server first saw two tokens, on
/// its clock.
///
/// A clock set back makes no token younger: the time since a token was first seen never goes
/// below 0. Only tokens that verified are kept; a reset forgets them all.
final class ProviderTokenSightings: Sendable {
    /// When a token was first seen.
    struct Sighting: Sendable {
        /// The real time then.
        let real: Date
        /// The server's clock then.
        let server: Date
        /// The token's `iat`.
        let issuedAt: Date
    }

    private let clock: ServerClock
    private struct State {
        var sightings: [String: Sighting] = [:]
        /// The count at which expired sightings are next looked for.
        var pruneAt = ProviderTokenSightings.pruneThreshold
    }
    private let state = Locked(State())
    private static let pruneThreshold = 1024

    /// Sightings on `clock`, whose real time judges a token seen for the first time.
    init(clock: ServerClock) {
        self.clock = clock
    }

    /// The time to judge `token` at and, when it was seen before, when the server's clock first
    /// saw it: for a new token the real time now; for a known one the real time it was first
    /// seen plus how far the server's clock has moved on since (at least 0).
    func judgingTime(for token: String) -> (at: Date, firstSeen: Date?) {
        guard let sighting = state.withLock({ $0.sightings[token] }) else { return (clock.realDate, nil) }
        let elapsed = max(0, clock.currentDate.timeIntervalSince(sighting.server))
        return (UnixTime.clamped(sighting.real, adding: elapsed), sighting.server)
    }

    /// Records that `token`, just verified at the real time `real`, was seen now, unless a
    /// connection recorded it first; returns when the server's clock first saw it.
    func record(_ token: String, claims: ProviderTokenClaims, real: Date) -> Date {
        let sighting = Sighting(real: real, server: clock.currentDate, issuedAt: claims.issuedAt)
        return state.withLock { state in
            if let known = state.sightings[token] { return known.server }
            if state.sightings.count >= state.pruneAt { prune(&state, now: sighting) }
            state.sightings[token] = sighting
            return sighting.server
        }
    }

    /// Forgets every token, as a reset does.
    func forget() {
        state.withLock { $0 = State() }
    }

    /// How many tokens are remembered.
    var count: Int { state.withLock { $0.sightings.count } }

    /// Drops the tokens that are expired both on the real time and on the server's clock: seen
    /// again, they would be refused as expired either way.
    private func prune(_ state: inout State, now: Sighting) {
        let maximumAge = ProviderTokenVerifier.maximumTokenAge
        state.sightings = state.sightings.filter { _, sighting in
            let realAge = now.real.timeIntervalSince(sighting.issuedAt)
            let serverAge = sighting.real.timeIntervalSince(sighting.issuedAt)
                + max(0, now.server.timeIntervalSince(sighting.server))
            return realAge <= maximumAge || serverAge <= maximumAge
        }
        state.pruneAt = max(Self.pruneThreshold, 2 * state.sightings.count)
    }
}
