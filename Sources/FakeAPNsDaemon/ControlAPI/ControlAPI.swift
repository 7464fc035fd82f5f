import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The daemon's control API: JSON over plain HTTP/1.1, for tests whose code under test is
/// another process. List, get, clear and wait for notifications, rejections and broadcast
/// deliveries; register and unregister devices; create and delete channels and subscribe devices
/// to them; add feedback tuples; add and remove fault rules; reset; `/healthz` and `/metrics`. The README's control API section lists every endpoint.
///
/// ```swift
/// let api = ControlAPI(daemon: daemon, metrics: metrics)
/// let port = try api.start(host: "127.0.0.1", port: 0)
/// defer { api.stop() }
/// ```
///
/// An API starts once; `stop()` ends it for good.
final class ControlAPI: Sendable {
    private let routes: ControlRoutes
    private let server: HTTPServer

    /// An API that serves `maximumConnections` connections at once (`--web-max-connections`).
    init(daemon: Daemon, metrics: Metrics, maximumConnections: Int = ControlLimits.defaultMaximumConnections) {
        routes = ControlRoutes(daemon: daemon, metrics: metrics, waits: InterruptibleWaits())
        server = HTTPServer(maximumBodySize: ControlLimits.maximumBodySize, connectionLimit: maximumConnections)
    }

    /// Listens on `host:port` (port 0: the system picks); returns the bound port.
    func start(host: String, port: Int) throws -> Int {
        guard !routes.waits.isInterrupted else {
            throw HTTPServerError(description: "this control API was stopped; make a new one to listen again")
        }
        return try server.listen(host: host, port: port, answering: { [routes] request in routes.respond(to: request) })
    }

    /// Answers every `next` that starts from now on 503 at once; those waiting go on waiting
    /// (a notification that arrives while the listeners stop still reaches them) until `stop()`.
    func refuseNewWaits() {
        routes.waits.refuseNew()
    }

    /// Ends every wait in progress (they answer 503), lets the answers leave (a second at most),
    /// then closes every connection and joins every thread; the port is free when it returns.
    /// `step` is told each step as it begins. Safe to call twice.
    func stop(step: (String) -> Void = { _ in }) {
        step("answering the control API's waits")
        routes.waits.interruptAll()
        server.stop(drainMilliseconds: Self.drainMilliseconds, step: step)
    }

    /// How long a stop waits for the answers being written: those of the interrupted waits
    /// take milliseconds; only a client that reads nothing holds a stop up this long.
    private static let drainMilliseconds = 1000

    /// Requests begun and not finished (for tests that prove nothing is left behind).
    var openRequests: Int { server.openRequests }

    /// Connections open, those beyond the limit included (for tests).
    var openConnections: Int { server.openConnections }

    /// The connections served at once, once listening: the maximum asked, or fewer when
    /// RLIMIT_NOFILE leaves descriptors for fewer.
    var servedConnectionLimit: Int { server.servedConnectionLimit }
}

/// Decoded commands carried out against the daemon. The daemon is held weakly: it owns its
/// API, and an API left running after its daemon is gone answers 503.
struct ControlRoutes: Sendable {
    weak var daemon: Daemon?
    let metrics: Metrics
    let waits: InterruptibleWaits

    func respond(to request: HTTPRequest) -> HTTPAnswer {
        do {
            let command = try ControlCommand(request: request)
            if request.beyondConnectionLimit && command.waits {
                // A wait would hold one of the few connections kept for answering at once.
                throw ControlError(
                    status: 503, code: "unavailable",
                    message: "the control API serves no more waits: every connection it serves is taken "
                        + "(--web-max-connections); try again when one closes")
            }
            guard let daemon else {
                throw ControlError(status: 503, code: "unavailable", message: "the daemon has stopped")
            }
            return try perform(command, on: daemon)
        } catch {
            return .response(Self.response(error))
        }
    }

