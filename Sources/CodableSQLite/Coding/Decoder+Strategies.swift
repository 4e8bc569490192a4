import Foundation

extension SQLite.Decoder {
    /// How column names and JSON member names become coding keys: see
    /// `CodingStrategy.KeyDecoding`.
    public typealias KeyDecodingStrategy = CodingStrategy.KeyDecoding
    /// How `Date` values are read, from columns and inside JSON alike: see
    /// `CodingStrategy.DateDecoding`.
    public typealias DateDecodingStrategy = CodingStrategy.DateDecoding
}

extension CodingStrategy.KeyDecoding {
    /// Identifies the strategy in a statement's cached ``ColumnPlan``; `nil` for closures, which
    /// cannot be compared, so their plans are never shared.
    var planIdentifier: Int? {
        switch self {
        case .useDefaultKeys: 0
        case .convertFromSnakeCase: 1
        case .custom: nil
        }
    }
}
