import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `fake-apns [serve]`: start the server and its control API, log events, stop cleanly on
/// SIGINT or SIGTERM: the listeners first (their connections are told), then the control
/// API's waiting requests (answered 503), then the log, written out to its last line.
enum ServeCommand {
    static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        let options: Options
        do {
            options = try Options.parse(arguments, environment: environment)
        } catch {
            return FakeAPNsCommand.usageError("\(error)")
        }
        if options.showHelp {
            print(Options.help)
            return 0
        }
        if options.showVersion {
            print("fake-apns \(Options.version)")
            return 0
        }

        // Block the stop signals in every thread; this thread takes them with sigwait.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        DescriptorLimit.raiseToHardLimit()
        // From here on a failure is one to start (exit 1), not of usage: the command line was
        // well formed, and what it names is not there or not what it should be.
        let devices: DevicesFile.Contents
        do {
            devices = try options.devicesFile.map { try DevicesFile.read($0) } ?? DevicesFile.Contents()
        } catch {
            return startFailure(error)
        }
        let standardOutput = OutputWriter()
        let logOutput: OutputWriter
        do {
            logOutput = try options.logFile.map { try OutputWriter(appendingTo: $0) } ?? standardOutput
        } catch {
            return startFailure(error)
        }
        let log: EventLog
        do {
            log = try EventLog(output: logOutput, format: options.log ?? (logOutput.isTerminal ? .text : .json))
        } catch {
            FakeAPNsCommand.printError("\(error)")
            return 1
        }
        let metrics = Metrics()

        let daemon: Daemon
        do {
            daemon = try Daemon(
                options: options, devices: devices.devices, channels: devices.channels, apps: devices.apps,
                onEvent: { event in
                    metrics.record(event)
                    log.record(event)
                },
                backPressure: { log.waitForRoom() })
            log.stamp(by: daemon.server.clock)
            try daemon.start(metrics: metrics)
        } catch {
            close(log)
            return startFailure(error)
        }
        if !Options.isLoopback(options.webHost) {
            FakeAPNsCommand.printError(
                "warning: the control API listens on \(options.webHost):\(daemon.webPort) with no authentication; anyone who reaches it controls this fake APNs")
        }
        if daemon.webConnectionLimit < options.webMaxConnections {
            FakeAPNsCommand.printError(
                "warning: the control API serves \(daemon.webConnectionLimit) connections at once, not \(options.webMaxConnections): RLIMIT_NOFILE leaves descriptors for no more (raise it with ulimit -n)")
        }
        standardOutput.writeLine(daemon.startLine.serialized())

        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        // A stop stuck somewhere must not keep the clients, or whoever waits for the process,
        // waiting for ever; without a thread to watch it, it goes on unwatched.
        let watchdog = try? StopWatchdog()
        log.prepareToClose()
        daemon.stop { watchdog?.begin($0) }
        watchdog?.finished()
        close(log)
        return 0
    }

    private static func startFailure(_ error: any Error) -> Int32 {
        FakeAPNsCommand.printError("\(error)")
        return 1
    }

    private static func close(_ log: EventLog) {
        if let loss = log.close() { FakeAPNsCommand.printError("\(loss)") }
    }
}