    /// The answer to a command that failed.
    static func response(_ error: any Error) -> HTTPResponse {
        switch error {
        case let error as ControlError:
            response(error)
        case let timeout as MailboxTimeout:
            response(ControlError(status: 408, code: "timeout", message: timeout.description))
        case is InterruptibleWaits.Interrupted:
            response(ControlError(status: 503, code: "unavailable", message: "the control API is stopping"))
        case is InterruptibleWaits.Abandoned:
            response(ControlError(status: 503, code: "unavailable", message: "the client closed the connection"))
        default:
            response(ControlError(status: 500, code: "internal_error", message: "\(error)"))
        }
    }

    static func response(_ error: ControlError) -> HTTPResponse {
        var response = HTTPResponse.json(
            error.status, ["error": .string(error.code), "message": .string(error.message)])
        response.allow = error.allow?.joined(separator: ", ")
        return response
    }

    // MARK: - Commands

    private func perform(_ command: ControlCommand, on daemon: Daemon) throws -> HTTPAnswer {
        let server = daemon.server
        func device(_ token: DeviceToken) throws -> DeviceRegistry.Device {
            guard let device = server.devices.device(token) else {
                throw ControlError.notFound("device \(token.hex) is not registered")
            }
            return device
        }
        func channel(_ id: String) throws -> Channel {
            guard let channel = server.channels.channel(id: id) else { throw Self.unknownChannel(id) }
            return channel
        }
        /// The phone with `token`, with what the registry knows of it.
        @Sendable func phone(_ token: DeviceToken) -> JSONValue {
            PhoneJSON.device(server.device(token), registered: server.devices.device(token))
        }

        /// Changes a phone on a handler thread, then answers the phone as it is after.
        func changingPhone(_ token: DeviceToken, _ change: @escaping @Sendable (Phone) -> Void) -> HTTPAnswer {
            .handlerThread {
                change(server.device(token))
                return .json(200, phone(token))
            }
        }

        switch command {
        case .webAsset(let asset):
            return .response(asset.response)
        case .health:
            return .json(200, ["status": "ok"])
        case .metrics:
            return .response(HTTPResponse(
                status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
                body: Array((metrics.render(server: server) + waitsFamily).utf8)))

        case .listNotifications(let filter, let page):
            return list(server.notificationHistory, page, named: "notifications", where: { filter.matches($0) }) {
                $0.jsonObject
            }
        case .notification(let sequence):
            guard let notification = server.notificationHistory.item(sequence) else {
                throw ControlError.notFound(Self.notKept("notification", sequence))
            }
            return .json(200, notification.jsonObject)
        case .clearNotifications:
            server.notifications.removeAll()
            server.notificationHistory.removeAll()
            return .noContent
        case .nextNotification(let filter, let timeout):
            return next(
                server.notifications, timeout: timeout, awaiting: filter.summary.map { "a notification matching \($0)" },
                where: { filter.matches($0) }
            ) { $0.jsonObject }

        case .listRejections(let filter, let page):
            return list(server.rejectionHistory, page, named: "rejections", where: { filter.matches($0) }) {
                $0.jsonObject
            }
        case .rejection(let sequence):
            guard let rejection = server.rejectionHistory.item(sequence) else {
                throw ControlError.notFound(Self.notKept("rejection", sequence))
            }
            return .json(200, rejection.jsonObject)
        case .clearRejections:
            server.rejections.removeAll()
            server.rejectionHistory.removeAll()
            return .noContent
        case .nextRejection(let filter, let timeout):
            return next(
                server.rejections, timeout: timeout, awaiting: filter.summary.map { "a rejection matching \($0)" },
                where: { filter.matches($0) }
            ) { $0.jsonObject }

        case .listDevices:
            return .json(200, [
                "strict": .bool(server.devices.isStrict),
                "devices": .array(server.devices.devices.map(ControlJSON.device)),
                "phones": .array(server.describedDevices.map { .string($0.hex) }),
            ])
        case .listPhones:
            return .json(200, ["phones": .array(server.describedDevices.map { .string($0.hex) })])
        case .device(let token):
            return .json(200, phone(token))
        case .registerDevice(let token, let topic, let environment):
            server.devices.register(token, topic: topic, environment: environment)
            return .json(201, ControlJSON.device(try device(token)))
        case .unregisterDevice(let token, let at):
            // Without a time: now by the server's clock, in whole seconds, as the feedback tuple says.
            server.devices.unregister(token, at: at)
            return .json(200, ControlJSON.device(try device(token)))
        case .removeDevice(let token):
            _ = try device(token)
            server.devices.remove(token)
            return .noContent
        case .setStrict(let strict):
            server.devices.isStrict = strict
            return .json(200, ["strict": .bool(strict)])

        case .listFeedback:
            return .json(200, ["tuples": .array(server.feedback.pendingTuples.map(ControlJSON.tuple))])
        case .addFeedback(let token, let timestamp):
            let tuple = timestamp.map { FeedbackTuple(timestamp: $0, deviceToken: token) }
                ?? FeedbackTuple(date: server.clock.currentDate, deviceToken: token)
            server.feedback.add(tuple)
            return .json(201, ControlJSON.tuple(tuple))

        case .listFaults:
            return .json(200, ["faults": .array(server.faults.rules.map(ControlJSON.fault))])
        case .fault(let id):
            guard let entry = server.faults.rules.first(where: { $0.id == id }) else {
                throw ControlError.notFound("there is no fault rule \(id)")
            }
            return .json(200, ControlJSON.fault(entry))
        case .addFault(let rule):
            let id = server.faults.add(rule)
            return .json(201, ["id": .int(id)])
        case .removeFault(let id):
            guard server.faults.remove(id) else {
                throw ControlError.notFound("there is no fault rule \(id)")
            }
            return .noContent
        case .clearFaults:
            server.faults.removeAll()
            return .noContent

        case .listChannels(let bundleID):
            let channels = bundleID.map { server.channels.list(bundleID: $0) } ?? server.channels.list()
            return .json(200, [
                "channels": .array(channels.map {
                    ControlJSON.channel($0, subscriberCount: server.channels.subscriberCount(of: $0.id))
                }),
            ])
        case .channel(let id):
            return .json(200, ControlJSON.channel(try channel(id), subscriberCount: server.channels.subscriberCount(of: id)))
        case .createChannel(let bundleID, let storagePolicy, let id):
            let channel: Channel
            do {
                channel = try id.map { try server.channels.create(bundleID: bundleID, storagePolicy: storagePolicy, id: $0) }
                    ?? server.channels.create(bundleID: bundleID, storagePolicy: storagePolicy)
            } catch let error as ChannelRegistryError {
                switch error {
                case .channelIDInUse: throw ControlError(status: 409, code: "conflict", message: error.description)
                case .invalidChannelID: throw ControlError.badRequest("invalid_value", "field 'id': \(error)")
                default: throw ControlError.badRequest("limit_reached", error.description)
                }
            }
            return .json(201, ControlJSON.channel(channel, subscriberCount: 0))
        case .deleteChannel(let id):
            guard server.channels.delete(id: id) else { throw Self.unknownChannel(id) }
            return .noContent
        case .subscribe(let token, let channelID):
            do {
                try server.channels.subscribe(token, to: channelID)
            } catch {
                throw Self.unknownChannel(channelID)
            }
            return .json(201, ControlJSON.subscription(
                channelID: channelID, token: token, subscriberCount: server.channels.subscriberCount(of: channelID)))
        case .subscribers(let channelID, let cursor, let limit):
            guard let page = server.channels.subscribers(
                of: channelID, after: cursor.map(SubscriberPage.Cursor.init(position:)), limit: limit)
            else { throw Self.unknownChannel(channelID) }
            return .json(200, ControlJSON.subscriberPage(page))
        case .unsubscribe(let token, let channelID):
            _ = try channel(channelID)
            guard server.channels.unsubscribe(token, from: channelID) else {
                throw ControlError.notFound("device \(token.hex) is not subscribed to channel \(channelID)")
            }
            return .noContent

        case .listDeliveries(let filter, let page):
            return list(server.channels.deliveryHistory, page, named: "deliveries", where: { filter.matches($0) }) {
                ControlJSON.delivery($0)
            }
        case .delivery(let sequence):
            guard let delivery = server.channels.deliveryHistory.item(sequence) else {
                throw ControlError.notFound(Self.notKept("delivery", sequence))
            }
            return .json(200, ControlJSON.delivery(delivery))
        case .clearDeliveries:
            server.channels.deliveries.removeAll()
            server.channels.deliveryHistory.removeAll()
            return .noContent
        case .nextDelivery(let filter, let timeout):
            return next(
                server.channels.deliveries, timeout: timeout,
                awaiting: filter.summary.map { "a broadcast delivery matching \($0)" }, where: { filter.matches($0) },
                json: ControlJSON.delivery)

        case .reset:
            return .handlerThread {
                daemon.reset()
                return .json(200, ["status": "reset"])
            }

        // The device model: a change plays what it releases before the answer, on a handler
        // thread since it takes the intake's lock.
        case .keys:
            return .json(200, ControlJSON.keys(server.configuration))
        case .clock:
            return .json(200, PhoneJSON.clock(server.clock))
        case .moveClock(let move):
            return .handlerThread {
                switch move {
                case .advance(let interval): server.clock.advance(by: interval)
                case .set(let date): server.clock.set(to: date)
                case .real: server.clock.returnToRealTime()
                }
                return .json(200, PhoneJSON.clock(server.clock))
            }
        case .updatePhone(let token, let change):
            return changingPhone(token) { phone in phone.update { $0 = change.applied(to: $0) } }
        case .launchApp(let token, let bundleID):
            return changingPhone(token) { $0.launchApp(bundleID) }
        case .forceQuitApp(let token, let bundleID):
            return changingPhone(token) { $0.forceQuit(bundleID) }
        case .startLiveActivity(let token, let bundleID, let type):
            return changingPhone(token) { $0.startLiveActivity(bundleID, attributesType: type) }
        case .releaseBursts(let token):
            return changingPhone(token) { $0.releaseBursts() }
        case .phoneLog(let token, let apnsID, let uniqueID):
            let phone = server.device(token)
            let entries = apnsID.map { phone.log(apnsID: $0) } ?? uniqueID.map { phone.log(uniqueID: $0) } ?? phone.log
            return .json(200, PhoneJSON.log(entries))
        case .screen(let token):
            return .json(200, PhoneJSON.screen(server.device(token).screen))
        case .nextPhoneDelivery(let token, let timeout):
            return next(
                server.device(token).deliveries, timeout: timeout, awaiting: nil, where: { _ in true },
                json: PhoneJSON.delivery)
        case .deliveryLog(let uniqueID):
            // Off the polling thread: the model looks the push up in the history.
            return .handlerThread { .json(200, PhoneJSON.log(server.deliveryLog(uniqueID: uniqueID))) }
        case .senderReport(let sender):
            let report = sender.map { server.senderReport(sender: $0) } ?? server.senderReport
            return .json(200, ControlJSON.senderReport(report))
        case .app(let bundleID):
            return .json(200, PhoneJSON.app(bundleID, server.apps[bundleID]))
        case .describeApp(let bundleID, let bundle):
            do {
                try server.apps.describe(bundleID, as: bundle)
            } catch {
                throw ControlError.appRefused(error)
            }
            return .json(200, PhoneJSON.app(bundleID, bundle))
        }
    }

