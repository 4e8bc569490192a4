import Foundation

/// A pushed change the server refused for good: applying it again as it is would fail again (a
/// `CHECK` constraint the server's owner added, a value too large for its column, a unique value
/// another row took first, a value the server's model cannot decode). The push's other changes
/// are applied; the device keeps the refused one, with its reason, until the app resolves it
/// (see `SQLite.Sync.refusedChanges()`).
public struct SyncRefusal: Codable, Sendable, Hashable {
    /// Why a change was refused: a short stable name, matchable, with room for more.
    ///
    /// ```swift
    /// if refusal.reason == .uniqueClash { … }
    /// ```
    public struct Reason: Codable, Sendable, Hashable, CustomStringConvertible {
        /// The ``description``, as the protocol's JSON carries it.
        package let name: String
        package init(_ name: String) { self.name = name }
        public init(from decoder: any Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(name)
        }
        /// A short stable name, such as `uniqueClash`.
        public var description: String { name }

        /// A `CHECK` constraint refused the value (SQLSTATE 23514).
        public static let checkViolation = Reason("checkViolation")
        /// A column the server requires is missing or null (23502).
        public static let notNull = Reason("notNull")
        /// Another row holds the value of a unique column (23505): it reached the server first.
        public static let uniqueClash = Reason("uniqueClash")
        /// A row it refers to does not exist on the server, and could not be created (23503).
        public static let foreignKey = Reason("foreignKey")
        /// A value too long or too large for its column, or for the server (22001, 22003, 54000).
        public static let tooLarge = Reason("tooLarge")
        /// A value the server's column cannot hold otherwise (another SQLSTATE of class 22).
        public static let invalidValue = Reason("invalidValue")
        /// A rule of the server's own (a trigger's `RAISE EXCEPTION`, SQLSTATE P0001) refused it.
        public static let serverRule = Reason("serverRule")
        /// The server's model cannot decode the pushed value (an app version the server does not
        /// know yet), or the value names another row than the change.
        public static let undecodable = Reason("undecodable")
        /// A ``SyncMergeable`` model's merge with the server's value failed.
        public static let mergeFailed = Reason("mergeFailed")
        /// The value cannot be without a row another writer deleted (a non-optional to-one): the
        /// delete wins, and the value is not saved.
        public static let relatedDeleted = Reason("relatedDeleted")
        /// The row is outside the pushing account's write scope (another account's, or shared
        /// with it read-only), or the value links a row the account cannot read. Nothing of the
        /// server's row is in the refusal.
        public static let forbidden = Reason("forbidden")
        /// Another integrity rule of the server's (SQLSTATE class 23).
        public static let constraint = Reason("constraint")
    }

    /// The model's table.
    package var table: String
    /// The row's id, as text.
    package var id: String
    package var reason: Reason
    /// What the server said, naming the row and, where it can, the column or constraint.
    package var message: String
    /// The row as the server keeps it now (its model's JSON), `nil` when the server has no such
    /// row: what the device returns to if the app drops its change.
    package var serverValue: String?

    package init(table: String, id: String, reason: Reason, message: String, serverValue: String? = nil) {
        self.table = table
        self.id = id
        self.reason = reason
        self.message = message
        self.serverValue = serverValue
    }
}

/// A link a pushed value held to a row another writer had deleted: the server dropped the link
/// rather than create the row again (a delete wins over a stale copy of a graph).
public struct SyncDroppedLink: Codable, Sendable, Hashable {
    /// The pushed value's table and id.
    public var table: String
    public var id: String
    /// The deleted row it linked.
    public var relatedTable: String
    public var relatedID: String

    package init(table: String, id: String, relatedTable: String, relatedID: String) {
        self.table = table
        self.id = id
        self.relatedTable = relatedTable
        self.relatedID = relatedID
    }
}
