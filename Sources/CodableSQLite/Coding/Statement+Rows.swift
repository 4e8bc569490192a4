/// The one path between rows and values: the public coders, the model layer and the key-value
/// store all decode and bind rows through these.
extension Statement {
    /// Decodes every row of the statement (bound, not yet stepped), in order. Coding paths start
    /// with the row's index when `indexesRows` is set.
    func decodeRows<T: Decodable>(_ type: T.Type, options: DecodingOptions, indexesRows: Bool = true) throws -> [T] {
        var values: [T] = []
        guard try step() else { return values }
        let decoder = RowDecoder.forRows(of: self, options: options)
        defer { decoder.endCall() }
        if !StoredForm.isSpecial(T.self), let generated = decoder.generatedColumns(for: T.self) {
            return try decoder.decodeGeneratedRows(generated, as: T.self, indexesRows: indexesRows)
        }
        values.reserveCapacity(decoder.lastRowCount)
        var index = 0
        repeat {
            if indexesRows { decoder.rowIndex = index }
            values.append(try decoder.decodeRow(T.self))
            index += 1
        } while try step()
        decoder.lastRowCount = values.count
        return values
    }

    /// Decodes the single row of the statement: `nil` when there is none, a `typeMismatch` when
    /// there are several (`T` names what the caller asked for).
    func decodeSingleRow<T: Decodable>(_ type: T.Type, options: DecodingOptions) throws -> T? {
        do {
            let value: T = try decodeOnlyRow(T.self, options: options)
            return value
        } catch is NoRow {
            return nil
        }
    }

    /// Decodes the single row of the statement, or throws ``NoRow`` when there is none and a
    /// `typeMismatch` when there are several. For the single-row calls' closures: see ``NoRow``.
    func decodeOnlyRow<T: Decodable>(_ type: T.Type, options: DecodingOptions) throws -> T {
        let value = try decodeFirstRowOrThrow(T.self, options: options)
        if try step() {
            throw DecodingError.typeMismatch(T.self, DecodingError.Context(
                codingPath: [],
                debugDescription: "Expected to decode one \(T.self) row but found several rows instead; "
                    + "decode [\(T.self)].self for all of them, or add LIMIT 1. SQL: \(sql)"))
        }
        return value
    }

    /// Decodes the first row of the statement (bound, not yet stepped), or throws ``NoRow`` when
    /// there is none; further rows are not read.
    func decodeFirstRowOrThrow<T: Decodable>(_ type: T.Type, options: DecodingOptions) throws -> T {
        guard try step() else { throw NoRow() }
        let decoder = RowDecoder.forRows(of: self, options: options)
        defer { decoder.endCall() }
        return try decoder.decodeRow(T.self)
    }

    /// Decodes the current row's first column as one value (a single value as stored, anything
    /// else from the JSON the column holds), whatever the value's coding keys.
    func decodeColumnValue<T: Decodable>(_ type: T.Type, options: DecodingOptions) throws -> T {
        try RowDecoder(statement: self, options: options).decodeValue(T.self, column: 0, key: { nil })
    }

    /// Binds `value`'s properties to the parameters (the others become NULL); the caller steps.
    /// `elementIndex` starts the coding paths of errors, for arrays.
    func bindRow<T: Encodable>(_ value: T, options: EncodingOptions, elementIndex: Int? = nil) throws {
        let encoder = RowEncoder(statement: self, options: options)
        encoder.elementIndex = elementIndex
        try encoder.encodeRow(value)
    }
}

extension RawConnection {
    /// Runs `body` for each element, in one transaction (a savepoint inside an open one): all
    /// elements or none. An ``SQLite/Error`` gets the failing element's index.
    func forEachElement<Element, R>(_ elements: [Element], _ body: (Int, Element) throws -> R) throws -> [R] {
        try inTransaction {
            var results: [R] = []
            results.reserveCapacity(elements.count)
            // By index: `enumerated()` in this generic function, which is not specialized for the
            // caller's type, made the runtime build its tuple's metadata per element (1,650
            // instructions of an insert's 23,000).
            for index in elements.indices {
                do {
                    results.append(try body(index, elements[index]))
                } catch var error as SQLite.Error {
                    error.elementIndex = index
                    throw error
                }
            }
            return results
        }
    }
}
