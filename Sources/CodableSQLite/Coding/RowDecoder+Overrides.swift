import CodableModels

extension RowDecoder {
    /// The overridden value of `key` as a `T`, or `nil` when the override gives none.
    func overriddenValue<T>(_ type: T.Type, key: some CodingKey) throws -> T? {
        guard let decode = options.overrides?.decode else { return nil }
        let columns = RowColumns { [self] name in
            column(for: AnyCodingKey(stringValue: name)).map { statement.value(at: $0) }
        }
        guard let value = try decode(key.stringValue, columns) else {
            return nil
        }
        guard let typed = value as? T else {
            throw DecodingError.typeMismatch(T.self, DecodingError.Context(
                codingPath: basePath.keys(appending: AnyCodingKey(key)),
                debugDescription: "Expected \(T.self) for \(key.stringValue) but the related value is \(Swift.type(of: value)). SQL: \(statement.sql)"))
        }
        return typed
    }

    /// The overridden value of `key`, which `decode` (not `decodeIfPresent`) asks for: none is
    /// `valueNotFound`.
    func requiredOverriddenValue<T>(_ type: T.Type, key: some CodingKey) throws -> T {
        guard let value = try overriddenValue(type, key: key) else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: basePath.keys(appending: AnyCodingKey(key)),
                debugDescription: "No related \(type) for \(key.stringValue). SQL: \(statement.sql)"))
        }
        return value
    }

    /// Whether the layer above decodes `key` itself.
    @inline(__always)
    func isOverridden(_ key: some CodingKey) -> Bool {
        guard let overrides = options.overrides else { return false }
        return overrides.keys.contains(key.stringValue)
    }
}
