import CodableModels
import Foundation

/// What went wrong in a sync, with a matchable code: thrown by a device (``SQLite/Sync``) and by
/// the server (``Postgres/SyncServer``), and carried by the HTTP protocol
/// (an error answer's `error` field is the code's name, which `HTTPSyncTransport` turns back into
/// this error on the device).
///
/// ```swift
/// do { try await sync.sync() } catch SyncError.Code.unauthorized { askForANewToken() }
/// ```
///
/// Sendable: plain values.
public struct SyncError: Swift.Error, Sendable, CustomStringConvertible {
    /// A short stable name, such as `unsyncableModel`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The ``description``: what an HTTP error answer's `error` field carries.
        package let name: String
        package init(_ name: String) { self.name = name }
        /// A model that cannot be synced: ids the database assigns, or not UUID/String.
        public static let unsyncableModel = Code("unsyncableModel")
        /// The sync tables hold something the engine did not write.
        public static let corruptState = Code("corruptState")
        /// An argument out of range, such as a `batchSize` of 0.
        public static let invalidArgument = Code("invalidArgument")
        /// `run()` or `sync()` called while another is running.
        public static let alreadyRunning = Code("alreadyRunning")
        /// The lock file next to the database (`<path>.sync-lock`) cannot be opened or
        /// locked: permissions, a read-only volume.
        public static let lockFailed = Code("lockFailed")
        /// A ``SyncMergeable`` model's merge failed (the default one needs a keyed
        /// `Codable` form); the push is not applied.
        public static let mergeFailed = Code("mergeFailed")
        /// A device must pull everything again (offline past the server's tombstone
        /// horizon, or ahead of a restored server), and its request says it cannot (an app
        /// version from before start-overs).
        public static let startOverNeeded = Code("startOverNeeded")
        /// A push carries a change the server refuses for good, and its request says the
        /// device cannot keep refused changes (an app version from before refusals): the
        /// push is refused whole, as before.
        public static let changeRefused = Code("changeRefused")
        /// A request without a valid account: a bearer token unknown, revoked or expired,
        /// or a device id or push token of another account's.
        public static let unauthorized = Code("unauthorized")
        /// The account may not do this (share a row it does not own).
        public static let forbidden = Code("forbidden")
        /// The server's answer broke the protocol (a hostile or broken server): a number
        /// or size out of bounds, a row the request did not name, an answer too large, a
        /// redirect to another origin. Nothing of it was applied; the device's database
        /// and its changes not pushed yet are as they were, and the next round asks again.
        ///
        /// ```swift
        /// do { try await sync.sync() } catch SyncError.Code.invalidAnswer { print("a bad server") }
        /// ```
        public static let invalidAnswer = Code("invalidAnswer")
        /// A short stable name, such as `unauthorized`.
        public var description: String { name }
        /// Whether `error` is a ``SyncError`` with this code.
        public static func ~= (code: Code, error: any Swift.Error) -> Bool { (error as? SyncError)?.code == code }
    }

    public let code: Code
    public let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "sync: \(message)" }
}

extension SyncError: EngineError {
    /// `ModelError.Code.invalidArgument` for ``SyncError/Code/invalidArgument``, otherwise `nil`:
    /// one `catch ModelError.Code.invalidArgument` matches an argument refused anywhere.
    package var modelErrorCode: ModelError.Code? {
        code == .invalidArgument ? .invalidArgument : nil
    }
}
