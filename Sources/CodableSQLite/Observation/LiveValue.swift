#if canImport(Observation)
import Observation

extension SQLite {
    /// An observation's current value as an `@Observable` object: see `LiveValue` (CodableModels).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
    public typealias LiveValue = CodableModels.LiveValue
}

/// The earlier name of `SQLite.LiveValue`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
@available(*, deprecated, renamed: "SQLite.LiveValue")
public typealias SQLiteLiveValue = CodableModels.LiveValue

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
extension SQLite.Database {
    /// The rows of `sql` decoded as `T`, as an `@Observable` object (the model forms, `live(_:)`
    /// for a filter and `live(_:id:)`, are those of every `ObservableModelStore`).
    ///
    /// ```swift
    /// let open = db.live([Task].self, using: "SELECT * FROM tasks WHERE isCompleted = 0")
    /// ```
    @MainActor
    public func live<T: Decodable & Sendable>(_ type: [T].Type, using sql: SQL, arguments: SQLiteArguments = [:]) -> SQLite.LiveValue<[T]> {
        SQLite.LiveValue(initial: [], observation: observe(type, using: sql, arguments: arguments))
    }
}
#endif