    /// The control API's own gauge, after the daemon's metrics: the long polls waiting now.
    private var waitsFamily: String {
        "# HELP fakeapns_control_waits Control API long polls (next, and lists with wait) waiting now.\n"
            + "# TYPE fakeapns_control_waits gauge\nfakeapns_control_waits \(waits.count)\n"
    }

    /// A page of a history, as `{"<name>":[…],"dropped":…,"last":…}`, made as the client reads
    /// it: a client that does not read holds one piece, not the page. The page ends at the
    /// newest item kept when it starts. With `page.wait`, a long poll that first waits (holding no
    /// thread) for a first item (503 when the API stops meanwhile or the client leaves; an empty
    /// page when the time is up).
    private func list<Element>(
        _ history: History<Element>, _ page: Page, named name: String,
        where predicate: @escaping @Sendable (Element) -> Bool, json: @escaping @Sendable (Element) -> JSONValue
    ) -> HTTPAnswer {
        let answer: @Sendable () -> HTTPResponse = {
            .json(200, streaming: Self.pages(of: history, page, named: name, where: predicate, json: json))
        }
        guard let wait = page.wait else { return .response(answer()) }
        let end = ContinuousClock.now + wait
        return .waiting { [waits] in
            do {
                _ = try await waits.run {
                    try await history.list(since: page.since, limit: 1, waitingUntil: end, where: predicate)
                }
                return answer()
            } catch {
                return Self.response(error)
            }
        }
    }

