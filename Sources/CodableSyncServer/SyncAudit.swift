#if Postgres
import CodableSyncProtocol
import Foundation
import Logging

/// The sync server's audit log: what a security review asks after an incident. Every refused
/// authentication, share, revoke, token change and forbidden change is one line at `notice`
/// level on a swift-log `Logger` labelled `codablesync.audit`, with metadata an operator can
/// filter on (`event`, `account`, `table`, `id`, `reason`). Bootstrap swift-log as usual to send
/// it somewhere (`todo serve` prints it on standard error):
///
/// ```swift
/// LoggingSystem.bootstrap(StreamLogHandler.standardError)
/// let syncServer = try Postgres.SyncServer(database: postgres, models: [Note.self])
/// ```
///
/// Nothing secret is logged: never a token (only the first 8 characters of its hash), never a
/// row's value.
enum SyncAudit {
    static let logger = Logger(label: "codablesync.audit")

    /// One audited event: `event` is a stable name (`authenticationFailed`, `forbiddenChange`, …).
    static func record(_ event: String, _ message: String, _ metadata: [String: String] = [:]) {
        var fields: Logger.Metadata = ["event": .string(event)]
        for (key, value) in metadata { fields[key] = .string(value) }
        logger.notice("\(message)", metadata: fields)
    }
}
#endif
