import FakeAPNsDaemon
import Foundation

exit(FakeAPNsCommand.run(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