    /// How many items a piece of a streamed page holds.
    private static let itemsPerPiece = 16

    private static func pages<Element>(
        of history: History<Element>, _ page: Page, named name: String,
        where predicate: @escaping @Sendable (Element) -> Bool, json: @escaping @Sendable (Element) -> JSONValue
    ) -> HTTPBodyStream {
        let last = history.lastSequenceNumber
        let dropped = history.droppedCount
        let cursor = Locked((since: page.since, left: page.limit ?? Int.max, started: false, written: 0, ended: false))
        return HTTPBodyStream {
            cursor.withLock { cursor -> [UInt8]? in
                guard !cursor.ended else { return nil }
                var piece = cursor.started ? "" : "{\(JSONValue.quoted(name)):["
                let items = cursor.left > 0
                    ? history.list(since: cursor.since, limit: min(itemsPerPiece, cursor.left)) {
                        $0.sequenceNumber <= last && predicate($0)
                    } : []
                cursor.started = true
                for item in items {
                    if cursor.written > 0 { piece += "," }
                    piece += json(item).serialized()
                    cursor.written += 1
                }
                if let final = items.last {
                    cursor.since = final.sequenceNumber
                    cursor.left -= items.count
                }
                if items.count < itemsPerPiece || cursor.left == 0 {
                    piece += "],\"dropped\":\(dropped),\"last\":\(last)}\n"
                    cursor.ended = true
                }
                return Array(piece.utf8)
            }
        }
    }

