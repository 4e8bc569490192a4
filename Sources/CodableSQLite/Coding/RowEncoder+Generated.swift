import CodableModels
import Foundation

/// The parameters of a ``RowEncodable`` type's properties in one statement, resolved once (key
/// strategy and all) and kept on the parameter plan they were resolved with.
final class GeneratedParameters {
    let type: any RowEncodable.Type
    let typeID: ObjectIdentifier
    let keys: [any CodingKey]
    /// The parameter of each property; `nil` when the SQL has none.
    let targets: [ParameterTarget?]

    init(type: any RowEncodable.Type, typeID: ObjectIdentifier, encoder: RowEncoder) {
        self.type = type
        self.typeID = typeID
        keys = type.rowCodingKeys
        targets = keys.map { encoder.parameterTarget(for: $0) }
    }
}

extension RowEncoder {
    /// The resolved parameters when `T` has generated row encoding, `nil` for plain Codable; the
    /// parameter plan keeps them, and a type's plainness, for the statement's next row and call.
    func generatedParameters<T>(for type: T.Type) -> GeneratedParameters? {
        let typeID = ObjectIdentifier(T.self)
        if let generated = plan.generated, generated.typeID == typeID { return generated }
        if plan.plainEncodedType == typeID { return nil }
        guard let rowType = T.self as? any RowEncodable.Type else {
            plan.plainEncodedType = typeID
            return nil
        }
        let parameters = GeneratedParameters(type: rowType, typeID: typeID, encoder: self)
        plan.generated = parameters
        return parameters
    }

    /// Binds `value`'s properties through its generated code.
    func encodeGenerated<T>(_ value: T, _ parameters: GeneratedParameters) throws {
        func encode<G: RowEncodable>(_ generated: G.Type) throws {
            var writer = SQLiteRowWriter(encoder: self, parameters: parameters)
            try identityCast(value, to: G.self).encode(row: &writer)
        }
        try encode(parameters.type)
    }
}

/// The ``RowWriter`` generated code writes a row of SQLite through: each call is the
/// `RowKeyedEncodingContainer` call of the same name, with the parameter already known.
struct SQLiteRowWriter: RowWriter {
    let encoder: RowEncoder
    let parameters: GeneratedParameters

    /// The parameter of the property at `index`; `nil` to skip it (unused properties ignored).
    /// A property the SQL has no parameter for is the keyed container's error.
    @inline(__always)
    private func target(_ index: Int, _ value: @autoclosure () -> Any) throws -> ParameterTarget? {
        if let target = parameters.targets[index] { return target }
        return try encoder.target(for: parameters.keys[index], value: value())
    }

    private func path(_ index: Int) -> [any CodingKey] { encoder.basePath.keys(appending: parameters.keys[index]) }

    mutating func encode(_ value: Bool, at index: Int) throws {
        guard let target = try target(index, value) else { return }
        try encoder.bind(Int64(value ? 1 : 0), to: target)
    }

    mutating func encode(_ value: String, at index: Int) throws {
        guard let target = try target(index, value) else { return }
        try encoder.bind(value, to: target)
    }

    mutating func encode(_ value: Double, at index: Int) throws { try real(value, index) }
    mutating func encode(_ value: Float, at index: Int) throws { try real(value, index) }
    mutating func encode(_ value: Int, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: Int8, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: Int16, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: Int32, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: Int64, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: UInt, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: UInt8, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: UInt16, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: UInt32, at index: Int) throws { try integer(value, index) }
    mutating func encode(_ value: UInt64, at index: Int) throws { try integer(value, index) }

    @inline(__always)
    private func real<F: BinaryFloatingPoint>(_ value: F, _ index: Int) throws {
        guard let target = try target(index, value) else { return }
        try encoder.bind(try StoredForm.real(value, path: path(index)), to: target)
    }

    @inline(__always)
    private func integer<I: BinaryInteger>(_ value: I, _ index: Int) throws {
        guard let target = try target(index, value) else { return }
        try encoder.bind(try StoredForm.integer(value, path: path(index)), to: target)
    }

    mutating func encode<T: Encodable>(_ value: T, at index: Int) throws {
        try encoder.encodeProperty(value, forKey: parameters.keys[index]) { value in try target(index, value) }
    }
}
