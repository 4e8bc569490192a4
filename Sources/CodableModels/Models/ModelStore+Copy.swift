import Foundation

extension ModelStore {
    /// Copies every value of each model from another database into this one: SQLite to
    /// PostgreSQL to move an app to a server, PostgreSQL to SQLite for a device or a backup,
    /// or between two files.
    ///
    /// ```swift
    /// let sqlite = try SQLite.Database(path: "app.sqlite")
    /// try await server.copy([Person.self, Note.self], from: sqlite)
    /// try await SQLite.Database(path: "backup.sqlite").copy([Person.self, Note.self], from: server)
    /// ```
    ///
    /// Each model is copied in one transaction, in batches of `batchSize` read in id order, and
    /// saved with its own id (an upsert), so running the copy again changes nothing. Values with
    /// relationships bring their related values and links (each value as `get` returns it); list
    /// a related type too to copy its values that nothing links. The source is read in batches,
    /// not one snapshot: copy a database that is quiet. The number of values written is checked
    /// against the source's count before and after reading; when it differs (rows added or
    /// removed meanwhile), that model's copy is rolled back and throws
    /// ``ModelError/Code/unexpectedResult``. An SQLite destination holds its writer for each
    /// model's copy. Returns how many values were copied per table.
    @discardableResult
    public func copy(_ types: [any (Model & Sendable).Type], from source: some ModelStore, batchSize: Int = 1_000) async throws -> [String: Int] {
        guard batchSize > 0 else {
            throw ModelError(.invalidArgument, types.first.map { $0 as Any.Type } ?? Self.self, "copy needs a batchSize of 1 or more, not \(batchSize)")
        }
        var copied: [String: Int] = [:]
        for type in types {
            copied[type.tableName] = try await copy(type, from: source, batchSize: batchSize)
        }
        return copied
    }

    private func copy<T: Model & Sendable, Source: ModelStore>(_ type: T.Type, from source: Source, batchSize: Int) async throws -> Int {
        let schema = try ModelReflection.of(T.self)
        // The stored `id` property's own key path (a generic `\T.id` goes through Identifiable and
        // names no column).
        guard let idKeyPath = schema.id.keyPath as? KeyPath<T, T.ID> else {
            throw ModelError(.unsupportedModel, T.self, "its `id` property cannot be read through Identifiable.id")
        }
        let expected = try await source.count(T.self)
        return try await inTransaction { tx in
            var written = 0
            var last: T.ID?
            while true {
                let after = last.map { Filter(idKeyPath, is: .greater(than: $0)) } ?? Filter<T>()
                let batch = try await source.get(with: after.sort(by: idKeyPath).limit(batchSize))
                guard let end = batch.last else { break }
                try await tx.save(batch)
                written += batch.count
                last = end.id
                if batch.count < batchSize { break }
            }
            let now = try await source.count(T.self)
            guard written == expected, now == expected else {
                throw ModelError(.unexpectedResult, T.self, """
                    copied \(written) values, but \(T.tableName) in the source held \(expected) before the copy and \(now) \
                    after; it changed during the copy, which was rolled back: copy again when it is quiet
                    """)
            }
            return written
        }
    }
}