    /// A `next`: waits (holding no thread) for an item and answers it, 408 when the time is up,
    /// 503 when the API stops meanwhile or the client leaves. An answer whose client has left
    /// by the time it goes out puts its item back at the front of the queue.
    private func next<Element: Sendable>(
        _ mailbox: Mailbox<Element>, timeout: Duration, awaiting awaited: String?,
        where predicate: @escaping @Sendable (Element) -> Bool, json: @escaping @Sendable (Element) -> JSONValue
    ) -> HTTPAnswer {
        .waiting { [waits] in
            do {
                let item = try await waits.run {
                    guard let awaited else { return try await mailbox.next(timeout: timeout) }
                    return try await mailbox.next(timeout: timeout, awaiting: awaited, where: predicate)
                }
                var response = HTTPResponse.json(200, json(item))
                response.undelivered = { mailbox.putBack([item]) }
                return response
            } catch {
                return Self.response(error)
            }
        }
    }

    private static func unknownChannel(_ id: String) -> ControlError {
        ControlError.notFound("there is no channel \(shown(id)) (channel ids are base64: in a path, write '/' as %2F and '+' as %2B)")
    }

    private static func notKept(_ noun: String, _ sequence: UInt64) -> String {
        "\(noun) \(sequence) is not kept: it has not arrived, was cleared, or was dropped by the retention limit"
    }
}
