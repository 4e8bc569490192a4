import Foundation

extension SQLite.Encoder {
    /// How coding keys become parameter names and JSON member names: see
    /// `CodingStrategy.KeyEncoding`.
    public typealias KeyEncodingStrategy = CodingStrategy.KeyEncoding
    /// How `Date` values are stored, in columns and inside JSON alike: see
    /// `CodingStrategy.DateEncoding`.
    public typealias DateEncodingStrategy = CodingStrategy.DateEncoding
}

extension CodingStrategy.KeyEncoding {
    /// Identifies the strategy in a statement's cached ``ParameterPlan``; `nil` for closures, which
    /// cannot be compared, so their plans are never shared.
    var planIdentifier: Int? {
        switch self {
        case .useDefaultKeys: 0
        case .convertToSnakeCase: 1
        case .custom: nil
        }
    }
}
