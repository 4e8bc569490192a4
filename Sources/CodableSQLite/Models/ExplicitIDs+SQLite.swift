import CodableModels

extension ExplicitIDs {
    /// The id to insert an id-less `M` with, or `nil` to let SQLite choose as usual.
    mutating func idToAssign<M: Model>(_ type: M.Type, in table: ModelTable, on connection: RawConnection) throws -> Int64? {
        guard let explicit = kept(M.self) else { return nil }
        let idColumn = SQLName.quoted(table.schema.id.name)
        let name = SQLName.quoted(table.schema.table)
        let stored = try connection.withStatement("SELECT max(\(idColumn)) FROM \(name)") { statement -> Int64? in
            guard try statement.step(), case .integer(let largest) = statement.value(at: 0) else { return nil }
            return largest
        }
        if (stored ?? 0) < .max, (stored ?? 0) + 1 > explicit.largest {
            // SQLite's own choice, one more than the largest stored id (1 in an empty table), is
            // above every explicit id, and stays so for the rest of the call.
            stopKeeping(M.self)
            return nil
        }
        // The next id above the largest stored one that no value of the call claims.
        var candidate = stored ?? 0
        while candidate < .max {
            candidate += 1
            if !explicit.ids.contains(candidate) { return candidate }
        }
        // The largest id is taken: like SQLite, an unused one at random.
        for _ in 0..<100 {
            let candidate = Int64.random(in: 1 ... .max)
            guard !explicit.ids.contains(candidate) else { continue }
            let isUsed = try connection.withStatement("SELECT 1 FROM \(name) WHERE \(idColumn) = ?") { statement in
                try statement.bind([.integer(candidate)])
                return try statement.step()
            }
            if !isUsed { return candidate }
        }
        throw ModelError(.unexpectedResult, M.self, "found no unused id for a value saved without one; give it an id")
    }
}

extension Statement {
    /// Replaces the bound id of a row `bindRow` bound with `id`, when there is one.
    func bindAssignedID(_ id: Int64?, table: ModelTable) throws {
        guard let id, let index = parameters.indexes[table.schema.id.name] else { return }
        try bind(.integer(id), at: index)
    }
}
